// LpmDir16: the lookup image of a small IPv4 route table — a 16-bit root and, for each /16 that
// holds longer prefixes, one group just wide enough for the longest of them (variable-stride
// controlled prefix expansion, Srinivasan & Varghese 1999; the 16-bit direct table as in DXR,
// Zec et al. CCR 2012, and Poptrie, Asai & Ohara SIGCOMM 2015). Every lookup is two loads and
// no branch. Lpm::compile() builds it from Lpm's 16-8-8 trie when it fits in kMaxBytes.
//
// Why: a DIR-24-8 table (rte_lpm's layout; Lpm's 24-bit root) is 64 MiB whatever the route
// count. At 1k routes its ~10% of routes shorter than /16 spread the looked-up entries over tens
// of MiB, so lookups miss the cache and the TLB, and page placement decides the speed. The same
// 1k BGP-like routes here take ~1.7 MiB (half of it the few /16s holding a /25-/32, read rarely):
// the hot part stays in L2. A 16-8-8 walk with a branch per level mispredicts on half the
// addresses (those in a /17-/24), and a third level (prefixes past /24) behind a second load
// costs ~1 ns per lookup even when taken by 5% of them: here each /16 has one group, so a
// lookup is always root entry + group entry.
//
// Parameters: kMaxBytes (32 MiB: image memory at most; past it Lpm drops the image), values up
// to kMaxValue (15 bits: the router's next-hop indices). Memory: 256 KiB root + 64 KiB leaves +
// 2 B per group entry (2^(longest − 16) entries per /16 with prefixes past /16). Build: each entry
// written once from the trie's groups (runs copied, no lookup per entry; 16M at most), once,
// after the routes are in.
//
// Theory of operation. t_ holds 16-bit entries: [0, 32767) leaf slots (t_[v] = v), t_[32767] =
// 0xFFFF (no route; sign-extends to kNoRoute), then the groups. A root entry is off << 5 | shift
// with shift = 16 − the /16's group width s: the answer for address a is t_[off + ((a & 0xFFFF)
// >> shift)] — a leaf /16 (s = 0) has shift 16 and off = its value's leaf slot. Entry j of a
// group answers for the 2^(16−s) addresses from (c << 16 | j << (16 − s)): no prefix in the /16
// is longer than 16 + s, so they all have the trie's answer for the first of them. The image is
// a snapshot: Lpm stops reading it at its next insert (it was built per insert at first, but a
// short prefix over wide groups rewrote them all, and 3000 nested routes took seconds).
#pragma once
#include <cstddef>
#include <cstdint>

#include "nf/huge_array.h"

namespace nfpark::nf {

class LpmDir16 {
 public:
  static constexpr uint32_t kNoRoute = ~0u;
  static constexpr uint32_t kMaxValue = 0x7FFE;
  static constexpr size_t kMaxBytes = size_t(32) << 20;

  void clear() { root_.clear(), t_.clear(); }
  // The value for host-order address `a`, or kNoRoute.
  uint32_t lookup(uint32_t a) const {
    const uint32_t e = root_[a >> 16];
    return uint32_t(int32_t(int16_t(t_[(e >> 5) + ((a & 0xFFFF) >> (e & 31))])));
  }
  void lookup_burst(const uint32_t* addrs, uint32_t* out, size_t n) const {
    for (size_t i = 0; i < n; ++i) out[i] = lookup(addrs[i]);
  }
  // Builds the image of a trie: widths[c] = the group width of /16 number c (0..16: its longest
  // prefix − 16, or 0); leaf(c) = the answer (value or kNoRoute) of /16 number c when its width
  // is 0; group(c, s, out) writes the 2^s entries of c's group (s = widths[c] > 0): out[j] = the
  // answer for host-order address c << 16 | j << (16 − s), as its value or 0xFFFF for none, every
  // value at most kMaxValue (the caller checks). False (and an empty image) if it would pass
  // kMaxBytes or a leaf's value is above kMaxValue: then it must not answer. Each entry is
  // written once (no fill first): the group writer copies the trie's runs, it does not look up
  // each entry.
  template <class Leaf, class Group>
  bool build(const uint8_t* widths, const Leaf& leaf, const Group& group) {
    size_t entries = 0;
    for (uint32_t c = 0; c < 1u << 16; ++c)  // 2^w, 0 for w = 0 (no branch: vectorized)
      entries += (uint64_t(1) << widths[c]) - uint64_t(widths[c] == 0);
    if (bytes_for(entries) > kMaxBytes) return clear(), false;
    reset(entries);
    size_t off = kLeaves;
    for (uint32_t c = 0; c < 1u << 16; ++c) {
      const int s = widths[c];
      if (s == 0) {
        const uint32_t v = leaf(c);
        if (v != kNoRoute && v > kMaxValue) return clear(), false;
        root_[c] = (v == kNoRoute ? kNone : v) << 5 | 16;
        continue;
      }
      root_[c] = uint32_t(off) << 5 | uint32_t(16 - s);
      group(c, s, &t_[off]);
      off += size_t(1) << s;
    }
    return true;
  }
  // Image bytes for `entries` group entries in all.
  static size_t bytes_for(size_t entries) {
    return (size_t(1) << 16) * sizeof(uint32_t) + (kLeaves + entries) * sizeof(uint16_t);
  }
  // Group width (bits past /16) of /16 number c.
  int width(uint32_t c) const { return 16 - int(root_[c] & 31); }
  size_t memory_bytes() const { return root_.mapped_bytes() + t_.mapped_bytes(); }

 private:
  static constexpr uint32_t kLeaves = 32768, kNone = kLeaves - 1;
  void reset(size_t entries);  // an image of kLeaves + entries, leaf slots written
  HugeArray<uint32_t> root_;   // 2^16 entries: off << 5 | (16 - width)
  HugeArray<uint16_t> t_;      // leaf slots, then groups
};

}  // namespace nfpark::nf
