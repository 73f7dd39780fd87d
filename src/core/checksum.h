// Internet checksum (RFC 1071) and its incremental update (RFC 1624).
//
// NFs that rewrite addresses or ports must never recompute L4 checksums from the bytes they hold:
// on a header-only packet the payload is elsewhere. They patch the checksum with the difference
// of the old and new field values instead (RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m')), which gives
// the same result as a full recomputation over the whole merged packet.
#pragma once
#include <cstdint>

#include "core/parse.h"

namespace nfpark {

// Ones'-complement sum of `len` bytes, folded to 16 bits but not complemented. `seed` carries a
// previous partial sum. Odd lengths are padded with a zero byte, as RFC 1071 requires.
uint32_t csum_partial(const uint8_t* data, uint32_t len, uint32_t seed = 0);
inline uint16_t csum_fold(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return uint16_t(sum);
}
inline uint16_t csum_finish(uint32_t sum) { return uint16_t(~csum_fold(sum)); }

// RFC 1624 incremental update of checksum `hc` (as stored, network-order value read as host int)
// when a 16-bit field changes from `old_v` to `new_v`.
inline uint16_t csum_update16(uint16_t hc, uint16_t old_v, uint16_t new_v) {
  uint32_t s = uint32_t(uint16_t(~hc)) + uint16_t(~old_v) + new_v;
  return uint16_t(~csum_fold(s));
}
inline uint16_t csum_update32(uint16_t hc, uint32_t old_v, uint32_t new_v) {
  hc = csum_update16(hc, uint16_t(old_v >> 16), uint16_t(new_v >> 16));
  return csum_update16(hc, uint16_t(old_v), uint16_t(new_v));
}
// Update for a changed byte range (same length, 16-bit aligned relative to the checksummed area).
uint16_t csum_update_bytes(uint16_t hc, const uint8_t* old_b, const uint8_t* new_b, uint32_t len);

// Full computations over a whole packet (for generators and for tests that verify NF updates).
uint16_t ipv4_header_checksum(const uint8_t* ip, uint32_t ihl_bytes);
// L4 checksum (TCP, UDP, ICMPv6 with pseudo-header; ICMPv4 without) over [l4_off, ip_end).
// Returns the value to store. Requires the whole L4 segment in the buffer.
uint16_t l4_checksum(const uint8_t* pkt, const PacketLayout& L);
// Recomputes and stores IPv4 header and L4 checksums in place (UDP zero checksum becomes 0xFFFF).
void fill_checksums(uint8_t* pkt, const PacketLayout& L);
// True when every checksum of a whole packet verifies (UDP over IPv4 with checksum 0 passes).
bool verify_checksums(const uint8_t* pkt, const PacketLayout& L);

}  // namespace nfpark
