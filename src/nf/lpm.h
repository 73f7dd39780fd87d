// Lpm: longest-prefix match over IPv4 (4-byte) or IPv6 (16-byte) keys — a multibit trie with a
// 16- or 24-bit first stride and 8-bit strides below (DIR-16-8-8 or DIR-24-8 for IPv4), built by
// controlled prefix expansion (Srinivasan & Varghese 1999; DIR-24-8 is Gupta, Lin & McKeown,
// INFOCOM'98, as in DPDK's rte_lpm). IPv4 tables in auto mode are looked up in a compiled image
// of the trie instead: small ones in LpmDir16 (lpm_dir16.h), larger ones in LpmRuns
// (lpm_runs.h). IPv6 tables are an Lpm6 (lpm6.h: a 16-bit root, dense nodes for the /17-/32
// bytes, then nodes of one cache line holding runs of equal entries over one or two key bytes);
// what follows about the root, child groups and lookup_burst is the IPv4 trie.
//
// Parameters: key_bytes (4 or 16) · first_stride: 16, 24 (IPv4 only) or 0 = auto (default).
// The layout is chosen by the table's shape as routes go in (the rule, IPv4):
//  - 16-bit root + LpmDir16 image (two loads per lookup, no branch), built by compile(), while
//    the image fits in LpmDir16::kMaxBytes (32 MiB, half a DIR-24 root) and every value fits in
//    15 bits. peers_lib_bench's BGP-like mix: image 1.7 MiB at 1k routes, ~31 MiB at 16k;
//    lookups 1.3-1.8 ns in bursts vs 3.1-3.4 ns for DIR-24-8 at 16k routes (same run).
//  - else the trie becomes DIR-24-8 (rebuilt from the kept routes) once it holds more than
//    kWidenAfterGroups child groups (64 KiB; ~100 routes longer than /16), and compile() builds
//    the LpmRuns image (18-6-8 strides, nodes holding only runs of equal answers, ranked by
//    popcount) when it is smaller than the trie: 4 MiB at peers_lib_bench's 100k routes vs the
//    trie's 69 MiB, 3.4-3.9 ns/lookup in bursts vs rte_lpm's 7.6-8.0 (same runs; DIR-24-8 ~7).
//  A first_stride of 16 keeps the 16-bit root (the LpmDir16 image while it fits, else the staged
//  walk); 24 is DIR-24-8 alone (no image).
//
// Theory of operation. The root has 2^stride entries, each child group 2^8. An entry is a 32-bit
// word: valid bit, "extended" bit (the value is a child group index), the length of the prefix
// that wrote it (0..128) and a 22-bit value. Inserting a prefix of length `len` writes every entry
// it covers at the level where `len` ends, except entries already written by a longer prefix; an
// entry that must be refined further becomes a child group initialised with its old contents.
// The result is independent of insertion order; equal prefixes: the last insert wins. The IPv4
// image is then updated for the entries the prefix covers (LpmDir16::update reads the trie).
// Lookup: with LpmDir16, root entry + group entry; with LpmRuns, root entry + node (+ a level-3
// node for the ~5% of addresses in a /24 holding a longer prefix); else one load per stride until a
// non-extended entry — IPv4 1..3 loads (16-8-8) or 1..2 (24-8). lookup_burst() walks
// 16-bit-root tries up to 32 keys a level at a time, prefetching every key's next entry
// before reading any of them, so the misses of a burst overlap; under a 24-bit root it is a plain
// loop (one load per key, overlapped by the out-of-order core; measured faster there, see
// lpm.cc). lookup_burst_v4() takes the IPv4 keys as a dense array of host-order words (the
// router's burst; rte_lpm_lookup_bulk's input): no pointer per key.
// Memory: root 256 KiB (16) or 64 MiB (24) + 1 KiB per child group, in HugeArray (2 MiB pages
// where transparent huge pages are enabled, which is what makes the 64 MiB root cheap to walk),
// + the image; every array of 256 KiB or more is mapped in whole 2 MiB pages (HugeArray: one
// fault per 2 MiB, ~20x cheaper than 4 KiB pages to back at build time); the first child group
// maps room for 256 KiB of them at once (one 2 MiB page).
// memory_bytes() counts what is mapped. In auto mode the routes are kept (24 B each) until the
// rebuild. No deletion (static config).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/hot_path.h"
#include "nf/huge_array.h"
#include "nf/lpm6.h"
#include "nf/lpm_dir16.h"
#include "nf/lpm_runs.h"

namespace nfpark::nf {

class Lpm {
 public:
  static constexpr uint32_t kNoRoute = ~0u;
  static constexpr uint32_t kMaxValue = (1u << 22) - 1;
  // Auto mode widens an IPv4 table to a 24-bit first stride past this many child groups.
  static constexpr size_t kWidenAfterGroups = 64;
  static constexpr size_t kMaxBurst = 32;

  explicit Lpm(int key_bytes, int first_stride = 0);  // key_bytes 4 or 16; stride 0, 16 or 24
  // Inserts prefix (network order, `key_bytes` long, bits past len ignored). False if value is
  // above kMaxValue, len is out of range or the child groups are exhausted.
  bool insert(const uint8_t* prefix, int len, uint32_t value);
  // One by one, tables on the LpmRuns image read their DIR-24-8 trie: one load, which the
  // out-of-order core overlaps across independent lookups better than the image's two dependent
  // ones (the image is for bursts, where its loads are prefetched a stage ahead).
  uint32_t lookup(const uint8_t* key) const {
    if (image_ == Image::kDir16) {
      uint32_t w;
      std::memcpy(&w, key, 4);
      return dir16_.lookup(__builtin_bswap32(w));
    }
    if (key_bytes_ == 16) [[unlikely]]
      return lookup_v6(key);
    uint32_t e = root_[root_index(key)];
    int pos = stride_ / 8;
    while (e & kExt) e = groups_[size_t(e & kValMask) << 8 | key[pos++]];
    return answer(e);
  }
  // out[i] = lookup(keys[i]) for i < n (any n; walked 32 at a time with prefetches).
  void lookup_burst(const uint8_t* const* keys, uint32_t* out, size_t n) const;
  // IPv4 tables: out[i] = the answer for host-order address addrs[i], i < n (rte_lpm's bulk
  // shape: a dense array, no pointer into each header). Under a 24-bit root one dependent load
  // pair per address at most, no byte swap; 16-bit roots go through lookup_burst.
  void lookup_burst_v4(const uint32_t* addrs, uint32_t* out, size_t n) const;
  int key_bytes() const { return key_bytes_; }
  int first_stride() const { return stride_; }
  size_t groups() const { return groups_.size() / 256; }
  // Builds the IPv4 lookup image (LpmDir16) when the table's shape calls for it (see above);
  // true if lookups now read it. Call after the routes are in: an insert makes lookups walk the
  // trie again (same answers, slower) until the next compile().
  bool compile();
  bool dir16() const { return image_ == Image::kDir16; }  // lookups read the LpmDir16 image
  // IPv6 one by one, out of line: inlined, Lpm6's walk changed the register allocation of every
  // IPv4 lookup loop (the 100k-route one-by-one lookups ran 3.2 -> 3.8-6.5 ns).
  [[gnu::noinline]] uint32_t lookup_v6(const uint8_t* key) const { return v6_.lookup(key); }
  bool runs() const { return image_ == Image::kRuns; }  // lookups read the LpmRuns image
  size_t memory_bytes() const {
    return root_.mapped_bytes() + groups_.mapped_bytes() + routes_.capacity() * sizeof(Route) +
           width_.capacity() + dir16_.memory_bytes() + runs_.memory_bytes() +
           (key_bytes_ == 16 ? v6_.memory_bytes() : 0);
  }

 private:
  static constexpr uint32_t kValid = 1u << 31, kExt = 1u << 30, kValMask = kMaxValue;
  struct Route {
    std::array<uint8_t, 16> prefix;
    uint8_t len;
    uint32_t value;
  };
  static constexpr size_t kGroupsFirst = size_t(1) << 16;  // entries (see insert_masked)
  static uint32_t depth(uint32_t e) { return (e >> 22) & 0xFF; }
  uint32_t root_index(const uint8_t* key) const {  // the first `stride_` bits (keys are >= 4 B)
    uint32_t w;
    std::memcpy(&w, key, 4);
    return __builtin_bswap32(w) >> (32 - stride_);
  }
  static uint32_t answer(uint32_t e) { return (e & kValid) ? (e & kValMask) : kNoRoute; }
  void init_root(int stride);
  bool insert_masked(const uint8_t* key, int len, uint32_t value);
  // The trie's answer for host-order address a (IPv4).
  uint32_t trie_v4(uint32_t a) const;
  // The trie's answer for /24 number c (IPv4, host order); `deeper` instead if a prefix longer
  // than /24 lies in it.
  uint32_t slot24(uint32_t c, bool& deeper) const;
  // Writes the 2^s LpmDir16 group entries of /16 number c from the trie (16-bit root).
  void dir16_group(uint32_t c, int s, uint16_t* out) const;
  void lookup_chunk(const uint8_t* const* keys, uint32_t* out, size_t n) const;
  // Writes `entry` over [first, first + n) of the table starting at `base` (root if base < 0,
  // else child group `base`), descending into child groups.
  void fill(int64_t base, uint32_t first, uint32_t n, uint32_t entry, int len);
  uint32_t& at(int64_t base, uint32_t i) {
    return base < 0 ? root_[i] : groups_[size_t(base) << 8 | i];
  }

  enum class Image { kTrie, kDir16, kRuns };
  int key_bytes_;
  int stride_ = 16;
  bool auto_;        // IPv4, first_stride 0: the layout follows the table's shape
  bool auto_widen_;  // auto, still on a 16-bit root
  HugeArray<uint32_t> root_;
  HugeArray<uint32_t> groups_;
  std::vector<Route> routes_;   // auto mode, until widened: replayed into the 24-bit table
  LpmDir16 dir16_;              // IPv4 under a 16-bit root: the small tables' image
  LpmRuns runs_;                // IPv4, auto: the image of tables LpmDir16 cannot hold
  Lpm6 v6_;                     // IPv6: the trie of run and dense nodes (root_, groups_ unused)
  Image image_ = Image::kTrie;  // what lookups read: an image is current (compiled since the
                                // last insert) or the trie
  // IPv4 under a 16-bit root: each /16's longest prefix − 16 (0 if none past /16), the image's
  // group entries in all, and whether every value fits the image's 15 bits.
  std::vector<uint8_t> width_;
  size_t image_entries_ = 0;
  bool image_values_ok_ = true;
  bool image_fits() const {
    return image_values_ok_ && LpmDir16::bytes_for(image_entries_) <= LpmDir16::kMaxBytes;
  }
};

}  // namespace nfpark::nf
