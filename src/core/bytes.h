// Byte-order helpers for reading and writing packet fields at any alignment.
// Packet bytes are big-endian (network order); these never assume alignment.
#pragma once
#include <cstdint>
#include <cstring>

#include "core/hot_path.h"

namespace nfpark {

inline uint16_t load_be16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }
inline uint32_t load_be32(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}
inline uint64_t load_be64(const uint8_t* p) {
  return uint64_t(load_be32(p)) << 32 | load_be32(p + 4);
}
inline void store_be16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v >> 8);
  p[1] = uint8_t(v);
}
inline void store_be32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v >> 24);
  p[1] = uint8_t(v >> 16);
  p[2] = uint8_t(v >> 8);
  p[3] = uint8_t(v);
}
inline void store_be64(uint8_t* p, uint64_t v) {
  store_be32(p, uint32_t(v >> 32));
  store_be32(p + 4, uint32_t(v));
}

// memmove for short, possibly overlapping runs such as a packet's headers (<= 128 bytes inline:
// every byte is loaded before any is stored; longer runs call memmove).
NFPARK_HOT_INLINE void move_bytes(uint8_t* dst, const uint8_t* src, size_t n) {
  struct Chunk {
    uint8_t b[16];
  };
  auto load = [](const uint8_t* p) {
    Chunk c;
    std::memcpy(&c, p, 16);
    return c;
  };
  auto store = [](uint8_t* p, const Chunk& c) { std::memcpy(p, &c, 16); };
  if (n >= 16 && n <= 32) {
    const Chunk a = load(src), b = load(src + n - 16);
    store(dst, a);
    store(dst + n - 16, b);
  } else if (n > 32 && n <= 64) {
    const Chunk a = load(src), b = load(src + 16), c = load(src + n - 32), d = load(src + n - 16);
    store(dst, a);
    store(dst + 16, b);
    store(dst + n - 32, c);
    store(dst + n - 16, d);
  } else if (n > 64 && n <= 128) {
    const Chunk a = load(src), b = load(src + 16), c = load(src + 32), d = load(src + 48);
    const Chunk e = load(src + n - 64), f = load(src + n - 48), g = load(src + n - 32),
                h = load(src + n - 16);
    store(dst, a);
    store(dst + 16, b);
    store(dst + 32, c);
    store(dst + 48, d);
    store(dst + n - 64, e);
    store(dst + n - 48, f);
    store(dst + n - 32, g);
    store(dst + n - 16, h);
  } else {
    std::memmove(dst, src, n);
  }
}

}  // namespace nfpark
