// AclClassifier: first-match packet classification over AclRules with a HyperSplit-style
// decision tree (Qi et al., "Packet Classification Algorithms: From Theory to Practice",
// INFOCOM 2009) with HiCuts' equal-width cut nodes (Gupta & McKeown, Hot Interconnects 1999),
// one tree per rule group and address family.
//
// Rule groups (EffiCuts' separability): by whether the source and the destination are wide
// (< /8 IPv4, < /32 IPv6), so wildcards are not copied into every leaf of a tree of narrow
// rules; the narrow-source groups (destination narrow or wide) share one tree when it costs at
// most merge_space (3) x the memory of their two trees (built both ways, the shared one stopped
// early past that budget): cut by source, a wide destination is not copied, and a key walks one
// tree instead of two (the firewall's rules: always shared; 1k rules 388 vs 516 KiB).
//
// Theory of operation. A rule is a box in 7 dimensions of 64-bit ranges: src address high/low
// 64 bits, dst address high/low 64 bits, sport, dport, protocol (an IPv6 prefix is a range on
// the high half when len ≤ 64, else an exact high half and a range on the low half; IPv4 uses
// the high half only). A node covers a region; it splits one dimension at a threshold chosen to
// minimise the larger child's rule count (ties: fewer copies), rules that straddle the threshold
// going to both children. Rules are kept in priority order, and a rule that covers the node's
// whole region ends the list (the ones after it can never be the first match there). A node with
// ≤ leaf_size rules (default 16), or where no split makes progress, becomes a leaf. An IPv4
// leaf's rules are also laid out as 16-lane AclLeaf4 blocks, or one 4-lane AclLeaf4Small block
// when it has 1-4 rules (acl_leaf4.h; 3 cache lines instead of 11): the key is compared with all
// of them at once (AVX-512/AVX2) and the lowest matching lane is the first match; IPv6
// leaves are scanned rule by rule in priority order. Leaves with the same rule list share one
// copy. Where it pays, a node instead cuts one dimension into 2^k equal cells (k ≤ cut_bits,
// default 8; ≤ root_cut_bits = 12 at the root of a tree of ≤ root_cut_rules = 2048 rules, where
// it comes before the empty-space cut), each cell a child: a key's cell is (x - lo) >> shift, one
// hop for ~k splits. Differs from HiCuts: cuts and splits are mixed, a cut is taken only if its
// fullest cell holds ≤ 1/4 of the rules and its copies stay ≤ cut_space (4) x the rules; the
// dimension is the one with the fewest rules in a random key's cell. At 1k firewall rules every
// tree is then one cut deep (was ~7 split hops for a key inside the rules). Lookup: one key
// (classify) or a burst in stages (classify_burst, below). Options: leaf_size 16, max_depth 48,
// cut_bits 8, root_cut_bits 12, root_cut_rules 2048, cut_space 4, merge_space 3. The tree is
// immutable after build(); rebuild to change rules. Stats::memory_bytes: nodes, leaf rule
// lists, blocks and rule boxes.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "core/flow_key.h"
#include "nf/acl_leaf4.h"
#include "nf/acl_rule.h"

namespace nfpark::nf {

class AclClassifier {
 public:
  static constexpr uint32_t kNoMatch = ~0u;
  static constexpr int kDims = 7;
  using Point = std::array<uint64_t, kDims>;
  struct Options {
    uint32_t leaf_size = 16;         // rules per leaf before splitting (one AclLeaf4 block)
    uint32_t max_depth = 48;         // a node this deep becomes a leaf
    uint32_t cut_bits = 8;           // an equal-width cut has at most 2^cut_bits children (0: none)
    uint32_t root_cut_bits = 12;     // ... at a tree's root (empty cells cost a 16-byte node each)
    uint32_t root_cut_rules = 2048;  // ... if the tree has at most this many rules (else none)
    uint32_t cut_space = 4;          // ... and its children hold at most cut_space x its rules
    uint32_t merge_space = 3;  // narrow-source rules share a tree if <= this x the memory (0: no)
  };
  struct Stats {
    size_t trees = 0, nodes = 0, cuts = 0, leaves = 0, leaf_rule_refs = 0, max_depth = 0,
           memory_bytes = 0;
  };

  void build(std::span<const AclRule> rules, Options opt);
  void build(std::span<const AclRule> rules) { build(rules, Options{}); }
  // Index of the first rule matching `k` (an acl_key), or kNoMatch.
  uint32_t classify(const FlowKey& k) const {
    Point x;
    to_point(k, x);
    return classify(k.ip_version == 6 ? 1 : 0, x);
  }
  uint32_t classify(int family_tree, const Point& x) const {
    if (family_tree == 0) return classify4(x);
    uint32_t best = kNoMatch;
    for (const Tree& t : trees_[size_t(family_tree)]) {
      if (t.min_rule >= best) break;  // trees are in min_rule order
      uint32_t r = lookup(t, x);
      best = r < best ? r : best;
    }
    return best;
  }
  // out[i] = classify(keys[i]) for a burst of any length, IPv4 keys kBurst at a time in stages:
  // for each tree, every key takes one hop per round (a key on a leaf stays there, without a
  // branch) for as many rounds as the tree is deep, then only the keys whose leaf holds rules are
  // compared with them. No branch depends on a key, so nothing is mispredicted per key, and the
  // keys' loads overlap. Used when the IPv4 trees are at most kBurstDepth deep (the equal-width
  // cuts make them so at ~1k rules); deeper trees go key by key (the rounds would make every key
  // pay the deepest walk). IPv6 keys go key by key.
  void classify_burst(std::span<const FlowKey> keys, uint32_t* out) const;
  bool staged_burst() const { return !roots4_.empty(); }
  static constexpr size_t kBurst = 32;
  static constexpr uint32_t kBurstDepth = 4;
  static void to_point(const FlowKey& k, Point& x);
  const Stats& stats() const { return stats_; }
  // Work a lookup of `k` does: trees searched, node hops, leaf rules compared (for benches).
  void lookup_work(const FlowKey& k, uint32_t& trees, uint32_t& hops, uint32_t& scanned) const;

 private:
  struct Box {
    Point lo, hi;
  };
  struct Node {
    uint64_t value;  // split: go to child a + 1 when x[dim] >= value; cut: the region's low end;
                     // IPv4 leaf: first block (in leaf4s_ if it has 1-4 rules, else in leaf4_)
    uint32_t a;      // split, cut: first child; leaf: first entry in leaf_rules_
    uint32_t meta;   // split: dimension; cut: kCut | shift << 8 | dimension; leaf: kLeaf | rules
  };
  static constexpr uint32_t kLeaf = 1u << 31, kCut = 1u << 30;
  // The child of internal node `n` that holds key `x`: split, or cut child (x[dim] - lo) >> shift.
  template <class X>
  static const Node* child(const Node* nodes, const Node& n, const X& x) {
    const uint64_t v = x[n.meta & 7];
    const uint64_t split = v >= n.value, cut = (v - n.value) >> (n.meta >> 8 & 63);
    return nodes + n.a + ((n.meta & kCut) ? cut : split);
  }
  struct Tree {
    std::vector<Node> nodes;
    uint32_t min_rule = 0;  // the highest-priority rule in the tree
    uint32_t depth = 0;     // of its deepest leaf
  };
  // Where the leaf arrays stood, to roll a tree back (build only).
  struct Mark {
    size_t leaf_rules, leaf4, leaf4s;
    std::map<std::vector<uint32_t>, std::pair<uint32_t, uint64_t>> leaf_index;
    Stats stats;
  };
  struct Budget {  // a tree being built stops (over) past `bytes` since `base`
    const Mark* base = nullptr;
    size_t bytes = 0;
    bool over = false;
  };
  Mark mark() const;
  void rollback(const Mark& m);
  size_t bytes_since(const Mark& m, size_t nodes) const;
  Tree build_tree(std::vector<uint32_t> ids, const Box& region);
  void build_at(Tree& t, uint32_t idx, const Box& region, std::vector<uint32_t>& rules,
                uint32_t depth);
  void make_leaf(Tree& t, uint32_t idx, const std::vector<uint32_t>& rules, uint32_t depth);
  bool cut_empty_space(Tree& t, uint32_t idx, const Box& region, std::vector<uint32_t>& rules,
                       uint32_t depth);
  bool cut_equal(Tree& t, uint32_t idx, const Box& region, std::vector<uint32_t>& rules,
                 uint32_t depth);
  uint32_t lookup(const Tree& t, const Point& x) const;
  uint32_t classify4(const Point& x) const;
  uint32_t scan_leaf(const Node& leaf, const Point& x) const;
  void classify_chunk4(const FlowKey* keys, uint32_t* out, size_t n) const;
  static Box rule_box(const AclRule& r);

  Options opt_;
  std::vector<Box> boxes_;
  std::vector<uint32_t> leaf_rules_;
  std::vector<AclLeaf4> leaf4_;        // IPv4 leaves' rules as 16-lane blocks (acl_leaf4.h)
  std::vector<AclLeaf4Small> leaf4s_;  // ... leaves of 1-4 rules as one small block
  bool building_v4_ = false;
  std::map<std::vector<uint32_t>, std::pair<uint32_t, uint64_t>> leaf_index_;  // build only
  Budget budget_;                                                              // build only
  std::array<std::vector<Tree>, 2> trees_;  // [0] IPv4, [1] IPv6; per rule group
  // The IPv4 trees' nodes in one array for the staged burst (children's indices global; leaves
  // unchanged) and each tree's root; empty when a tree is deeper than kBurstDepth.
  std::vector<Node> flat4_;
  std::vector<uint32_t> roots4_, depth4_;
  Stats stats_;
};

}  // namespace nfpark::nf
