#include "nf/lpm.h"

#include <cstring>

#include "core/hot_path.h"
#include "nf/lpm_prefix.h"

namespace nfpark::nf {

Lpm::Lpm(int key_bytes, int first_stride)
    : key_bytes_(key_bytes == 4 ? 4 : 16),
      auto_(key_bytes_ == 4 && first_stride != 16 && first_stride != 24),
      auto_widen_(auto_) {
  if (key_bytes_ == 16)
    v6_.init();
  else
    init_root(first_stride == 24 ? 24 : 16);
}

void Lpm::init_root(int stride) {
  stride_ = stride;
  root_.clear();
  groups_.clear();
  // A 16-bit root (256 KiB) is read and written all over by the inserts, the groups as they
  // are made: their pages are backed at once. A 24-bit root (64 MiB) only where written.
  root_.populate(stride == 16);
  groups_.populate(true);
  root_.resize(size_t(1) << stride, 0);
  image_ = Image::kTrie;
  dir16_.clear();
  runs_.clear();
  width_.assign(key_bytes_ == 4 && stride == 16 ? size_t(1) << 16 : 0, 0);
  image_entries_ = 0;
  image_values_ok_ = true;
}

bool Lpm::compile() {
  image_ = Image::kTrie;
  runs_.clear();
  const auto leaf = [this](uint32_t c) { return answer(root_[c]); };
  const auto group = [this](uint32_t c, int s, uint16_t* out) { dir16_group(c, s, out); };
  if (!width_.empty() && image_fits() && dir16_.build(width_.data(), leaf, group)) {
    image_ = Image::kDir16;
    return true;
  }
  dir16_.clear();
  const auto look = [this](uint32_t a) { return trie_v4(a); };
  // Past LpmDir16's bound (auto mode): the runs image when it is smaller than the trie.
  const auto slot = [this](uint32_t c, bool& deeper) { return slot24(c, deeper); };
  if (auto_ && runs_.build(slot, look, (root_.size() + groups_.size()) * sizeof(uint32_t)))
    image_ = Image::kRuns;
  return image_ != Image::kTrie;
}

uint32_t Lpm::trie_v4(uint32_t a) const {
  int shift = 32 - stride_;
  uint32_t e = root_[a >> shift];
  while (e & kExt) shift -= 8, e = groups_[size_t(e & kValMask) << 8 | (a >> shift & 0xFF)];
  return answer(e);
}

// The LpmDir16 group of /16 number c (16-bit root, width s): entry j answers for the first
// address of its 2^(16 - s) (see LpmDir16). The /16's trie group has 256 entries of 2^8
// addresses; one that is not a child group holds a single answer, copied over its 2^(s - 8)
// image entries (s > 8) or read at every 2^(8 - s)th entry (s <= 8); a child group (a prefix
// past /24: s > 8, the last IPv4 level) gives every 2^(16 - s)th of its entries.
// out[0, n) = v; n is a power of two (the compiler left std::fill one store per entry).
static void fill16(uint16_t* out, size_t n, uint16_t v) {
  if (n < 4) {
    for (size_t i = 0; i < n; ++i) out[i] = v;
    return;
  }
  const uint64_t w = v * 0x0001000100010001ULL;
  for (size_t i = 0; i < n; i += 4) std::memcpy(out + i, &w, sizeof w);
}

void Lpm::dir16_group(uint32_t c, int s, uint16_t* out) const {
  const auto a16 = [](uint32_t e) {  // the value, or 0xFFFF without the valid bit (no branch)
    return uint16_t(uint32_t(e & kValMask) | uint32_t(int32_t(~e) >> 31));
  };
  const uint32_t e = root_[c];
  const size_t n = size_t(1) << s;
  if (!(e & kExt)) return fill16(out, n, a16(e));
  const uint32_t* g = &groups_[size_t(e & kValMask) << 8];
  if (s == 8) {  // a /24 the longest: the group as it is (a loop the compiler vectorizes)
    for (size_t j = 0; j < 256; ++j) out[j] = a16(g[j]);
    return;
  }
  if (s < 8) {
    for (size_t j = 0, step = size_t(1) << (8 - s); j < n; ++j) out[j] = a16(g[j * step]);
    return;
  }
  const size_t run = n >> 8, step = size_t(1) << (16 - s);
  for (size_t k = 0; k < 256; ++k, out += run) {
    if (!(g[k] & kExt)) {
      fill16(out, run, a16(g[k]));
      continue;
    }
    const uint32_t* h = &groups_[size_t(g[k] & kValMask) << 8];
    for (size_t m = 0; m < run; ++m) out[m] = a16(h[m * step]);
  }
}

uint32_t Lpm::slot24(uint32_t c, bool& deeper) const {
  uint32_t e = root_[c >> (24 - stride_)];
  if (stride_ == 16 && (e & kExt)) e = groups_[size_t(e & kValMask) << 8 | (c & 0xFF)];
  deeper = e & kExt;
  return answer(e);
}

void Lpm::fill(int64_t base, uint32_t first, uint32_t n, uint32_t entry, int len) {
  for (uint32_t i = first; i < first + n; ++i) {
    uint32_t e = at(base, i);
    if (e & kExt) {
      fill(int64_t(e & kValMask), 0, 256, entry, len);
    } else if (!(e & kValid) || int(depth(e)) <= len) {
      at(base, i) = entry;
    }
  }
}

bool Lpm::insert(const uint8_t* prefix, int len, uint32_t value) {
  if (value > kMaxValue || len < 0 || len > 8 * key_bytes_) return false;
  Route r{};
  std::memcpy(r.prefix.data(), prefix, size_t(key_bytes_));
  mask_prefix(r.prefix.data(), key_bytes_, len);
  r.len = uint8_t(len);
  r.value = value;
  if (key_bytes_ == 16) return v6_.insert(r.prefix.data(), len, value);
  image_ = Image::kTrie;  // an image is stale until the next compile()
  if (!insert_masked(r.prefix.data(), len, value)) return false;
  if (!width_.empty()) {
    const uint32_t c = uint32_t(r.prefix[0]) << 8 | r.prefix[1];
    if (len > 16 + width_[c]) {
      image_entries_ += (size_t(1) << (len - 16)) - (width_[c] ? size_t(1) << width_[c] : 0);
      width_[c] = uint8_t(len - 16);
    }
    image_values_ok_ &= value <= LpmDir16::kMaxValue;
  }
  if (!auto_widen_) return true;
  routes_.push_back(r);
  if (image_fits() || groups() <= kWidenAfterGroups) return true;
  // Rebuild with a 24-bit root: replaying in insertion order keeps "the last insert wins".
  auto_widen_ = false;
  init_root(24);
  for (const Route& x : routes_)
    if (!insert_masked(x.prefix.data(), x.len, x.value)) return false;
  std::vector<Route>().swap(routes_);
  return true;
}

bool Lpm::insert_masked(const uint8_t* key, int len, uint32_t value) {
  const uint32_t entry = kValid | uint32_t(len) << 22 | value;
  int64_t base = -1;  // the table we are in
  uint32_t index = root_index(key);
  int stride = stride_, consumed = stride_, pos = stride_ / 8;
  while (len > consumed) {
    uint32_t e = at(base, index);
    if (!(e & kExt)) {  // refine: a child group holding the old entry everywhere
      size_t g = groups();
      if (g > kValMask) return false;
      // The first group maps room for 256 KiB of them: one 2 MiB page, faulted in once,
      // instead of growing through 4 KiB pages (each doubling populated, then all copied).
      if (g == 0) groups_.reserve_for(kGroupsFirst);
      groups_.resize(groups_.size() + 256, e);
      at(base, index) = kExt | uint32_t(g);
      e = at(base, index);
    }
    base = int64_t(e & kValMask);
    index = key[pos++];
    stride = 8;
    consumed += 8;
  }
  // `len` ends inside this level: expand it over 2^(consumed - len) entries.
  uint32_t span = 1u << (consumed - len);
  uint32_t first = index & ~(span - 1) & ((1u << stride) - 1);
  fill(base, first, span, entry, len);
  return true;
}

// One level at a time for all keys: issue every key's load (prefetch) before using any, so the
// misses overlap instead of each waiting for the previous one. (Measured on this machine: a
// branch-free step of every lane per level, or prefetch-then-lookup() per key, were slower.)
void Lpm::lookup_chunk(const uint8_t* const* keys, uint32_t* out, size_t n) const {
  const uint32_t* root = root_.data();
  const uint32_t* groups = groups_.data();
  uint32_t idx[kMaxBurst];
  for (size_t i = 0; i < n; ++i) {
    idx[i] = root_index(keys[i]);
    prefetch_line(root + idx[i]);
  }
  uint32_t ext = 0;  // bit i: key i's entry is a child group (out[i] holds it until resolved)
  for (size_t i = 0; i < n; ++i) {
    const uint32_t e = root[idx[i]];
    const uint32_t x = e >> 30 & 1;
    ext |= x << i;
    out[i] = x ? e : answer(e);
  }
  for (int pos = stride_ / 8; ext; ++pos) {
    for (uint32_t m = ext; m; m &= m - 1) {
      const int i = __builtin_ctz(m);
      idx[i] = (out[i] & kValMask) << 8 | keys[i][pos];
      prefetch_line(groups + idx[i]);
    }
    uint32_t next = 0;
    for (uint32_t m = ext; m; m &= m - 1) {
      const int i = __builtin_ctz(m);
      const uint32_t e = groups[idx[i]];
      const uint32_t x = e >> 30 & 1;
      next |= x << i;
      out[i] = x ? e : answer(e);
    }
    ext = next;
  }
}

void Lpm::lookup_burst(const uint8_t* const* keys, uint32_t* out, size_t n) const {
  if (key_bytes_ == 16) return v6_.lookup_burst(keys, out, n);
  if (image_ == Image::kDir16) {
    for (size_t i = 0; i < n; ++i) out[i] = lookup(keys[i]);
    return;
  }
  if (image_ == Image::kRuns) {  // host-order copies through the staged image walk
    uint32_t addrs[kMaxBurst];
    for (size_t i = 0; i < n; i += kMaxBurst) {
      const size_t m = n - i < kMaxBurst ? n - i : kMaxBurst;
      for (size_t j = 0; j < m; ++j) {
        uint32_t w;
        std::memcpy(&w, keys[i + j], 4);
        addrs[j] = __builtin_bswap32(w);
      }
      runs_.lookup_burst(addrs, out + i, m);
    }
    return;
  }
  // Under a 24-bit root nearly every key is one load with a predictable branch: a plain loop
  // lets the out-of-order core overlap the misses and measured faster than staged prefetching
  // (same run: 3.6 vs 4.9-5.7 ns/lookup at 100k routes, 2.1-3.0 vs 2.2-2.6 at 1k). Deeper
  // tries (16-bit root) walk unpredictable dependent chains: there the stages win.
  if (stride_ == 24) {
    for (size_t i = 0; i < n; ++i) out[i] = lookup(keys[i]);
    return;
  }
  for (size_t i = 0; i < n; i += kMaxBurst)
    lookup_chunk(keys + i, out + i, n - i < kMaxBurst ? n - i : kMaxBurst);
}

void Lpm::lookup_burst_v4(const uint32_t* addrs, uint32_t* out, size_t n) const {
  if (image_ == Image::kDir16) return dir16_.lookup_burst(addrs, out, n);
  if (image_ == Image::kRuns) return runs_.lookup_burst(addrs, out, n);
  if (stride_ != 24) {  // 16-bit root: network-order copies through the staged walk
    uint8_t be[kMaxBurst][4];
    const uint8_t* keys[kMaxBurst];
    for (size_t i = 0; i < n; i += kMaxBurst) {
      const size_t m = n - i < kMaxBurst ? n - i : kMaxBurst;
      for (size_t j = 0; j < m; ++j) {
        const uint32_t w = __builtin_bswap32(addrs[i + j]);
        std::memcpy(be[j], &w, 4);
        keys[j] = be[j];
      }
      lookup_chunk(keys, out + i, m);
    }
    return;
  }
  const uint32_t* root = root_.data();
  const uint32_t* groups = groups_.data();
  for (size_t i = 0; i < n; ++i) {
    const uint32_t a = addrs[i];
    uint32_t e = root[a >> 8];
    if (e & kExt) e = groups[size_t(e & kValMask) << 8 | (a & 0xFF)];
    out[i] = answer(e);
  }
}

}  // namespace nfpark::nf
