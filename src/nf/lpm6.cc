#include "nf/lpm6.h"

#include <cstring>
#include <new>

namespace nfpark::nf {

namespace {

constexpr size_t kNodesFirst = size_t(1) << 16;  // entries the first node maps room for

}  // namespace

void Lpm6::init() {
  root_.clear();
  nodes_.clear();
  free_.clear();
  run_nodes_ = wide_nodes_ = dense_nodes_ = 0;
  // Written only under the /16s that hold routes (all of a BGP table under 2000::/3): 4 KiB
  // pages, backed where written (never-written ones read as "no route").
  root_.small_pages(true);
  root_.resize(size_t(1) << 16, 0);
  nodes_.populate(true);
}

uint32_t Lpm6::unit() {
  if (!free_.empty()) {
    const uint32_t u = free_.back();
    free_.pop_back();
    return u;
  }
  const size_t u = nodes_.size() / kUnit;
  if (u + 1 > kRefMask) throw std::bad_alloc();  // 2^28 units (16 GiB): past any real table
  // The first node maps room for 256 KiB of them: one 2 MiB page, faulted in once, instead of
  // growing through 4 KiB pages (measured: twice the build time of 1k routes).
  if (u == 0) nodes_.reserve_for(kNodesFirst);
  nodes_.resize(nodes_.size() + kUnit, 0);
  return uint32_t(u);
}

uint32_t Lpm6::new_node(uint32_t fill, bool dense, bool wide) {
  if (dense) {
    const size_t u = nodes_.size() / kUnit;
    if (u + 16 > kRefMask) throw std::bad_alloc();
    if (u == 0) nodes_.reserve_for(kNodesFirst);
    nodes_.resize(nodes_.size() + 16 * kUnit, fill);
    ++dense_nodes_;
    return kExt | uint32_t(u);
  }
  const uint32_t u = unit();
  uint32_t* n = &nodes_[size_t(u) * kUnit];
  std::memset(n, 0, 16);  // every lane 0: one run, in word 15
  n[kUnit - 1] = fill;
  ++run_nodes_;
  wide_nodes_ += wide;
  return kRun | (wide ? kWide : 0) | u;
}

size_t Lpm6::slot(uint32_t e, uint32_t v) const {
  const size_t base = size_t(e & kRefMask) * kUnit;
  const uint32_t* n = &nodes_[base];
  if (e & kExt) return base + v;
  return base + (wide(e) ? wide_slot(n, uint16_t(v)) : run_slot(n, uint8_t(v)));
}

// Run j sits in lane 16 - k + j (one byte) or 8 - k + j (two bytes); its entry in word 16 - k + j
// either way. Lanes before run 0 are padding: 0, as run 0's start.
namespace {
// The runs of a node whose first 16 bytes are lanes of type Lane (uint8_t: one key byte,
// uint16_t: two): k = lanes + 1 - zero lanes (run 0 starts at 0, the padding before it is 0).
template <typename Lane, typename Runs>
void decode_lanes(const uint32_t* n, Runs& r) {
  constexpr int kLanes = 16 / sizeof(Lane);
  Lane l[kLanes];
  std::memcpy(l, n, 16);
  int zeros = 0;
  for (Lane x : l) zeros += x == 0;
  r.k = kLanes + 1 - zeros;
  for (int j = 0; j < r.k; ++j) r.start[j] = l[kLanes - r.k + j], r.e[j] = n[16 - r.k + j];
}
}  // namespace

void Lpm6::decode(uint32_t e, Runs& r) {
  if (wide(e)) {
    decode_lanes<uint16_t>(node(e), r);
  } else {
    decode_lanes<uint8_t>(node(e), r);
  }
}

void Lpm6::encode(uint32_t e, const Runs& r) {
  uint32_t* n = node(e);
  uint64_t lanes[2] = {0, 0};  // built in registers: byte stores then a 16-byte load of them
                               // stalled on store forwarding
  const bool w = wide(e);
  for (int j = 1; j < r.k; ++j) {
    if (w) {
      const int l = 8 - r.k + j;
      lanes[l >> 2] |= uint64_t(r.start[j]) << (16 * (l & 3));
    } else {
      const int l = 16 - r.k + j;
      lanes[l >> 3] |= uint64_t(r.start[j]) << (8 * (l & 7));
    }
  }
  std::memcpy(n, lanes, 16);
  for (int j = 0; j < r.k; ++j) n[16 - r.k + j] = r.e[j];
}

uint32_t Lpm6::compress(Loc at, const uint32_t* ent) {
  Runs r;
  for (int i = 0; i < 256; ++i) {
    if (r.k > 0 && r.e[r.k - 1] == ent[i]) continue;
    if (r.k == kMaxRuns) {  // dense
      const uint32_t e = new_node(0, true, false);
      std::memcpy(node(e), ent, 256 * sizeof(uint32_t));
      word(at) = e;
      return e;
    }
    r.start[r.k] = uint16_t(i);
    r.e[r.k++] = ent[i];
  }
  const uint32_t e = new_node(0, false, false);
  encode(e, r);
  word(at) = e;
  return e;
}

uint32_t Lpm6::split_wide(Loc at, uint32_t e, const Runs& r) {
  uint32_t top[256];
  for (int h = 0, j = 0; h < 256; ++h) {  // j: the run holding h's first value
    const uint32_t first = uint32_t(h) << 8, last = first | 0xFF;
    while (j + 1 < r.k && r.start[j + 1] <= first) ++j;
    int end = j;  // the run holding h's last value
    while (end + 1 < r.k && r.start[end + 1] <= last) ++end;
    if (end == j) {  // one run (a leaf: a child covers one value)
      top[h] = r.e[j];
      continue;
    }
    Runs low;  // the runs of [first, last], on the second byte
    for (int i = j; i <= end; ++i) {
      low.start[low.k] = uint16_t(i == j ? 0 : r.start[i] & 0xFF);
      low.e[low.k++] = r.e[i];
    }
    top[h] = new_node(0, false, false);
    encode(top[h], low);
  }
  free_.push_back(e & kRefMask);
  --run_nodes_, --wide_nodes_;
  return compress(at, top);
}

template <class F>
uint32_t Lpm6::edit(Loc at, uint32_t e, uint32_t lo, uint32_t hi, F f) {
  if (e & kExt) {
    for (uint32_t i = lo; i <= hi; ++i) {
      uint32_t* n = node(e);  // f does not allocate; re-read anyway, it is one add
      n[i] = f(n[i]);
    }
    return e;
  }
  Runs in, out;
  const uint32_t last = wide(e) ? 0xFFFF : 0xFF;
  const auto push = [&out](uint32_t s, uint32_t x) {
    if (out.k > 0 && out.e[out.k - 1] == x) return;  // equal neighbours merge
    out.start[out.k] = uint16_t(s);
    out.e[out.k++] = x;
  };
  uint64_t lanes[2];
  std::memcpy(lanes, node(e), 16);
  if ((lanes[0] | lanes[1]) == 0) {  // one run (a node just made): at most three after
    const uint32_t x = node(e)[kUnit - 1], y = f(x);  // x is no child (a child covers one value)
    if (lo > 0) push(0, x);
    push(lo, y);
    if (hi < last) push(hi + 1, x);
    encode(e, out);
    return e;
  }
  decode(e, in);
  // Two-byte nodes: the result's runs are known before f runs (a split adds at most 2).
  if (wide(e)) {
    int k = 0;
    for (int j = 0; j < in.k; ++j) {
      const uint32_t s = in.start[j], t = j + 1 < in.k ? in.start[j + 1] - 1u : last;
      k += (t < lo || s > hi) ? 1 : 1 + (s < lo) + (t > hi);
    }
    if (k > kMaxWideRuns) {
      split_wide(at, e, in);
      return kRetry;
    }
  }
  for (int j = 0; j < in.k; ++j) {  // split at lo and hi + 1, rewrite what is inside
    const uint32_t s = in.start[j], t = j + 1 < in.k ? in.start[j + 1] - 1u : last;
    if (t < lo || s > hi) {
      push(s, in.e[j]);
      continue;
    }
    if (s < lo) push(s, in.e[j]);
    push(s < lo ? lo : s, f(in.e[j]));
    if (t > hi) push(hi + 1, in.e[j]);
  }
  if (out.k <= (wide(e) ? kMaxWideRuns : kMaxRuns)) {
    encode(e, out);
    return e;
  }
  // One key byte, too many runs: a dense node. Its 16 units are new (a run node's is too small).
  uint32_t ent[256];
  for (int j = 0; j < out.k; ++j) {
    const int s = out.start[j], t = j + 1 < out.k ? out.start[j + 1] : 256;
    for (int i = s; i < t; ++i) ent[i] = out.e[j];
  }
  free_.push_back(e & kRefMask);
  --run_nodes_;
  const uint32_t d = new_node(0, true, false);
  std::memcpy(node(d), ent, sizeof ent);
  word(at) = d;
  return d;
}

uint32_t Lpm6::cover(uint32_t x, uint32_t entry, int len) {
  if (child(x)) {
    fill_all(x, entry, len);
    return x;
  }
  return (!(x & kValid) || depth(x) <= len) ? entry : x;
}

// Every entry of e's node: a run node keeps its runs (no split over the whole range, merges at
// most), so it is never rebuilt here and `at` is not needed.
void Lpm6::fill_all(uint32_t e, uint32_t entry, int len) {
  const uint32_t last = wide(e) ? 0xFFFF : 0xFF;
  edit(Loc{true, 0}, e, 0, last, [&](uint32_t x) { return cover(x, entry, len); });
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
    e = new_node(e, true, false);
    root_[r] = e;
  }
  for (int pos = 2;;) {  // e's node is indexed by key[pos] (and key[pos + 1] if wide)
    const int bits = wide(e) ? 16 : 8;
    const uint32_t v = key_at(e, key, pos);
    if (len <= 8 * pos + bits) {  // `len` ends in this node: expand it over 2^(...) values
      const uint32_t span = 1u << (8 * pos + bits - len), first = v & ~(span - 1);
      const uint32_t ne =
          edit(at, e, first, first + span - 1, [&](uint32_t x) { return cover(x, entry, len); });
      if (ne == kRetry) {
        e = word(at);
        continue;
      }
      return true;
    }
    const int next = pos + bits / 8;  // the child's first key byte
    uint32_t c = nodes_[slot(e, v)];
    if (!child(c)) {
      c = new_node(c, next <= kDenseTo, next > kDenseTo && next < 15);
      const uint32_t ne = edit(at, e, v, v, [c](uint32_t) { return c; });
      if (ne == kRetry) {  // e was rebuilt: give the new node back, walk e's new form
        free_.push_back(c & kRefMask);
        --run_nodes_, wide_nodes_ -= wide(c);
        e = word(at);
        continue;
      }
      e = ne;
    }
    at = Loc{false, slot(e, v)};
    e = c;
    pos = next;
  }
}

}  // namespace nfpark::nf
