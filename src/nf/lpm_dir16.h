// LpmDir16: the lookup image of a small IPv4 route table — a 16-bit root and, for each /16 that
// holds longer prefixes, one group just wide enough for the longest of them (variable-stride
// controlled prefix expansion, Srinivasan & Varghese 1999; the 16-bit direct table as in DXR,
// Zec et al. CCR 2012, and Poptrie, Asai & Ohara SIGCOMM 2015). Every lookup is two loads and
// no branch. Lpm builds it next to its 16-8-8 trie while the image stays under kMaxBytes.
//
// Why: a DIR-24-8 table (rte_lpm's layout; Lpm's 24-bit root) is 64 MiB whatever the route
// count. At 1k routes its ~10% of routes shorter than /16 spread the looked-up entries over tens
// of MiB, so lookups miss the cache and the TLB, and page placement decides the speed. The same
// 1k BGP-like routes here take ~1.7 MiB (most of it the few /16s holding a /25-/32, read rarely):
// the hot part stays in L2. A 16-8-8 walk with a branch per level mispredicts on half the
// addresses (those in a /17-/24), and a third level (prefixes past /24) behind a second load
// costs ~1 ns per lookup even when taken by 5% of them: here each /16 has one group, so a
// lookup is always root entry + group entry.
//
// Parameters: kMaxBytes (16 MiB: image memory at most; past it Lpm drops the image), values up
// to kMaxValue (15 bits: the router's next-hop indices). Memory: 256 KiB root + 64 KiB leaves +
// 2 B per group entry (2^(longest − 16) entries per /16 with prefixes past /16), plus groups
// replaced when a /16 needed a wider one (at most as much again: widths double).
//
// Theory of operation. t_ holds 16-bit entries: [0, 32767) leaf slots (t_[v] = v), t_[32767] =
// 0xFFFF (no route; sign-extends to kNoRoute), then the groups. A root entry is off << 5 | shift
// with shift = 16 − the /16's group width s: the answer for address a is t_[off + ((a & 0xFFFF)
// >> shift)] — a leaf /16 (s = 0) has shift 16 and off = its value's leaf slot. The image is
// derived from the trie (a lookup there per entry written): after an insert, update() rewrites
// only the entries the prefix covers, first moving a /16 to a wider group if the prefix is
// longer than its group allows, so the image always answers what the trie answers.
#pragma once
#include <cstddef>
#include <cstdint>

#include "nf/huge_array.h"

namespace nfpark::nf {

class LpmDir16 {
 public:
  static constexpr uint32_t kNoRoute = ~0u;
  static constexpr uint32_t kMaxValue = 0x7FFE;
  static constexpr size_t kMaxBytes = size_t(16) << 20;

  // An empty image: every /16 answers kNoRoute.
  void reset();
  void clear() { root_.clear(), t_.clear(); }
  // The value for host-order address `a`, or kNoRoute.
  uint32_t lookup(uint32_t a) const {
    const uint32_t e = root_[a >> 16];
    return uint32_t(int32_t(int16_t(t_[(e >> 5) + ((a & 0xFFFF) >> (e & 31))])));
  }
  void lookup_burst(const uint32_t* addrs, uint32_t* out, size_t n) const {
    for (size_t i = 0; i < n; ++i) out[i] = lookup(addrs[i]);
  }
  // After prefix (host order) / len went into the trie that `look` walks (host-order address ->
  // value or kNoRoute): rewrites the entries it covers. False if the image would pass kMaxBytes
  // or a value is above kMaxValue: then it no longer answers and must be dropped.
  template <class Look>
  bool update(uint32_t prefix, int len, const Look& look) {
    const uint32_t c = prefix >> 16;
    if (len <= 16) {
      for (uint32_t k = 0; k < 1u << (16 - len); ++k)
        if (!derive(c + k, 0, 1u << width(c + k), look)) return false;
      return true;
    }
    if (width(c) < len - 16) {  // a new or wider group: every entry
      if (!widen(c, len - 16)) return false;
      return derive(c, 0, 1u << (len - 16), look);
    }
    const int s = width(c);
    return derive(c, (prefix & 0xFFFF) >> (16 - s), 1u << (s - (len - 16)), look);
  }
  // Group width (bits past /16) of /16 number c.
  int width(uint32_t c) const { return 16 - int(root_[c] & 31); }
  size_t memory_bytes() const { return root_.mapped_bytes() + t_.mapped_bytes(); }

 private:
  static constexpr uint32_t kLeaves = 32768, kNone = kLeaves - 1;
  // Writes entries [j0, j0 + n) of /16 c's group (its root entry if width 0) from the trie.
  template <class Look>
  bool derive(uint32_t c, uint32_t j0, uint32_t n, const Look& look) {
    const int s = width(c);
    for (uint32_t j = j0; j < j0 + n; ++j) {
      const uint32_t v = look(c << 16 | (s ? j << (16 - s) : 0));
      if (v != kNoRoute && v > kMaxValue) return false;
      const uint32_t slot = v == kNoRoute ? kNone : v;
      if (s == 0)
        root_[c] = slot << 5 | 16;
      else
        t_[(root_[c] >> 5) + j] = uint16_t(t_[slot]);
    }
    return true;
  }
  // Gives /16 c a new group of 2^s entries (filled by the caller's derive).
  bool widen(uint32_t c, int s);

  HugeArray<uint32_t> root_;  // 2^16 entries: off << 5 | (16 - width)
  HugeArray<uint16_t> t_;     // leaf slots, then groups
};

}  // namespace nfpark::nf
