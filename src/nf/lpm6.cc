#include "nf/lpm6.h"

#include <cstring>

#include "core/hot_path.h"

namespace nfpark::nf {

namespace {

constexpr size_t kNodesFirst = size_t(1) << 16;  // entries the first node maps room for

}  // namespace

void Lpm6::init() {
  root_.clear();
  nodes_.clear();
  free_.clear();
  run_nodes_ = dense_nodes_ = 0;
  // Written only under the /16s that hold routes (all of a BGP table under 2000::/3): 4 KiB
  // pages, backed where written (never-written ones read as "no route").
  root_.small_pages(true);
  root_.resize(size_t(1) << 16, 0);
  nodes_.populate(true);
}

uint32_t Lpm6::new_node(uint32_t fill, bool dense) {
  if (dense) {
    const size_t u = nodes_.size() / kUnit;
    if (u == 0) nodes_.reserve_for(kNodesFirst);
    nodes_.resize(nodes_.size() + 16 * kUnit, fill);
    ++dense_nodes_;
    return kExt | uint32_t(u);
  }
  size_t unit;
  if (!free_.empty()) {
    unit = free_.back();
    free_.pop_back();
  } else {
    unit = nodes_.size() / kUnit;
    // The first node maps room for 256 KiB of them: one 2 MiB page, faulted in once, instead
    // of growing through 4 KiB pages.
    if (unit == 0) nodes_.reserve_for(kNodesFirst);
    nodes_.resize(nodes_.size() + kUnit, 0);
  }
  uint32_t* n = &nodes_[unit * kUnit];
  std::memset(n, 0, 16);  // every lane 0: one run, in word 15
  n[kUnit - 1] = fill;
  ++run_nodes_;
  return kRun | uint32_t(unit);
}

Lpm6::Loc Lpm6::slot_of(uint32_t e, uint8_t b) {
  const size_t base = size_t(e & kRefMask) * kUnit;
  return {false, base + ((e & kExt) ? b : run_slot(&nodes_[base], b))};
}

template <class F>
uint32_t Lpm6::edit(Loc at, uint32_t e, int lo, int hi, F f) {
  if (e & kExt) {
    for (int i = lo; i <= hi; ++i) {
      uint32_t* n = node(e);  // f does not allocate; re-read anyway, it is one add
      n[i] = f(n[i]);
    }
    return e;
  }
  Runs in, out;
  {  // decode: the lanes holding 0 are the padding and run 0
    const uint32_t* n = node(e);
    const __m128i lanes = _mm_load_si128(reinterpret_cast<const __m128i*>(n));
    const uint32_t zero = uint32_t(_mm_movemask_epi8(_mm_cmpeq_epi8(lanes, _mm_setzero_si128())));
    in.k = 17 - __builtin_popcount(zero);
    const uint8_t* l = reinterpret_cast<const uint8_t*>(n);
    for (int j = 0; j < in.k; ++j) {
      in.start[j] = l[16 - in.k + j];
      in.e[j] = n[16 - in.k + j];
    }
  }
  const auto push = [&out](int s, uint32_t x) {
    if (out.k > 0 && out.e[out.k - 1] == x) return;  // equal neighbours merge
    out.start[out.k] = uint8_t(s);
    out.e[out.k++] = x;
  };
  for (int j = 0; j < in.k; ++j) {  // split at lo and hi + 1, rewrite what is inside
    const int s = in.start[j], t = j + 1 < in.k ? in.start[j + 1] - 1 : 255;
    if (t < lo || s > hi) {
      push(s, in.e[j]);
      continue;
    }
    if (s < lo) push(s, in.e[j]);
    push(s < lo ? lo : s, f(in.e[j]));
    if (t > hi) push(hi + 1, in.e[j]);
  }
  if (out.k <= kMaxRuns) {  // encode
    uint32_t* n = node(e);
    uint64_t lanes[2] = {0, 0};  // built in registers: byte stores then a 16-byte load of
                                 // them stalled on store forwarding
    for (int j = 1; j < out.k; ++j) {
      const int l = 16 - out.k + j;
      lanes[l >> 3] |= uint64_t(out.start[j]) << (8 * (l & 7));
    }
    std::memcpy(n, lanes, 16);
    for (int j = 0; j < out.k; ++j) n[16 - out.k + j] = out.e[j];
    return e;
  }
  // Too many runs: a dense node. Its 16 units are new (a run node's unit is too small).
  const size_t unit = nodes_.size() / kUnit;
  nodes_.resize(nodes_.size() + 16 * kUnit, 0);
  uint32_t* d = &nodes_[unit * kUnit];
  for (int j = 0; j < out.k; ++j) {
    const int s = out.start[j], t = j + 1 < out.k ? out.start[j + 1] : 256;
    for (int i = s; i < t; ++i) d[i] = out.e[j];
  }
  free_.push_back(e & kRefMask);
  --run_nodes_, ++dense_nodes_;
  const uint32_t ne = kExt | uint32_t(unit);
  word(at) = ne;
  return ne;
}

uint32_t Lpm6::cover(uint32_t x, uint32_t entry, int len) {
  if (child(x)) {
    fill_all(x, entry, len);
    return x;
  }
  return (!(x & kValid) || depth(x) <= len) ? entry : x;
}

// Every entry of e's node: a run node keeps its runs (no split over the whole range, merges at
// most), so it never becomes dense here and `at` is not needed.
void Lpm6::fill_all(uint32_t e, uint32_t entry, int len) {
  edit(Loc{true, 0}, e, 0, 255, [&](uint32_t x) { return cover(x, entry, len); });
}

bool Lpm6::insert(const uint8_t* key, int len, uint32_t value) {
  if (value > kMaxValue || len < 0 || len > 128) return false;
  const uint32_t entry = kValid | uint32_t(len) << 22 | value;
  const uint32_t r = root_index(key);
  if (len <= 16) {
    const uint32_t span = 1u << (16 - len), first = r & ~(span - 1);
    for (uint32_t i = first; i < first + span; ++i) root_[i] = cover(root_[i], entry, len);
    return true;
  }
  Loc at{true, r};
  uint32_t e = root_[r];
  if (!child(e)) {  // refine: a child node holding the old entry everywhere
    e = new_node(e, true);
    root_[r] = e;
  }
  int pos = 2;  // e's node is indexed by key[pos]
  for (; len > 8 * (pos + 1); ++pos) {
    const uint8_t b = key[pos];
    uint32_t c = step(nodes_.data(), e, b);
    if (!child(c)) {
      c = new_node(c, pos + 1 <= kDenseTo);
      e = edit(at, e, b, b, [c](uint32_t) { return c; });
    }
    at = slot_of(e, b);
    e = c;
  }
  // `len` ends in this node: expand it over 2^(8 (pos + 1) - len) entries.
  const int span = 1 << (8 * (pos + 1) - len), first = key[pos] & ~(span - 1);
  edit(at, e, first, first + span - 1, [&](uint32_t x) { return cover(x, entry, len); });
  return true;
}

// One level at a time for all keys: prefetch every key's line of the level (a run node, or the
// entry of a dense one) before reading any, so the misses overlap.
void Lpm6::lookup_chunk(const uint8_t* const* keys, uint32_t* out, size_t n) const {
  const uint32_t* root = root_.data();
  const uint32_t* nodes = nodes_.data();
  const uint32_t* at[kMaxBurst];
  for (size_t i = 0; i < n; ++i) {
    at[i] = root + root_index(keys[i]);
    prefetch_line(at[i]);
  }
  uint32_t ext = 0;  // bit i: key i's entry is a child node (out[i] holds it until resolved)
  for (size_t i = 0; i < n; ++i) {
    const uint32_t e = *at[i];
    const uint32_t x = child(e);
    ext |= x << i;
    out[i] = x ? e : answer(e);
  }
  for (int pos = 2; ext; ++pos) {
    for (uint32_t m = ext; m; m &= m - 1) {
      const int i = __builtin_ctz(m);
      const uint32_t e = out[i];
      at[i] = nodes + size_t(e & kRefMask) * kUnit + ((e & kExt) ? keys[i][pos] : 0);
      prefetch_line(at[i]);
    }
    uint32_t next = 0;
    for (uint32_t m = ext; m; m &= m - 1) {
      const int i = __builtin_ctz(m);
      const uint32_t* p = at[i];
      const uint32_t e = (out[i] & kExt) ? *p : p[run_slot(p, keys[i][pos])];
      const uint32_t x = child(e);
      next |= x << i;
      out[i] = x ? e : answer(e);
    }
    ext = next;
  }
}

void Lpm6::lookup_burst(const uint8_t* const* keys, uint32_t* out, size_t n) const {
  for (size_t i = 0; i < n; i += kMaxBurst)
    lookup_chunk(keys + i, out + i, n - i < kMaxBurst ? n - i : kMaxBurst);
}

}  // namespace nfpark::nf
