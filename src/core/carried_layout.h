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

  // Keeps L if it can be carried (kOk, TCP/UDP, not a fragment); returns whether it did.
  bool keep(const PacketLayout& L) {
    if (L.status != ParseStatus::kOk || L.ip_version == 0 || L.fragment || !L.has_ports())
      return false;
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

}  // namespace nfpark
