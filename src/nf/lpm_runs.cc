#include "nf/lpm_runs.h"

#include "core/hot_path.h"

namespace nfpark::nf {

uint32_t LpmRuns::emit(const uint32_t* v, uint32_t n, std::vector<uint32_t>& pool, size_t max) {
  uint32_t bitmap[8] = {}, runs[256];
  uint32_t nruns = 0;
  for (uint32_t j = 0; j < n; ++j)
    if (j == 0 || v[j] != v[j - 1]) bitmap[j >> 5] |= 1u << (j & 31), runs[nruns++] = v[j];
  const uint32_t header = n == 64 ? kHeader6 : kHeader8;
  uint32_t bases = 0, count = 0;
  for (uint32_t k = 0; k < 4; ++k) {
    bases |= count << (8 * k);
    count += uint32_t(__builtin_popcount(bitmap[2 * k]) + __builtin_popcount(bitmap[2 * k + 1]));
  }
  // 8-byte aligned (the bitmap's loads); a node of at most a cache line (16 words) never
  // straddles one, a longer one starts a line.
  const size_t words = header + nruns;
  size_t off = (pool.size() + 1) & ~size_t(1);
  if (words > 16 || off % 16 + words > 16) off = (off + 15) & ~size_t(15);
  if (off + words > max || off + words > kOffMask) return kNoRoute;
  pool.resize(off + words, 0);
  std::memcpy(&pool[off], bitmap, (header == kHeader6 ? 2 : 8) * sizeof(uint32_t));
  if (header == kHeader8) pool[off + 8] = bases;
  std::memcpy(&pool[off + header], runs, nruns * sizeof(uint32_t));
  ++nodes_;
  return uint32_t(off);
}

// Every key's node is prefetched before any is read (the root, 256 KiB, is mostly in L2), then
// each is stepped without a branch; the few keys whose run is a level-3 node go round again.
void LpmRuns::chunk(const uint32_t* addrs, uint32_t* out, size_t n) const {
  const uint32_t* root = t_.data();
  const uint32_t* pool = t_.data();
  uint32_t node[kMaxBurst];
  for (size_t i = 0; i < n; ++i) {
    node[i] = root[addrs[i] >> 14];
    prefetch_line(pool + node[i]);
  }
  uint32_t deep = 0;  // bit i: out[i] is a level-3 node
  for (size_t i = 0; i < n; ++i) {
    const uint32_t v = step6(pool + node[i], addrs[i] >> 8);
    deep |= uint32_t(is_ext(v)) << i;
    out[i] = v;
  }
  for (uint32_t m = deep; m; m &= m - 1) prefetch_line(pool + (out[__builtin_ctz(m)] & kOffMask));
  for (uint32_t m = deep; m; m &= m - 1) {
    const int i = __builtin_ctz(m);
    out[i] = step8(pool + (out[i] & kOffMask), addrs[i] & 0xFF);
  }
}

void LpmRuns::lookup_burst(const uint32_t* addrs, uint32_t* out, size_t n) const {
  for (size_t i = 0; i < n; i += kMaxBurst)
    chunk(addrs + i, out + i, n - i < kMaxBurst ? n - i : kMaxBurst);
}

}  // namespace nfpark::nf
