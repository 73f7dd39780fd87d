// AclLeaf4: up to 8 IPv4 ACL rules of one classifier leaf laid out field by field (structure of
// arrays), so a key is compared against all 8 rules' ranges at once.
//
// Theory of operation. An IPv4 key has 5 fields that matter (source, destination, source port,
// destination port, protocol; all fit 32 bits), so a rule is 5 closed ranges [lo, hi] of uint32.
// A block stores lo[field][lane] and hi[field][lane] for 8 lanes (the rules in priority order)
// and their rule indices. match() returns a bit mask, bit j set when lane j's rule contains the
// key: with AVX2, 5 × (2 broadcasts-compares) on 256-bit registers (unsigned compare as
// max(x, lo) == x and min(x, hi) == x), no branch per rule; the first match is the lowest set
// bit. Unused lanes hold the empty range lo = ~0, hi = 0 (x ≥ ~0 and x ≤ 0 cannot both hold),
// so they never match. Without AVX2 (the build is -march=native: chosen at compile time)
// match_scalar() does the same per lane. Cost: 352 bytes per block (vs 8 × 4-byte rule indices
// for a scalar leaf); no branch mispredicted per rule, where the scalar scan of rule boxes
// mispredicted its "does this rule match" exit on most keys that hit rules.
#pragma once
#include <cstdint>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace nfpark::nf {

struct alignas(32) AclLeaf4 {
  static constexpr int kLanes = 8;
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
#if defined(__AVX2__)
    __m256i all = _mm256_set1_epi32(-1);
    for (int f = 0; f < kFields; ++f) {
      const __m256i v = _mm256_set1_epi32(int(x[f]));
      const __m256i l = _mm256_load_si256(reinterpret_cast<const __m256i*>(lo[f]));
      const __m256i h = _mm256_load_si256(reinterpret_cast<const __m256i*>(hi[f]));
      all = _mm256_and_si256(all, _mm256_cmpeq_epi32(_mm256_max_epu32(v, l), v));
      all = _mm256_and_si256(all, _mm256_cmpeq_epi32(_mm256_min_epu32(v, h), v));
    }
    return uint32_t(_mm256_movemask_ps(_mm256_castsi256_ps(all)));
#else
    return match_scalar(x);
#endif
  }
};
static_assert(sizeof(AclLeaf4) == 352);

}  // namespace nfpark::nf
