// SipHash (Aumasson & Bernstein, 2012): the keyed PRF behind every MAC and keyed generation in
// src/park. siphash24() takes any byte string; the inline forms take one or two little-endian
// 64-bit words (the tag codecs' fixed inputs) and unroll to straight-line code on registers.
//
//   SipKey                 the 128-bit key as the two words k0, k1 (little-endian halves)
//   sip24_1(k, m)          SipHash-2-4 of the 8-byte message m      (== siphash24 of its bytes)
//   sip24_2(k, m0, m1)     SipHash-2-4 of the 16-byte message m0|m1 (== siphash24 of its bytes)
//   sip13_1(k, m)          SipHash-1-3 of the 8-byte message m (fewer rounds: Feistel rounds)
//
// Reference vectors: tests/park/siphash_test.cc.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace nfpark::park {

using Key128 = std::array<uint8_t, 16>;

struct SipKey {
  uint64_t k0 = 0, k1 = 0;
  static SipKey from(const Key128& k) {
    SipKey s;
    std::memcpy(&s.k0, k.data(), 8);  // x86: little-endian words, as SipHash reads them
    std::memcpy(&s.k1, k.data() + 8, 8);
    return s;
  }
};

namespace sip_detail {
struct State {
  uint64_t v0, v1, v2, v3;
  explicit State(const SipKey& k)
      : v0(0x736f6d6570736575ULL ^ k.k0),
        v1(0x646f72616e646f6dULL ^ k.k1),
        v2(0x6c7967656e657261ULL ^ k.k0),
        v3(0x7465646279746573ULL ^ k.k1) {}
  static uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }
  void round() {
    v0 += v1;
    v1 = rotl(v1, 13);
    v1 ^= v0;
    v0 = rotl(v0, 32);
    v2 += v3;
    v3 = rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = rotl(v1, 17);
    v1 ^= v2;
    v2 = rotl(v2, 32);
  }
  template <int C>
  void absorb(uint64_t m) {
    v3 ^= m;
    for (int i = 0; i < C; ++i) round();
    v0 ^= m;
  }
  template <int D>
  uint64_t finish() {
    v2 ^= 0xff;
    for (int i = 0; i < D; ++i) round();
    return v0 ^ v1 ^ v2 ^ v3;
  }
};
}  // namespace sip_detail

inline uint64_t sip24_1(const SipKey& k, uint64_t m) {
  sip_detail::State s(k);
  s.absorb<2>(m);
  s.absorb<2>(uint64_t(8) << 56);
  return s.finish<4>();
}

inline uint64_t sip24_2(const SipKey& k, uint64_t m0, uint64_t m1) {
  sip_detail::State s(k);
  s.absorb<2>(m0);
  s.absorb<2>(m1);
  s.absorb<2>(uint64_t(16) << 56);
  return s.finish<4>();
}

inline uint64_t sip13_1(const SipKey& k, uint64_t m) {
  sip_detail::State s(k);
  s.absorb<1>(m);
  s.absorb<1>(uint64_t(8) << 56);
  return s.finish<3>();
}

// SipHash-2-4 of `len` bytes at `data`.
uint64_t siphash24(const Key128& key, const uint8_t* data, size_t len);

}  // namespace nfpark::park
