// Test helpers: frames the builder cannot make (IPv6 fragment header) and exact-size copies, so
// AddressSanitizer flags any read past the end of a parsed buffer.
#pragma once
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "core/bytes.h"
#include "core/packet_builder.h"
#include "core/parse.h"

namespace nfpark::testing {

// Heap buffer of exactly `len` bytes holding the first `len` bytes of `f`.
struct ExactBuf {
  std::unique_ptr<uint8_t[]> p;
  uint32_t len;
  ExactBuf(const std::vector<uint8_t>& f, uint32_t n) : p(new uint8_t[n ? n : 1]), len(n) {
    if (n) std::memcpy(p.get(), f.data(), n);
  }
  PacketLayout parse() const { return parse_packet(len ? p.get() : nullptr, len); }
};

// Inserts an IPv6 Fragment header after the fixed IPv6 header of `f` (built without extension
// headers, no VLAN). `offset_units` is the fragment offset in 8-byte units.
inline std::vector<uint8_t> with_ipv6_fragment(std::vector<uint8_t> f, uint16_t offset_units,
                                               bool more) {
  const uint32_t l3 = 14;
  uint8_t next = f[l3 + 6];
  uint8_t frag[8] = {next, 0, 0, 0, 0, 0, 0x12, 0x34};
  store_be16(frag + 2, uint16_t(offset_units << 3 | (more ? 1 : 0)));
  f.insert(f.begin() + l3 + 40, frag, frag + 8);
  f[l3 + 6] = 44;
  store_be16(f.data() + l3 + 4, uint16_t(load_be16(f.data() + l3 + 4) + 8));
  return f;
}

}  // namespace nfpark::testing
