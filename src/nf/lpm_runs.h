// LpmRuns: the lookup image of a large IPv4 route table — an 18-bit root of node offsets, a
// level of nodes over the 64 /24s of each /18 and one over the 256 addresses of each /24 holding
// a longer prefix, every node keeping only the runs of equal answers: a bitmap marks the entries
// where the answer changes and a popcount over it ranks an entry into a short array of run
// values (leaf compression by bitmap and popcount as in Poptrie, Asai & Ohara SIGCOMM 2015, with
// an 18-bit direct root as there; strides 18-6-8 here, no internal nodes below the root).
// Lpm::compile() builds it from the trie when the LpmDir16 image does not fit (auto mode only).
//
// Why: a DIR-24-8 table (rte_lpm's layout; Lpm's 24-bit root) is 64 MiB whatever the route
// count, and at 100k BGP-like routes the entries the addresses read are spread over all of it:
// a lookup misses to DRAM or to an L3 that every other table evicts. Here the same 100k routes
// take 4 MiB (a /18 holding a few /24s is one node of 8 bytes of bitmap and 4 per run, not 256
// bytes of root entries), so a burst's lookups are two mostly-cached loads each (a third for the
// ~5% of addresses in a /24 holding a longer prefix), prefetched a stage ahead.
//
// Parameters: build()'s max_bytes (Lpm passes its trie's own size: the image is kept only when
// it is smaller); values up to kMaxValue (30 bits). Memory: 1 MiB root + per /18 holding /24s of
// different answers a node of 8 B + 4 B per run, per /24 holding prefixes past /24 a node of
// 36 B + 4 B per run, one one-run node shared by the other /18s of each answer (a node of at
// most 64 B never straddles a cache line; all of it in one HugeArray, so on 2 MiB pages). Build:
// one trie read per /24 and per address of a /24 holding a longer prefix, once, after the routes
// are in (~0.1 s at 100k routes).
//
// Theory of operation. t_ holds the root then the nodes (offsets in 32-bit words). A level-2 node
// is a 64-bit bitmap (bit j: /24 j of the /18 starts a run; bit 0 always set) and the run
// values: the answer for j is run[popcount(bits 0..j) − 1]. A level-3 node is a 256-bit bitmap,
// one word of bases (byte k = the runs starting in 64-bit words 0..k-1) and the run values:
// run[base[j / 64] + popcount(bits 0..j of word j / 64) − 1]. A run value is an answer (value
// or kNoRoute) or, in level 2, kExt | the offset of the /24's level-3 node. A /18 with one answer
// everywhere points at the one-run node shared by every such /18 with that answer, so every
// lookup takes the level-2 step without a branch. The image is a snapshot: Lpm stops reading it
// at its next insert.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "nf/huge_array.h"

namespace nfpark::nf {

class LpmRuns {
 public:
  static constexpr uint32_t kNoRoute = ~0u;
  static constexpr uint32_t kMaxValue = (1u << 30) - 1;
  static constexpr size_t kMaxBurst = 32;

  void clear() { t_.clear(); }
  bool empty() const { return t_.size() == 0; }
  // The value for host-order address `a`, or kNoRoute.
  uint32_t lookup(uint32_t a) const {
    const uint32_t* t = t_.data();
    uint32_t v = step6(t + t[a >> 14], a >> 8);
    if (is_ext(v)) v = step8(t + (v & kOffMask), a & 0xFF);
    return v;
  }
  // out[i] = lookup(addrs[i]), i < n: 32 at a time, every key's node prefetched before any is
  // read, so the misses of a burst overlap.
  void lookup_burst(const uint32_t* addrs, uint32_t* out, size_t n) const;
  // Builds the image: slot(c, deeper) = the trie's answer for /24 number c (host order), setting
  // `deeper` instead when a prefix longer than /24 lies in it; look(a) = the trie's answer for
  // host-order address a. False (and an empty image) if it would pass max_bytes or a value is
  // above kMaxValue: then it must not answer.
  template <class Slot, class Look>
  bool build(const Slot& slot, const Look& look, size_t max_bytes);
  size_t memory_bytes() const { return t_.mapped_bytes(); }
  size_t nodes() const { return nodes_; }

 private:
  static constexpr uint32_t kExt = 1u << 30, kOffMask = kExt - 1;
  static constexpr uint32_t kHeader6 = 2, kHeader8 = 9;  // words: bitmap (+ bases)
  static constexpr size_t kRoot = size_t(1) << 18;
  static bool is_ext(uint32_t v) { return v >> 30 == 1; }
  // Entry j & 63 of a level-2 node (64 entries: /24s of a /18).
  static uint32_t step6(const uint32_t* node, uint32_t j) {
    uint64_t bits;
    std::memcpy(&bits, node, 8);
    return node[kHeader6 - 1 + uint32_t(__builtin_popcountll(bits << (~j & 63)))];
  }
  // Entry j of a level-3 node (256 entries: the addresses of a /24).
  static uint32_t step8(const uint32_t* node, uint32_t j) {
    uint64_t bits;
    std::memcpy(&bits, node + 2 * (j >> 6), 8);
    const uint32_t base = node[8] >> (8 * (j >> 6)) & 0xFF;
    return node[kHeader8 - 1 + base + uint32_t(__builtin_popcountll(bits << (~j & 63)))];
  }
  void chunk(const uint32_t* addrs, uint32_t* out, size_t n) const;
  // Appends the node of `n` (64 or 256) answers `v`; its offset, or kNoRoute if the pool would
  // pass `max` words.
  uint32_t emit(const uint32_t* v, uint32_t n, std::vector<uint32_t>& pool, size_t max);

  // The root (2^18 node offsets) then the nodes, in one array: on 2 MiB pages as a whole (the
  // 1 MiB root alone would be on 4 KiB ones).
  HugeArray<uint32_t> t_;
  size_t nodes_ = 0;
};

template <class Slot, class Look>
bool LpmRuns::build(const Slot& slot, const Look& look, size_t max_bytes) {
  clear();
  nodes_ = 0;
  const size_t max_words = max_bytes / sizeof(uint32_t);
  if (max_words <= kRoot) return false;
  std::vector<uint32_t> pool(kRoot);               // the root, then the nodes
  std::unordered_map<uint32_t, uint32_t> uniform;  // answer -> its shared one-run node
  uint32_t v2[64], v3[256];
  auto ok = [](uint32_t v) { return v == kNoRoute || v <= kMaxValue; };
  for (uint32_t c = 0; c < 1u << 18; ++c) {
    bool same = true;
    for (uint32_t j = 0; j < 64; ++j) {
      bool deeper = false;
      const uint32_t c24 = c << 6 | j;
      v2[j] = slot(c24, deeper);
      if (deeper) {
        for (uint32_t k = 0; k < 256; ++k)
          if (!ok(v3[k] = look(c24 << 8 | k))) return clear(), false;
        const uint32_t off = emit(v3, 256, pool, max_words);
        if (off == kNoRoute) return clear(), false;
        v2[j] = kExt | off;
      } else if (!ok(v2[j])) {
        return clear(), false;
      }
      same &= v2[j] == v2[0];
    }
    uint32_t off;
    if (same && !is_ext(v2[0])) {
      auto [it, fresh] = uniform.try_emplace(v2[0], 0);
      if (fresh) it->second = emit(v2, 64, pool, max_words);
      off = it->second;
    } else {
      off = emit(v2, 64, pool, max_words);
    }
    if (off == kNoRoute) return clear(), false;
    pool[c] = off;
  }
  t_.resize(pool.size(), 0);
  std::memcpy(t_.data(), pool.data(), pool.size() * sizeof(uint32_t));
  return true;
}

}  // namespace nfpark::nf
