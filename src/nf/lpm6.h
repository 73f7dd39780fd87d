// Lpm6: the IPv6 trie behind Lpm (lpm.h) — a 16-bit root and 8-bit levels below it (16-8-...-8,
// as rte_lpm6), where each child node takes one of two forms, chosen by its contents:
//  - a run node: one cache line (64 B) holding up to kMaxRuns (12) runs of equal entries over
//    the node's 256 byte values. Bytes 0-15 are the runs' first byte values, sorted, right-
//    aligned and padded with zeros in front (run 0 starts at 0 too); the entry of the run in lane
//    j is word j (j >= 4: the lanes fill words 0-3). The run holding byte b is the last lane <= b:
//    one SSE2 compare of the 16 lanes, its mask's highest bit is the word to read. No count or
//    tag is stored: the padding lanes are <= every byte.
//  - a dense node (1 KiB): the 256 entries, when more than 12 runs are needed.
// An entry is a 32-bit word: valid bit, "extended" bit (a child node); a route's entry holds the
// length of the prefix that wrote it (0..128) and a 22-bit value; a child's, the dense bit and
// the node's index in 64-byte units (29 bits).
//
// Why: with a 1 KiB group per child, nearly every /48 made 2-3 groups of its own (peers_lib_bench's
// 1k routes: 2,514 groups, 2.5 MiB the kernel zeroed and the build wrote); a route's own nodes
// hold 2-3 runs (the inherited answer, the route or its child, the inherited answer), so they are
// run nodes of 64 B: a 1k-route table is ~0.2 MiB, a 20k one ~3 MiB (was 66). A lookup reads as
// many nodes as before (one line each), and the smaller table misses less in cache.
//
// Theory of operation. Inserting a prefix of length `len` writes every entry it covers at the
// level where `len` ends, except entries written by a longer prefix (controlled prefix expansion,
// as Lpm's IPv4 trie); an entry refined further becomes a child node holding the old entry
// everywhere (a run node of one run). A run node is edited as its decoded runs (split at the
// edited range's ends, the covered runs rewritten, equal neighbours merged); one that would need
// more than 12 runs becomes a dense node (its run node's line is reused by the next new node).
// The result is independent of insertion order; equal prefixes: the last insert wins. No deletion.
// Lookup: root entry, then one node a byte until an entry that is not a child: ≤ 15 nodes.
// lookup_burst() walks up to 32 keys a level at a time, prefetching every key's line of the level
// before reading any, so the misses of a burst overlap.
// Memory: root 256 KiB on 4 KiB pages backed only where written (one page per /16 routed), nodes
// in one HugeArray grown from 256 KiB at once (one 2 MiB page).
#pragma once
#include <emmintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/hot_path.h"
#include "nf/huge_array.h"

namespace nfpark::nf {

class Lpm6 {
 public:
  static constexpr uint32_t kNoRoute = ~0u;
  static constexpr uint32_t kMaxValue = (1u << 22) - 1;
  static constexpr size_t kMaxBurst = 32;
  static constexpr int kMaxRuns = 12;

  // Maps the root (nothing backed until written). An Lpm6 is unusable before init().
  void init();
  // Inserts prefix (16 bytes, network order, bits past len zero). False if len is out of range or
  // the value above kMaxValue.
  bool insert(const uint8_t* prefix, int len, uint32_t value);
  NFPARK_HOT_INLINE uint32_t lookup(const uint8_t* key) const {
    uint32_t e = root_[root_index(key)];
    const uint32_t* nodes = nodes_.data();
    for (const uint8_t* k = key + 2;; ++k) {  // dense nodes: one load a level
      while (e & kExt) e = nodes[size_t(e & kRefMask) * kUnit + *k++];
      if ((e & (kValid | kRun)) != kRun) return answer(e);
      const uint32_t* n = nodes + size_t(e & kRefMask) * kUnit;
      e = n[run_slot(n, *k)];
    }
  }
  // out[i] = lookup(keys[i]) for i < n (any n; walked 32 at a time with prefetches).
  void lookup_burst(const uint8_t* const* keys, uint32_t* out, size_t n) const;
  size_t run_nodes() const { return run_nodes_; }
  size_t dense_nodes() const { return dense_nodes_; }
  size_t node_bytes() const { return nodes_.size() * sizeof(uint32_t); }  // in use or free
  size_t memory_bytes() const {
    return root_.mapped_bytes() + nodes_.mapped_bytes() + free_.capacity() * sizeof(uint32_t);
  }

 private:
  // A child entry has no valid bit and kExt (a dense node) or kRun (a run node); a route's entry
  // has the valid bit (kRun is then a bit of its length), "no route" is 0.
  static constexpr uint32_t kValid = 1u << 31, kExt = 1u << 30, kRun = 1u << 29;
  static constexpr uint32_t kRefMask = kRun - 1, kValMask = kMaxValue;
  static bool child(uint32_t e) { return !(e & kValid) && (e & (kExt | kRun)); }
  // Nodes indexed by key bytes 2 and 3 (the /17-/32 part, shared by many routes in a BGP-like
  // table) are dense from the start: one load a level where most walks pass, and no runs to
  // edit route after route. Deeper nodes start as run nodes.
  static constexpr int kDenseTo = 3;
  static constexpr size_t kUnit = 16;  // entries in 64 B: a run node; a dense node is 16 units
  // The first 16 bits. One 4-byte load: GCC made the 2-byte one a 16-bit movbe, which merges
  // into the register's old value (the previous lookup's) and serialized lookups one by one.
  static uint32_t root_index(const uint8_t* key) {
    uint32_t w;
    std::memcpy(&w, key, 4);
    return __builtin_bswap32(w) >> 16;
  }
  static uint32_t answer(uint32_t e) { return (e & kValid) ? (e & kValMask) : kNoRoute; }
  static int depth(uint32_t e) { return int(e >> 22 & 0xFF); }
  // The word of run node n holding byte b's entry: the last lane whose run starts at or before b
  // (the lanes are sorted, so those lanes are a prefix of the mask).
  static uint32_t run_slot(const uint32_t* n, uint8_t b) {
    const __m128i lanes = _mm_load_si128(reinterpret_cast<const __m128i*>(n));
    const __m128i le = _mm_cmpeq_epi8(_mm_min_epu8(lanes, _mm_set1_epi8(char(b))), lanes);
    return 31u - uint32_t(__builtin_clz(uint32_t(_mm_movemask_epi8(le))));
  }
  // The entry for byte b in the child node of entry e.
  static uint32_t step(const uint32_t* nodes, uint32_t e, uint8_t b) {
    const uint32_t* n = nodes + size_t(e & kRefMask) * kUnit;
    return (e & kExt) ? n[b] : n[run_slot(n, b)];
  }

  struct Runs {  // a run node decoded: run j covers [start[j], start[j + 1]) (the last to 255)
    int k = 0;
    uint8_t start[kMaxRuns + 2];
    uint32_t e[kMaxRuns + 2];
  };
  // Where the entry pointing at a node lives: root_[i] or nodes_[i].
  struct Loc {
    bool root;
    size_t i;
  };
  uint32_t& word(Loc l) { return l.root ? root_[l.i] : nodes_[l.i]; }
  uint32_t* node(uint32_t e) { return &nodes_[size_t(e & kRefMask) * kUnit]; }
  // The location of byte b's entry in the child node of e.
  Loc slot_of(uint32_t e, uint8_t b);
  // A new run node of one run (entry `fill`); returns its child entry.
  uint32_t new_node(uint32_t fill, bool dense);
  // Applies f to the entries of bytes [lo, hi] of e's node; the node becomes dense if its runs
  // overflow (then `at`, the entry pointing at it, is rewritten). Returns the (new) child entry.
  template <class F>
  uint32_t edit(Loc at, uint32_t e, int lo, int hi, F f);
  // Prefix `entry` (of length len) over an existing entry x: a child node is filled throughout.
  uint32_t cover(uint32_t x, uint32_t entry, int len);
  void fill_all(uint32_t e, uint32_t entry, int len);
  void lookup_chunk(const uint8_t* const* keys, uint32_t* out, size_t n) const;

  HugeArray<uint32_t> root_;
  HugeArray<uint32_t> nodes_;
  std::vector<uint32_t> free_;  // run nodes' units left by nodes that became dense
  size_t run_nodes_ = 0, dense_nodes_ = 0;
};

}  // namespace nfpark::nf
