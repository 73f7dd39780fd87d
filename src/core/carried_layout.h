// CarriedLayout: a parse a packet record carries with it (16 bytes), so the next stage that
// reads the packet does not parse its headers again ("parse once, carry").
//
// It holds the parse of an unfragmented IPv4/IPv6 TCP or UDP packet with status kOk whose IP
// length ends within 64 KiB (the packets parking splits; anything else is not carried and gets
// parsed as before), as PacketLayout's own bytes: kept and restored as one 16-byte copy. The bytes
// captured are not kept: they are the holder's head length when the layout is taken back, so a
// layout stays exact when a header packet keeps the first payload_off bytes of its original (for
// such a packet, parse_packet's result depends on the bytes past payload_off only through
// `captured`). An engine keeps one beside each handle (park/buffer_ops.h: take_layout /
// carry_layout); the rule that keeps it exact is the engine's: any change to a handle's bytes
// forgets it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/parse.h"

namespace nfpark {

struct CarriedLayout {
  // PacketLayout's first 14 bytes, byte for byte (status kOk, not a fragment, first fragment,
  // the IP EtherType: what restore() must write for a carried parse anyway), then ip_end in 16
  // bits in PacketLayout's padding: keep() and restore() are one 16-byte copy and a field each.
  ParseStatus status_ = ParseStatus::kTruncated;
  uint8_t vlans = 0;
  uint8_t ip_version = 0;  // 0: nothing carried
  uint8_t l4_proto = 0;
  bool fragment_ = false;
  bool first_fragment_ = true;
  uint16_t ethertype_ = 0;
  uint16_t l3_off = 0, l4_off = 0, payload_off = 0;
  uint16_t ip_end = 0;  // a packet whose IP length ends past 65535 is not carried

  // Keeps L if it can be carried (kOk, TCP/UDP, not a fragment, ip_end < 2^16); returns whether
  // it did (if not, *this is unchanged).
  bool keep(const PacketLayout& L) {
    if (L.status != ParseStatus::kOk || L.ip_version == 0 || L.fragment || !L.has_ports() ||
        L.ip_end > UINT16_MAX)
      return false;
    std::memcpy(static_cast<void*>(this), &L, kImage);
    ip_end = uint16_t(L.ip_end);
    return true;
  }
  // keep() for an L known to be kOk, IP, not a fragment, TCP or UDP (reframe::classify()'s fast
  // path said so): only the IP end is checked.
  bool keep_ports(const PacketLayout& L) {
    if (L.ip_end > UINT16_MAX) return false;
    std::memcpy(static_cast<void*>(this), &L, kImage);
    ip_end = uint16_t(L.ip_end);
    return true;
  }
  // The layout parse_packet gives the same header bytes with `captured` bytes present
  // (captured >= payload_off).
  void restore(uint32_t captured, PacketLayout& L) const {
    std::memcpy(static_cast<void*>(&L), this, 16);  // bytes 14-15 land in L's padding
    L.ip_end = ip_end;
    L.captured = captured;
  }

 private:
  static constexpr size_t kImage = 14;  // PacketLayout's bytes copied (status .. payload_off)
};
static_assert(sizeof(CarriedLayout) == 16);
static_assert(std::is_trivially_copyable_v<PacketLayout>);
static_assert(offsetof(PacketLayout, status) == offsetof(CarriedLayout, status_) &&
                  offsetof(PacketLayout, vlans) == offsetof(CarriedLayout, vlans) &&
                  offsetof(PacketLayout, ip_version) == offsetof(CarriedLayout, ip_version) &&
                  offsetof(PacketLayout, l4_proto) == offsetof(CarriedLayout, l4_proto) &&
                  offsetof(PacketLayout, fragment) == offsetof(CarriedLayout, fragment_) &&
                  offsetof(PacketLayout, first_fragment) ==
                      offsetof(CarriedLayout, first_fragment_) &&
                  offsetof(PacketLayout, ethertype) == offsetof(CarriedLayout, ethertype_) &&
                  offsetof(PacketLayout, l3_off) == offsetof(CarriedLayout, l3_off) &&
                  offsetof(PacketLayout, l4_off) == offsetof(CarriedLayout, l4_off) &&
                  offsetof(PacketLayout, payload_off) == offsetof(CarriedLayout, payload_off) &&
                  offsetof(PacketLayout, ip_end) >= 16,
              "CarriedLayout is PacketLayout's first 14 bytes");

}  // namespace nfpark
