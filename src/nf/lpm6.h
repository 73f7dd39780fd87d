// Lpm6: the IPv6 trie behind Lpm (lpm.h) — a 16-bit root, then nodes indexed by one key byte
// (or two), built by controlled prefix expansion as rte_lpm6's 16-8-...-8 trie, but a child node
// takes one of three forms:
//  - dense (1 KiB): the 256 entries of one key byte. The nodes of key bytes 2 and 3 (the
//    /17-/32 part, shared by many routes) are dense from the start; deeper ones when they would
//    need more than 12 runs.
//  - a run node of one key byte: one cache line (64 B) holding up to 12 runs of equal entries
//    over the byte's 256 values. Bytes 0-15 are the runs' first values, sorted, right-aligned and
//    padded with zeros in front (run 0 starts at 0 too); the entry of the run in lane j is word j
//    (j >= 4: the lanes fill words 0-3). The run holding byte b is the last lane <= b: one SIMD
//    compare of the 16 lanes (SSE4.1; a counting loop without it), the mask's highest bit is the
//    word to read. No count or tag is stored: the padding lanes are <= every byte.
//  - a run node of two key bytes ("wide"): the same over 65,536 values, 8 lanes of 16 bits and
//    up to 8 runs (entry of lane j in word 8 + j). Every node made below the dense levels starts
//    wide (but one of the last key byte); one that would need a ninth run is rebuilt as a node of
//    its first byte over run nodes of its second (split_wide) and the edit goes on there.
// An entry is a 32-bit word: a route's has the valid bit, the length of the prefix that wrote it
// (0..128) and a 22-bit value; a child's has no valid bit, one of kExt (dense) / kRun (+ kWide)
// and the node's index in 64-byte units (28 bits); "no route" is 0.
//
// Why: with a 1 KiB group per key byte, nearly every /48 made 2-3 groups of its own
// (peers_lib_bench's 1k routes: 2,514 groups, 2.5 MiB the kernel zeroed and the build wrote).
// A route's own nodes hold 2-3 runs (the inherited answer, the route or its child, the inherited
// answer): as wide run nodes a /48 under its /32 is one 64-byte node, and its walk one hop
// shorter (root, /24, /32, the node of bytes 4-5). 1k routes: 255 dense nodes and ~1,300 run
// nodes (~0.3 MiB written, was 2.5); 20k: ~2 MiB (was 66).
//
// Theory of operation. Inserting a prefix of length `len` writes every entry it covers in the
// node where `len` ends, except entries written by a longer prefix; an entry refined further
// becomes a child node holding the old entry everywhere (one run). A run node is edited as its
// decoded runs (split at the edited range's ends, the covered runs rewritten, equal neighbours
// merged). The result is independent of insertion order; equal prefixes: the last insert wins.
// Units of rebuilt run nodes are reused. No deletion.
// Lookup: root entry, then a node (one or two key bytes) at a time until an entry that is not a
// child. lookup_burst() is a plain loop: with the table this small the out-of-order core
// overlaps the walks of consecutive keys better than a staged, prefetching walk as Lpm's IPv4
// trie's (measured with run nodes of one byte only, 1k routes: 14.3 vs 16.5-17 ns per key; 20k:
// level).
// Memory: root 256 KiB on 4 KiB pages backed only where written (one page per /16 routed), nodes
// in one HugeArray mapped from 256 KiB at once (one 2 MiB page: 4 KiB pages populated as the
// array grows made the 1k-route build twice as slow).
#pragma once
#if defined(__SSE4_1__)
#include <smmintrin.h>  // _mm_min_epu16
#endif

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
  static constexpr int kMaxRuns = 12;     // in a run node of one key byte
  static constexpr int kMaxWideRuns = 8;  // in a run node of two key bytes

  // Maps the root (nothing backed until written). An Lpm6 is unusable before init().
  void init();
  // Inserts prefix (16 bytes, network order, bits past len zero). False if len is out of range or
  // the value above kMaxValue; std::bad_alloc when no memory is left for a node.
  bool insert(const uint8_t* prefix, int len, uint32_t value);
  NFPARK_HOT_INLINE uint32_t lookup(const uint8_t* key) const {
    uint32_t e = root_[root_index(key)];
    const uint32_t* nodes = nodes_.data();
    for (const uint8_t* k = key + 2;;) {
      while (e & kExt) e = nodes[size_t(e & kRefMask) * kUnit + *k++];  // dense: one load
      if ((e & (kValid | kRun)) != kRun) return answer(e);
      const uint32_t* n = nodes + size_t(e & kRefMask) * kUnit;
      if (e & kWide) {
        e = n[wide_slot(n, uint16_t(k[0] << 8 | k[1]))];
        k += 2;
      } else {
        e = n[run_slot(n, *k++)];
      }
    }
  }
  // out[i] = lookup(keys[i]) for i < n: a plain loop (the out-of-order core overlaps the
  // walks; staged prefetching as Lpm's IPv4 trie does measured slower here, see lpm6.cc).
  void lookup_burst(const uint8_t* const* keys, uint32_t* out, size_t n) const {
    for (size_t i = 0; i < n; ++i) out[i] = lookup(keys[i]);
  }
  size_t run_nodes() const { return run_nodes_; }  // of one key byte or two
  size_t wide_nodes() const { return wide_nodes_; }
  size_t dense_nodes() const { return dense_nodes_; }
  size_t node_bytes() const { return nodes_.size() * sizeof(uint32_t); }  // in use or free
  size_t memory_bytes() const {
    return root_.mapped_bytes() + nodes_.mapped_bytes() + free_.capacity() * sizeof(uint32_t);
  }

 private:
  // A child entry has no valid bit and kExt (a dense node) or kRun (a run node; with kWide, of
  // two key bytes); a route's entry has the valid bit (kRun, kWide are then bits of its
  // length), "no route" is 0.
  static constexpr uint32_t kValid = 1u << 31, kExt = 1u << 30, kRun = 1u << 29;
  static constexpr uint32_t kWide = 1u << 28, kRefMask = kWide - 1, kValMask = kMaxValue;
  static constexpr uint32_t kRetry = 0;  // edit(): the node was rebuilt, edit again
  static bool child(uint32_t e) { return !(e & kValid) && (e & (kExt | kRun)); }
  static bool wide(uint32_t e) { return child(e) && (e & kRun) && (e & kWide); }
  // Nodes indexed by key bytes 2 and 3 (the /17-/32 part, shared by many routes in a BGP-like
  // table) are dense from the start: one load a level where most walks pass, and no runs to
  // edit route after route. Deeper nodes start as run nodes of two key bytes (one for the last).
  static constexpr int kDenseTo = 3;
  static constexpr size_t kUnit = 16;  // entries in 64 B: a run node; a dense node is 16 units
  // The first 16 bits. One 4-byte load: a 2-byte one became a 16-bit movbe, which merges into
  // the register's old value (the previous lookup's) and chained lookups one by one.
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
#if defined(__SSE4_1__)
    const __m128i lanes = _mm_load_si128(reinterpret_cast<const __m128i*>(n));
    const __m128i le = _mm_cmpeq_epi8(_mm_min_epu8(lanes, _mm_set1_epi8(char(b))), lanes);
    return 31u - uint32_t(__builtin_clz(uint32_t(_mm_movemask_epi8(le))));
#else  // lanes <= b, counted: the last of them is their count - 1
    const uint8_t* l = reinterpret_cast<const uint8_t*>(n);
    uint32_t c = 0;
    for (int i = 0; i < 16; ++i) c += l[i] <= b;
    return c - 1;
#endif
  }
  // The same for a run node of two key bytes: 8 lanes of 16 bits, lane j's entry in word 8 + j.
  static uint32_t wide_slot(const uint32_t* n, uint16_t v) {
#if defined(__SSE4_1__)
    const __m128i lanes = _mm_load_si128(reinterpret_cast<const __m128i*>(n));
    const __m128i le = _mm_cmpeq_epi16(_mm_min_epu16(lanes, _mm_set1_epi16(short(v))), lanes);
    return 8u + ((31u - uint32_t(__builtin_clz(uint32_t(_mm_movemask_epi8(le))))) >> 1);
#else
    uint16_t l[8];
    std::memcpy(l, n, 16);
    uint32_t c = 0;
    for (int i = 0; i < 8; ++i) c += l[i] <= v;
    return 8u + c - 1;
#endif
  }

  struct Runs {  // a run node decoded: run j covers [start[j], start[j + 1]) (the last to the end)
    int k = 0;
    uint16_t start[kMaxRuns + 2];
    uint32_t e[kMaxRuns + 2];
  };
  // Where the entry pointing at a node lives: root_[i] or nodes_[i].
  struct Loc {
    bool root;
    size_t i;
  };
  uint32_t& word(Loc l) {
    return l.root ? root_[l.i] : nodes_[l.i];
  }
  uint32_t* node(uint32_t e) {
    return &nodes_[size_t(e & kRefMask) * kUnit];
  }
  // The key's value at `pos` for e's node: one byte, or two for a wide one.
  static uint32_t key_at(uint32_t e, const uint8_t* key, int pos) {
    return wide(e) ? uint32_t(key[pos] << 8 | key[pos + 1]) : key[pos];
  }
  // The word of e's node holding value v's entry.
  size_t slot(uint32_t e, uint32_t v) const;
  uint32_t unit();  // a free 64-byte unit
  // A new node holding `fill` everywhere (dense, or one run); returns its child entry.
  uint32_t new_node(uint32_t fill, bool dense, bool wide);
  void decode(uint32_t e, Runs& r);
  void encode(uint32_t e, const Runs& r);
  // Applies f to the entries of values [lo, hi] of e's node. A run node that overflows becomes
  // dense (one key byte: then `at`, the entry pointing at it, is rewritten and the new entry
  // returned) or is split into nodes of one byte (two key bytes: then kRetry is returned, f
  // not applied).
  template <class F>
  uint32_t edit(Loc at, uint32_t e, uint32_t lo, uint32_t hi, F f);
  // Rebuilds the wide node of e (runs r) as a node of its first byte over nodes of its second.
  uint32_t split_wide(Loc at, uint32_t e, const Runs& r);
  uint32_t compress(Loc at, const uint32_t* ent);  // a 256-entry table as a run or dense node
  // Prefix `entry` (of length len) over an existing entry x: a child node is filled throughout.
  uint32_t cover(uint32_t x, uint32_t entry, int len);
  void fill_all(uint32_t e, uint32_t entry, int len);

  HugeArray<uint32_t> root_;
  HugeArray<uint32_t> nodes_;
  std::vector<uint32_t> free_;  // units of run nodes rebuilt as other nodes
  size_t run_nodes_ = 0, wide_nodes_ = 0, dense_nodes_ = 0;
};

}  // namespace nfpark::nf
