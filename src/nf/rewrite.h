// Header rewrites with incremental checksum updates (RFC 1624), shared by nat and lb.
//
// Every helper patches the checksums that cover the changed field and never reads bytes past
// `layout.payload_off`, so it is correct on header-only packets: the merged packet's checksums
// equal a full recomputation. Callers guarantee an IPv4 packet with layout.ok(); port helpers
// also need layout.l4_off != 0.
//   IPv4 address: IPv4 header checksum + TCP/UDP checksum (pseudo-header, RFC 793 / RFC 768).
//                 ICMPv4 has no pseudo-header, so its checksum is left alone.
//   TCP/UDP port: L4 checksum.  ICMP echo identifier: ICMP checksum.
// UDP checksum 0 ("none", RFC 768) stays 0; an updated UDP checksum of 0 is stored as 0xFFFF.
#pragma once
#include <cstdint>

#include "core/bytes.h"
#include "core/checksum.h"
#include "core/packet_view.h"

namespace nfpark::nf {

// Offset of the L4 checksum field from the L4 header, or 0 when the packet has none we update.
inline uint32_t l4_csum_offset(const PacketLayout& L) {
  if (L.l4_off == 0) return 0;
  switch (L.l4_proto) {
    case proto::kTcp:
      return 16;
    case proto::kUdp:
      return 6;
    case proto::kIcmp:
      return 2;
    default:
      return 0;
  }
}

inline void patch_l4_csum16(PacketView& p, uint16_t old_v, uint16_t new_v) {
  uint32_t off = l4_csum_offset(p.layout);
  if (off == 0) return;
  uint8_t* c = p.data + p.layout.l4_off + off;
  uint16_t hc = load_be16(c);
  if (p.layout.l4_proto == proto::kUdp && hc == 0) return;  // no checksum
  hc = csum_update16(hc, old_v, new_v);
  if (p.layout.l4_proto == proto::kUdp && hc == 0) hc = 0xFFFF;
  store_be16(c, hc);
}

// field_off: 12 (source) or 16 (destination) within the IPv4 header.
inline void set_ipv4_addr(PacketView& p, uint32_t field_off, uint32_t addr) {
  uint8_t* ip = p.data + p.layout.l3_off;
  uint32_t old = load_be32(ip + field_off);
  if (old == addr) return;
  store_be32(ip + field_off, addr);
  store_be16(ip + 10, csum_update32(load_be16(ip + 10), old, addr));
  if (p.layout.l4_proto != proto::kIcmp) {  // TCP/UDP pseudo-header covers the addresses
    patch_l4_csum16(p, uint16_t(old >> 16), uint16_t(addr >> 16));
    patch_l4_csum16(p, uint16_t(old), uint16_t(addr));
  }
}
inline void set_ipv4_src(PacketView& p, uint32_t a) {
  set_ipv4_addr(p, 12, a);
}
inline void set_ipv4_dst(PacketView& p, uint32_t a) {
  set_ipv4_addr(p, 16, a);
}

// field_off: 0 (source port) or 2 (destination port) for TCP/UDP; 4 for the ICMP echo id.
inline void set_l4_u16(PacketView& p, uint32_t field_off, uint16_t v) {
  uint8_t* f = p.data + p.layout.l4_off + field_off;
  uint16_t old = load_be16(f);
  if (old == v) return;
  store_be16(f, v);
  patch_l4_csum16(p, old, v);
}

}  // namespace nfpark::nf
