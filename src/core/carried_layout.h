// CarriedLayout: a parse a packet record carries with it (16 bytes), so the next stage that
// reads the packet does not parse its headers again ("parse once, carry").
//
// It holds the parse of an unfragmented IPv4/IPv6 TCP or UDP packet with status kOk (the packets
// parking splits; anything else is not carried and gets parsed as before). The bytes captured are
// not kept: they are the holder's head length when the layout is taken back, so a layout stays
// exact when a header packet keeps the first payload_off bytes of its original (for such a
// packet, parse_packet's result depends on the bytes past payload_off only through `captured`).
// An engine keeps one beside each handle (park/buffer_ops.h: take_layout / carry_layout); the
// rule that keeps it exact is the engine's: any change to a handle's bytes forgets it.
// PackedLayout is the same in 4 bytes, for an engine with little room beside its bytes (the
// dataplane's mbufs: a dynamic field; dp/mbuf_ops.h).
#pragma once
#include <cstdint>

#include "core/parse.h"

namespace nfpark {

struct CarriedLayout {
  uint8_t vlans = 0;
  uint8_t ip_version = 0;  // 0: nothing carried
  uint8_t l4_proto = 0;
  uint8_t pad_ = 0;
  uint16_t l3_off = 0, l4_off = 0, payload_off = 0, pad2_ = 0;
  uint32_t ip_end = 0;

  // The parses a packet can carry: kOk, IPv4/IPv6, TCP/UDP, not a fragment.
  static bool carriable(const PacketLayout& L) {
    return L.status == ParseStatus::kOk && L.ip_version != 0 && !L.fragment && L.has_ports();
  }
  // Keeps L if it can be carried; returns whether it did.
  bool keep(const PacketLayout& L) {
    if (!carriable(L)) return false;
    vlans = L.vlans;
    ip_version = L.ip_version;
    l4_proto = L.l4_proto;
    l3_off = L.l3_off;
    l4_off = L.l4_off;
    payload_off = L.payload_off;
    ip_end = L.ip_end;
    return true;
  }
  // The layout parse_packet gives the same header bytes with `captured` bytes present
  // (captured >= payload_off).
  void restore(uint32_t captured, PacketLayout& L) const {
    L.status = ParseStatus::kOk;
    L.vlans = vlans;
    L.ip_version = ip_version;
    L.l4_proto = l4_proto;
    L.fragment = false;
    L.first_fragment = true;
    L.ethertype = ip_version == 4 ? proto::kEthIpv4 : proto::kEthIpv6;
    L.l3_off = l3_off;
    L.l4_off = l4_off;
    L.payload_off = payload_off;
    L.ip_end = ip_end;
    L.captured = captured;
  }
};
static_assert(sizeof(CarriedLayout) == 16);

// CarriedLayout in 4 bytes (same keep / restore; an mbuf's dynamic fields have little room
// left: DPDK's pcap PMD needs the last 8): ip_end (17 bits: at most 22 + 40 + 65535) | vlans
// << 17 (2) | IPv6 << 19 | TCP << 20 | the L4 header's length / 4 << 21 (4: TCP 20-60, UDP 8)
// | the L3 headers' length / 4 << 25 (7: up to 508 bytes). l3_off is 14 + 4 * vlans (the
// parser's Ethernet). A parse that does not fit (longer IPv6 extension headers) is not kept.
struct PackedLayout {
  uint32_t word = 0;

  bool keep(const PacketLayout& L) {
    const uint32_t l3 = uint32_t(L.l4_off) - L.l3_off, l4 = uint32_t(L.payload_off) - L.l4_off;
    if (!CarriedLayout::carriable(L) || L.ip_end >> 17 || L.vlans > 2 ||
        L.l3_off != proto::kEthHeader + proto::kVlanTag * L.vlans || l3 % 4 || l3 >> 9 || l4 % 4 ||
        l4 >> 6)
      return false;
    word = L.ip_end | uint32_t(L.vlans) << 17 | uint32_t(L.ip_version == 6) << 19 |
           uint32_t(L.l4_proto == proto::kTcp) << 20 | (l4 / 4) << 21 | (l3 / 4) << 25;
    return true;
  }
  // As CarriedLayout::restore (captured >= payload_off).
  void restore(uint32_t captured, PacketLayout& L) const {
    const bool v6 = (word >> 19) & 1;
    L.status = ParseStatus::kOk;
    L.vlans = uint8_t((word >> 17) & 3);
    L.ip_version = v6 ? 6 : 4;
    L.l4_proto = (word >> 20) & 1 ? proto::kTcp : proto::kUdp;
    L.fragment = false;
    L.first_fragment = true;
    L.ethertype = v6 ? proto::kEthIpv6 : proto::kEthIpv4;
    L.l3_off = uint16_t(proto::kEthHeader + proto::kVlanTag * L.vlans);
    L.l4_off = uint16_t(L.l3_off + 4 * ((word >> 25) & 0x7F));
    L.payload_off = uint16_t(L.l4_off + 4 * ((word >> 21) & 0xF));
    L.ip_end = word & 0x1FFFF;
    L.captured = captured;
  }
};
static_assert(sizeof(PackedLayout) == 4);

}  // namespace nfpark
