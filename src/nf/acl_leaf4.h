// AclLeaf4: up to 16 IPv4 ACL rules of one classifier leaf laid out field by field (structure of
// arrays), so a key is compared against all 16 rules' ranges at once.
//
// Theory of operation. An IPv4 key has 5 fields that matter (source, destination, source port,
// destination port, protocol; all fit 32 bits), so a rule is 5 closed ranges [lo, hi] of uint32.
// A block stores lo[field][lane] and hi[field][lane] for 16 lanes (the rules in priority order)
// and their rule indices. match() returns a bit mask, bit j set when lane j's rule contains the
// key: with AVX-512, 5 × 2 unsigned compares of 16 lanes into a mask register; with AVX2 the
// same on two 8-lane halves (unsigned compare as max(x, lo) == x and min(x, hi) == x); no
// branch per rule; the first match is the lowest set bit. Unused lanes hold the empty range
// lo = ~0, hi = 0 (x ≥ ~0 and x ≤ 0 cannot both hold), so they never match. Without either (the
// build is -march=native: the path is chosen at compile time) match_scalar() does the same per
// lane. Cost: 704 bytes per block (vs 4-byte rule indices for a scalar leaf, and the classifier's
// default leaf of 16 rules fills one block); no branch mispredicted per rule, where the scalar
// scan of rule boxes mispredicted its "does this rule match" exit on most keys that hit rules.
#pragma once
#include <cstdint>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace nfpark::nf {

struct alignas(64) AclLeaf4 {
  static constexpr int kLanes = 16;
  static constexpr int kFields = 5;  // src, dst, sport, dport, proto
  uint32_t lo[kFields][kLanes];
  uint32_t hi[kFields][kLanes];
  uint32_t id[kLanes];  // rule index per lane (~0 when unused)

  // All lanes empty (match nothing).
  void clear() {
    for (int f = 0; f < kFields; ++f)
      for (int j = 0; j < kLanes; ++j) lo[f][j] = ~0u, hi[f][j] = 0;
    for (uint32_t& i : id) i = ~0u;
  }
  // Bit j set when lane j's ranges all contain x[0..4].
  uint32_t match_scalar(const uint32_t* x) const {
    uint32_t m = 0;
    for (int j = 0; j < kLanes; ++j) {
      bool in = true;
      for (int f = 0; f < kFields; ++f) in &= (x[f] >= lo[f][j]) & (x[f] <= hi[f][j]);
      m |= uint32_t(in) << j;
    }
    return m;
  }
  uint32_t match(const uint32_t* x) const {
#if defined(__AVX512F__)
    // Ten independent compares ANDed as a tree: chaining them through the mask operand (each
    // compare masked by the previous result) made one long dependency chain, 2.3x the latency
    // on this machine's AMD EPYC (17.8 vs 7.7 ns per dependent call).
    __mmask16 a[kFields];
    for (int f = 0; f < kFields; ++f) {
      const __m512i v = _mm512_set1_epi32(int(x[f]));
      a[f] = _mm512_cmple_epu32_mask(_mm512_load_si512(lo[f]), v) &
             _mm512_cmple_epu32_mask(v, _mm512_load_si512(hi[f]));
    }
    return uint32_t((a[0] & a[1]) & (a[2] & a[3]) & a[4]);
#elif defined(__AVX2__)
    return match_avx2(x);
#else
    return match_scalar(x);
#endif
  }
#if defined(__AVX2__)
  uint32_t match_avx2(const uint32_t* x) const {
    return half(x, 0) | half(x, 8) << 8;
  }

 private:
  uint32_t half(const uint32_t* x, int at) const {
    __m256i all = _mm256_set1_epi32(-1);
    for (int f = 0; f < kFields; ++f) {
      const __m256i v = _mm256_set1_epi32(int(x[f]));
      const __m256i l = _mm256_load_si256(reinterpret_cast<const __m256i*>(lo[f] + at));
      const __m256i h = _mm256_load_si256(reinterpret_cast<const __m256i*>(hi[f] + at));
      all = _mm256_and_si256(all, _mm256_cmpeq_epi32(_mm256_max_epu32(v, l), v));
      all = _mm256_and_si256(all, _mm256_cmpeq_epi32(_mm256_min_epu32(v, h), v));
    }
    return uint32_t(_mm256_movemask_ps(_mm256_castsi256_ps(all)));
  }
#endif
};
static_assert(sizeof(AclLeaf4) == 704);

// AclLeaf4Small: a leaf of at most 4 IPv4 rules (most leaves under equal-width cuts), 192 bytes
// (3 cache lines, vs 11 for AclLeaf4): each field's 4 lows and 4 highs share one 32-byte row,
// compared with the key in one 256-bit register (AVX-512VL: lows in lanes 0-3, highs in 4-7).
struct alignas(64) AclLeaf4Small {
  static constexpr int kLanes = 4;
  static constexpr int kFields = AclLeaf4::kFields;
  uint32_t lohi[kFields][2 * kLanes];  // [f][j] low of lane j, [f][4 + j] its high
  uint32_t id[kLanes];                 // rule index per lane (~0 when unused)

  void clear() {
    for (int f = 0; f < kFields; ++f)
      for (int j = 0; j < kLanes; ++j) lohi[f][j] = ~0u, lohi[f][kLanes + j] = 0;
    for (uint32_t& i : id) i = ~0u;
  }
  uint32_t match_scalar(const uint32_t* x) const {
    uint32_t m = 0;
    for (int j = 0; j < kLanes; ++j) {
      bool in = true;
      for (int f = 0; f < kFields; ++f) in &= (x[f] >= lohi[f][j]) & (x[f] <= lohi[f][kLanes + j]);
      m |= uint32_t(in) << j;
    }
    return m;
  }
  uint32_t match(const uint32_t* x) const {
#if defined(__AVX2__)
    // lo <= x as max(lo, x) == x (lanes 0-3), x <= hi as min(hi, x) == x (lanes 4-7), no mask
    // registers (a k-register compare chain was no faster here).
    __m256i ge = _mm256_set1_epi32(-1), le = ge;
    for (int f = 0; f < kFields; ++f) {
      const __m256i v = _mm256_set1_epi32(int(x[f]));
      const __m256i r = _mm256_load_si256(reinterpret_cast<const __m256i*>(lohi[f]));
      ge = _mm256_and_si256(ge, _mm256_cmpeq_epi32(_mm256_max_epu32(r, v), v));
      le = _mm256_and_si256(le, _mm256_cmpeq_epi32(_mm256_min_epu32(r, v), v));
    }
    const uint32_t a = uint32_t(_mm256_movemask_ps(_mm256_castsi256_ps(ge)));
    const uint32_t b = uint32_t(_mm256_movemask_ps(_mm256_castsi256_ps(le)));
    return a & b >> 4 & 0xF;
#else
    return match_scalar(x);
#endif
  }
};
static_assert(sizeof(AclLeaf4Small) == 192);

}  // namespace nfpark::nf
