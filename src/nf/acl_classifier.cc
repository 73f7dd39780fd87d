#include "nf/acl_classifier.h"

#include <algorithm>
#include <cstring>
#include <tuple>

#include "core/bytes.h"

namespace nfpark::nf {

namespace {
constexpr uint64_t kMax = ~uint64_t(0);
// A dimension's word in classify_chunk4's IPv4 key (src, dst, sport, dport, proto, 0): the
// addresses' low halves (1, 3) are 0 for IPv4 and never split on (their region is one value).
constexpr uint32_t kField4[8] = {0, 5, 1, 5, 2, 3, 4, 5};

bool covers(const AclClassifier::Point& lo, const AclClassifier::Point& hi,
            const AclClassifier::Point& rlo, const AclClassifier::Point& rhi) {
  for (int d = 0; d < AclClassifier::kDims; ++d)
    if (lo[size_t(d)] > rlo[size_t(d)] || hi[size_t(d)] < rhi[size_t(d)]) return false;
  return true;
}

// Sets dims [d, d+1] (high/low 64 bits) from a prefix.
void prefix_ranges(const IpPrefix& p, AclClassifier::Point& lo, AclClassifier::Point& hi,
                   size_t d) {
  lo[d] = lo[d + 1] = 0;
  hi[d] = hi[d + 1] = kMax;
  if (p.family == 0) return;
  if (p.family == 4) {
    uint64_t a = load_be32(p.addr.data());
    uint64_t span = p.len == 0 ? 0xFFFFFFFFull : (uint64_t(1) << (32 - p.len)) - 1;
    lo[d] = a & ~span, hi[d] = (a & ~span) | span;
    return;
  }
  uint64_t h = load_be64(p.addr.data()), l = load_be64(p.addr.data() + 8);
  if (p.len <= 64) {
    uint64_t span = p.len == 0 ? kMax : p.len == 64 ? 0 : (kMax >> p.len);
    lo[d] = h & ~span, hi[d] = (h & ~span) | span;
  } else {
    uint64_t span = p.len == 128 ? 0 : (kMax >> (p.len - 64));
    lo[d] = hi[d] = h;
    lo[d + 1] = l & ~span, hi[d + 1] = (l & ~span) | span;
  }
}
}  // namespace

AclClassifier::Box AclClassifier::rule_box(const AclRule& r) {
  Box b;
  prefix_ranges(r.src, b.lo, b.hi, 0);
  prefix_ranges(r.dst, b.lo, b.hi, 2);
  b.lo[4] = r.sport_lo, b.hi[4] = r.sport_hi;
  b.lo[5] = r.dport_lo, b.hi[5] = r.dport_hi;
  b.lo[6] = r.proto_lo, b.hi[6] = r.proto_hi;
  return b;
}

void AclClassifier::to_point(const FlowKey& k, Point& x) {
  if (k.ip_version == 6) {
    x[0] = load_be64(k.src.data()), x[1] = load_be64(k.src.data() + 8);
    x[2] = load_be64(k.dst.data()), x[3] = load_be64(k.dst.data() + 8);
  } else {
    x[0] = load_be32(k.src.data() + 12), x[1] = 0;
    x[2] = load_be32(k.dst.data() + 12), x[3] = 0;
  }
  x[4] = k.sport, x[5] = k.dport, x[6] = k.proto;
}

uint32_t AclClassifier::lookup(const Tree& t, const Point& x) const {
  const Node* nodes = t.nodes.data();
  const Node* n = nodes;
  while (!(n->meta & kLeaf)) n = child(nodes, *n, x);
  return scan_leaf(*n, x);
}

uint32_t AclClassifier::classify4(const Point& p) const {
  const uint32_t x[AclLeaf4::kFields] = {uint32_t(p[0]), uint32_t(p[2]), uint32_t(p[4]),
                                         uint32_t(p[5]), uint32_t(p[6])};
  uint32_t best = kNoMatch;
  for (const Tree& t : trees_[0]) {
    if (t.min_rule >= best) break;  // trees are in min_rule order
    const Node* nodes = t.nodes.data();
    const Node* n = nodes;
    while (!(n->meta & kLeaf)) n = child(nodes, *n, p);
    const uint32_t count = n->meta & ~kLeaf;
    if (count != 0 && count <= AclLeaf4Small::kLanes) {
      const AclLeaf4Small& s = leaf4s_[n->value];
      if (const uint32_t m = s.match(x)) best = std::min(best, s.id[__builtin_ctz(m)]);
      continue;
    }
    const AclLeaf4* b = leaf4_.data() + n->value;
    for (uint32_t left = count; left > 0; ++b) {
      if (const uint32_t m = b->match(x)) {
        const uint32_t r = b->id[__builtin_ctz(m)];
        best = r < best ? r : best;
        break;
      }
      left = left > AclLeaf4::kLanes ? left - AclLeaf4::kLanes : 0;
    }
  }
  return best;
}

uint32_t AclClassifier::scan_leaf(const Node& leaf, const Point& x) const {
  const Node* n = &leaf;
  const uint32_t* ids = leaf_rules_.data() + n->a;
  for (uint32_t j = 0, c = n->meta & ~kLeaf; j < c; ++j) {
    const Box& b = boxes_[ids[j]];
    bool m = true;
    for (size_t d = 0; d < kDims; ++d) m &= (x[d] >= b.lo[d]) & (x[d] <= b.hi[d]);
    if (m) return ids[j];
  }
  return kNoMatch;
}

void AclClassifier::classify_burst(std::span<const FlowKey> keys, uint32_t* out) const {
  if (roots4_.empty()) {  // no IPv4 tree, or too deep for rounds
    for (size_t i = 0; i < keys.size(); ++i) out[i] = classify(keys[i]);
    return;
  }
  for (size_t i = 0; i < keys.size(); i += kBurst)
    classify_chunk4(keys.data() + i, out + i, std::min(kBurst, keys.size() - i));
}

void AclClassifier::classify_chunk4(const FlowKey* keys, uint32_t* out, size_t n) const {
  // IPv4 keys as the leaf blocks' fields (src, dst, sport, dport, proto); flat4_'s nodes index
  // them by field (kField4), so the walk and the compare read the same 5 words.
  alignas(32) uint32_t x[kBurst][8];
  uint32_t lane[kBurst];  // which key each of the m IPv4 lanes is
  size_t m = 0;
  for (size_t i = 0; i < n; ++i) {
    const FlowKey& k = keys[i];
    if (k.ip_version == 6) {
      out[i] = classify(k);
      continue;
    }
    uint32_t* p = x[m];
    p[0] = load_be32(k.src.data() + 12), p[1] = load_be32(k.dst.data() + 12);
    p[2] = k.sport, p[3] = k.dport, p[4] = k.proto, p[5] = 0;
    out[i] = kNoMatch;
    lane[m++] = uint32_t(i);
  }
  const Node* nodes = flat4_.data();
  uint32_t cur[kBurst], todo[kBurst], small[kBurst];
  for (size_t t = 0; t < roots4_.size(); ++t) {
    for (size_t j = 0; j < m; ++j) cur[j] = roots4_[t];
    for (uint32_t d = 0; d < depth4_[t]; ++d) {  // one hop per key per round; leaves stay put
      for (size_t j = 0; j < m; ++j) {
        const Node& nd = nodes[cur[j]];
        const uint64_t v = x[j][nd.meta & 7];
        const uint64_t split = v >= nd.value, cut = (v - nd.value) >> (nd.meta >> 8 & 63);
        const uint32_t next = nd.a + uint32_t((nd.meta & kCut) ? cut : split);
        cur[j] = (nd.meta & kLeaf) ? cur[j] : next;
      }
    }
    size_t c = 0, cs = 0;  // keys whose leaf holds > 4 rules (todo), 1-4 rules (small)
    for (size_t j = 0; j < m; ++j) {
      const uint32_t count = nodes[cur[j]].meta & ~kLeaf;
      todo[c] = small[cs] = uint32_t(j);
      c += count > AclLeaf4Small::kLanes;
      cs += count - 1 < AclLeaf4Small::kLanes;
    }
    for (size_t i = 0; i < cs; ++i) {
      const uint32_t j = small[i];
      const AclLeaf4Small& b = leaf4s_[nodes[cur[j]].value];
      const uint32_t hit = b.match(x[j]);
      const uint32_t r = b.id[__builtin_ctz(hit | 1u << (AclLeaf4Small::kLanes - 1))];
      uint32_t& o = out[lane[j]];
      o = std::min(o, hit ? r : kNoMatch);
    }
    for (size_t i = 0; i < c; ++i) {
      const uint32_t j = todo[i];
      const Node& nd = nodes[cur[j]];
      const AclLeaf4* b = leaf4_.data() + nd.value;
      uint32_t hit = b->match(x[j]);
      for (uint32_t left = nd.meta & ~kLeaf; !hit && left > AclLeaf4::kLanes;)
        left -= AclLeaf4::kLanes, hit = (++b)->match(x[j]);
      const uint32_t r = b->id[__builtin_ctz(hit | 1u << (AclLeaf4::kLanes - 1))];
      uint32_t& o = out[lane[j]];
      o = std::min(o, hit ? r : kNoMatch);
    }
  }
}

void AclClassifier::lookup_work(const FlowKey& k, uint32_t& trees, uint32_t& hops,
                                uint32_t& scanned) const {
  Point x;
  to_point(k, x);
  trees = hops = scanned = 0;
  uint32_t best = kNoMatch;
  for (const Tree& t : trees_[k.ip_version == 6 ? 1 : 0]) {
    if (t.min_rule >= best) break;
    ++trees;
    const Node* n = t.nodes.data();
    while (!(n->meta & kLeaf)) n = child(t.nodes.data(), *n, x), ++hops;
    const uint32_t* ids = leaf_rules_.data() + n->a;
    for (uint32_t j = 0, c = n->meta & ~kLeaf; j < c; ++j) {
      ++scanned;
      const Box& b = boxes_[ids[j]];
      bool m = true;
      for (size_t d = 0; d < kDims; ++d) m &= (x[d] >= b.lo[d]) & (x[d] <= b.hi[d]);
      if (m) {
        best = std::min(best, ids[j]);
        break;
      }
    }
  }
}

// Rules are grouped by which address fields are "wide" (prefix shorter than 8 bits for IPv4,
// 32 for IPv6) — EffiCuts' separability idea: a wide rule in a tree of narrow ones is copied into
// most leaves, so wide and narrow rules get separate trees. Empty groups make no tree. Groups 0
// (both narrow) and 2 (narrow source, wide destination) may share one tree instead (build()).
static int rule_group(const AclRule& r) {
  auto wide = [](const IpPrefix& p) { return p.family == 0 || p.len < (p.family == 4 ? 8 : 32); };
  return (wide(r.src) ? 1 : 0) | (wide(r.dst) ? 2 : 0);
}

AclClassifier::Mark AclClassifier::mark() const {
  return Mark{leaf_rules_.size(), leaf4_.size(), leaf4s_.size(), leaf_index_, stats_};
}

void AclClassifier::rollback(const Mark& m) {
  leaf_rules_.resize(m.leaf_rules), leaf4_.resize(m.leaf4), leaf4s_.resize(m.leaf4s);
  leaf_index_ = m.leaf_index, stats_ = m.stats;
}

size_t AclClassifier::bytes_since(const Mark& m, size_t nodes) const {
  return nodes * sizeof(Node) + (leaf_rules_.size() - m.leaf_rules) * sizeof(uint32_t) +
         (leaf4_.size() - m.leaf4) * sizeof(AclLeaf4) +
         (leaf4s_.size() - m.leaf4s) * sizeof(AclLeaf4Small);
}

AclClassifier::Tree AclClassifier::build_tree(std::vector<uint32_t> ids, const Box& region) {
  Tree t;
  t.min_rule = ids.front();
  t.nodes.assign(1, Node{});
  build_at(t, 0, region, ids, 0);
  stats_.nodes += t.nodes.size();
  return t;
}

void AclClassifier::build(std::span<const AclRule> rules, Options opt) {
  opt_ = opt;
  if (opt_.leaf_size == 0) opt_.leaf_size = 1;
  boxes_.clear();
  leaf_rules_.clear();
  leaf4_.clear();
  leaf4s_.clear();
  stats_ = {};
  for (const auto& r : rules) boxes_.push_back(rule_box(r));
  for (int f = 0; f < 2; ++f) {
    const uint8_t fam = f == 0 ? 4 : 6;
    building_v4_ = f == 0;
    leaf_index_.clear();  // an IPv4 leaf has blocks, an IPv6 one not: no sharing across
    std::array<std::vector<uint32_t>, 4> groups;
    for (uint32_t i = 0; i < rules.size(); ++i)
      if (rules[i].family() == 0 || rules[i].family() == fam)
        groups[size_t(rule_group(rules[i]))].push_back(i);
    Box region;
    region.lo.fill(0);
    region.hi = {kMax, kMax, kMax, kMax, 65535, 65535, 255};
    if (f == 0) region.hi[0] = region.hi[2] = 0xFFFFFFFFull, region.hi[1] = region.hi[3] = 0;
    auto& trees = trees_[size_t(f)];
    trees.clear();
    // Narrow-source rules in one tree whatever their destination, when it costs at most
    // merge_space x the memory of the two trees it replaces: cut by source, a wide destination
    // is not copied, and a key walks one tree and compares one leaf instead of two (the
    // firewall's 1k rules: 10 vs 16 ns per key aimed at the rules, 4.6 vs 7.3 generated). Where
    // destinations get cut too (random rule sets) the copies multiply (10k random rules: 11x the
    // memory, slower lookups): the budget stops that build early and the two trees stay.
    if (opt_.merge_space > 0 && !groups[0].empty() && !groups[2].empty()) {
      const Mark m = mark();
      Tree a = build_tree(groups[0], region), b = build_tree(groups[2], region);
      const size_t separate = bytes_since(m, a.nodes.size() + b.nodes.size());
      // Keep what the two trees built, to put back if the shared tree costs too much.
      auto kept = std::make_tuple(leaf_rules_, leaf4_, leaf4s_, leaf_index_, stats_);
      rollback(m);
      std::vector<uint32_t> ids(groups[0].size() + groups[2].size());
      std::merge(groups[0].begin(), groups[0].end(), groups[2].begin(), groups[2].end(),
                 ids.begin());
      budget_ = {&m, opt_.merge_space * separate, false};
      Tree t = build_tree(std::move(ids), region);
      const bool over = budget_.over;
      budget_ = {};
      if (!over) {
        trees.push_back(std::move(t));
      } else {
        std::tie(leaf_rules_, leaf4_, leaf4s_, leaf_index_, stats_) = std::move(kept);
        trees.push_back(std::move(a)), trees.push_back(std::move(b));
      }
      groups[0].clear(), groups[2].clear();
    }
    for (auto& ids : groups)
      if (!ids.empty()) trees.push_back(build_tree(ids, region));
    std::sort(trees.begin(), trees.end(),
              [](const Tree& a, const Tree& b) { return a.min_rule < b.min_rule; });
    stats_.trees += trees.size();
  }
  leaf_index_.clear();
  flat4_.clear(), roots4_.clear(), depth4_.clear();
  bool shallow = true;
  for (const Tree& t : trees_[0]) shallow = shallow && t.depth <= kBurstDepth;
  for (const Tree& t : trees_[0]) {
    if (!shallow) break;
    const uint32_t off = uint32_t(flat4_.size());
    roots4_.push_back(off), depth4_.push_back(t.depth);
    for (Node nd : t.nodes) {
      if (!(nd.meta & kLeaf)) nd.a += off, nd.meta = (nd.meta & ~7u) | kField4[nd.meta & 7];
      flat4_.push_back(nd);
    }
  }
  stats_.leaf_rule_refs = leaf_rules_.size();
  stats_.memory_bytes = (stats_.nodes + flat4_.size()) * sizeof(Node) +
                        leaf_rules_.size() * sizeof(uint32_t) + boxes_.size() * sizeof(Box) +
                        leaf4_.size() * sizeof(AclLeaf4) + leaf4s_.size() * sizeof(AclLeaf4Small);
}

// When every rule of a node lies in less than half of the region along some dimension, one node
// cuts the empty part off (it becomes an empty leaf): keys there — e.g. traffic from address
// space no rule mentions — finish after one hop, and no rule is copied.
bool AclClassifier::cut_empty_space(Tree& t, uint32_t idx, const Box& region,
                                    std::vector<uint32_t>& rules, uint32_t depth) {
  int best_dim = -1;
  double best_frac = 0.5;
  uint64_t best_lo = 0, best_hi = 0;
  for (size_t d = 0; d < kDims; ++d) {
    const uint64_t rlo = region.lo[d], rhi = region.hi[d];
    if (rlo == rhi) continue;
    uint64_t lo = kMax, hi = 0;
    for (uint32_t r : rules) {
      lo = std::min(lo, std::max(boxes_[r].lo[d], rlo));
      hi = std::max(hi, std::min(boxes_[r].hi[d], rhi));
    }
    double frac = (double(hi - lo) + 1) / (double(rhi - rlo) + 1);
    if (frac < best_frac) best_frac = frac, best_dim = int(d), best_lo = lo, best_hi = hi;
  }
  if (best_dim < 0) return false;
  const size_t d = size_t(best_dim);
  const bool cut_low = best_lo > region.lo[d];
  const uint64_t value = cut_low ? best_lo : best_hi + 1;
  const uint32_t c = uint32_t(t.nodes.size());
  t.nodes.resize(c + 2);
  t.nodes[idx] = Node{value, c, uint32_t(d)};
  Box inner = region;
  (cut_low ? inner.lo[d] : inner.hi[d]) = cut_low ? best_lo : best_hi;
  make_leaf(t, cut_low ? c : c + 1, {}, depth + 1);
  build_at(t, cut_low ? c + 1 : c, inner, rules, depth + 1);
  return true;
}

// HiCuts' equal-width cut (Gupta & McKeown, Hot Interconnects 1999): one node splits a
// dimension of the region into 2^k equal cells, each a child, so a key skips ~k split hops in one
// (its cell is (x - lo) >> shift). Per dimension the widest cut (k <= cut_bits; root_cut_bits at
// a tree's root) whose children hold at most cut_space x the node's rules is tried (copies of
// straddling rules included, plus one per cell below the root: there a cell costs a node, not a
// leaf); the dimension whose fullest cell is smallest wins, if that cell holds at most a quarter
// of the rules (what two split levels would give at best). Rules keep their priority order in
// every cell. At the root the cut goes before the empty-space cut: keys outside the rules' space
// then reach an empty cell in the same one hop as keys inside it reach theirs.
bool AclClassifier::cut_equal(Tree& t, uint32_t idx, const Box& region,
                              std::vector<uint32_t>& rules, uint32_t depth) {
  const size_t n = rules.size();
  int best_dim = -1, best_shift = 0;
  double best_mean = double(n);
  std::vector<int32_t> count;
  const int max_bits = int(depth == 0 ? opt_.root_cut_bits : opt_.cut_bits);
  for (int d = 0; d < kDims; ++d) {
    const uint64_t rlo = region.lo[size_t(d)], span = region.hi[size_t(d)] - rlo;
    if (span == 0) continue;
    const int bits = 64 - __builtin_clzll(span);
    for (int k = std::min(max_bits, bits); k >= 2; --k) {
      const int shift = bits - k;
      const size_t cells = size_t(span >> shift) + 1;
      count.assign(cells + 1, 0);
      for (uint32_t r : rules) {  // +1 over [first, last] cell, as a difference array
        const Box& b = boxes_[r];
        const uint64_t lo = std::max(b.lo[size_t(d)], rlo) - rlo;
        const uint64_t hi = std::min(b.hi[size_t(d)], region.hi[size_t(d)]) - rlo;
        ++count[size_t(lo >> shift)], --count[size_t(hi >> shift) + 1];
      }
      size_t copies = depth == 0 ? 0 : cells, mx = 0;
      int64_t run = 0;
      for (size_t c = 0; c < cells; ++c) {
        run += count[c];
        copies += size_t(run), mx = std::max(mx, size_t(run));
      }
      if (copies > size_t(opt_.cut_space) * n) continue;   // too many copies: fewer cells
      const double mean = double(copies) / double(cells);  // rules in a random key's cell
      if (mx <= n / 4 && mean < best_mean) best_mean = mean, best_dim = d, best_shift = shift;
      break;
    }
  }
  if (best_dim < 0) return false;
  const size_t d = size_t(best_dim);
  const uint64_t rlo = region.lo[d], rhi = region.hi[d];
  const uint32_t cells = uint32_t(((rhi - rlo) >> best_shift) + 1);
  const uint32_t c = uint32_t(t.nodes.size());
  t.nodes.resize(c + cells);
  t.nodes[idx] = Node{rlo, c, kCut | uint32_t(best_shift) << 8 | uint32_t(d)};
  ++stats_.cuts;
  std::vector<uint32_t> sub;
  for (uint32_t i = 0; i < cells; ++i) {
    Box cell = region;
    cell.lo[d] = rlo + (uint64_t(i) << best_shift);
    const uint64_t width = (uint64_t(1) << best_shift) - 1;
    cell.hi[d] = rhi - cell.lo[d] <= width ? rhi : cell.lo[d] + width;
    sub.clear();
    for (uint32_t r : rules)
      if (boxes_[r].lo[d] <= cell.hi[d] && boxes_[r].hi[d] >= cell.lo[d]) sub.push_back(r);
    build_at(t, c + i, cell, sub, depth + 1);
  }
  return true;
}

void AclClassifier::make_leaf(Tree& t, uint32_t idx, const std::vector<uint32_t>& rules,
                              uint32_t depth) {
  ++stats_.leaves;
  stats_.max_depth = std::max<size_t>(stats_.max_depth, depth);
  t.depth = std::max(t.depth, depth);
  // Replicated rules make many leaves with the same list: they share one copy (and one block).
  const bool small = building_v4_ && !rules.empty() && rules.size() <= AclLeaf4Small::kLanes;
  auto [it, fresh] = leaf_index_.try_emplace(rules, uint32_t(leaf_rules_.size()),
                                             small ? leaf4s_.size() : leaf4_.size());
  t.nodes[idx] = Node{it->second.second, it->second.first, kLeaf | uint32_t(rules.size())};
  if (!fresh) return;
  leaf_rules_.insert(leaf_rules_.end(), rules.begin(), rules.end());
  if (building_v4_) {  // IPv4 key fields are 32-bit: clamp the boxes (family-less rules) to them
    constexpr size_t kDim[AclLeaf4::kFields] = {0, 2, 4, 5, 6};
    if (small) {
      AclLeaf4Small& b = leaf4s_.emplace_back();
      b.clear();
      for (size_t j = 0; j < rules.size(); ++j) {
        const Box& box = boxes_[rules[j]];
        for (size_t f = 0; f < AclLeaf4::kFields; ++f) {
          b.lohi[f][j] = uint32_t(std::min<uint64_t>(box.lo[kDim[f]], 0xFFFFFFFFu));
          b.lohi[f][AclLeaf4Small::kLanes + j] =
              uint32_t(std::min<uint64_t>(box.hi[kDim[f]], 0xFFFFFFFFu));
        }
        b.id[j] = rules[j];
      }
      return;
    }
    for (size_t j = 0; j < rules.size(); ++j) {
      if (j % AclLeaf4::kLanes == 0) leaf4_.emplace_back().clear();
      AclLeaf4& b = leaf4_.back();
      const Box& box = boxes_[rules[j]];
      const size_t lane = j % AclLeaf4::kLanes;
      for (size_t f = 0; f < AclLeaf4::kFields; ++f) {
        b.lo[f][lane] = uint32_t(std::min<uint64_t>(box.lo[kDim[f]], 0xFFFFFFFFu));
        b.hi[f][lane] = uint32_t(std::min<uint64_t>(box.hi[kDim[f]], 0xFFFFFFFFu));
      }
      b.id[lane] = rules[j];
    }
  }
}

void AclClassifier::build_at(Tree& t, uint32_t idx, const Box& region, std::vector<uint32_t>& rules,
                             uint32_t depth) {
  if (budget_.base && !budget_.over)
    budget_.over = bytes_since(*budget_.base, t.nodes.size()) > budget_.bytes;
  if (budget_.over) return;  // the tree is being abandoned
  // Priority pruning: nothing after a rule that covers the whole region can match first here.
  for (size_t j = 0; j < rules.size(); ++j) {
    const Box& b = boxes_[rules[j]];
    if (covers(b.lo, b.hi, region.lo, region.hi)) {
      rules.resize(j + 1);
      break;
    }
  }
  if (rules.size() <= opt_.leaf_size || depth >= opt_.max_depth)
    return make_leaf(t, idx, rules, depth);
  if (depth == 0 && rules.size() <= opt_.root_cut_rules && cut_equal(t, idx, region, rules, depth))
    return;
  if (cut_empty_space(t, idx, region, rules, depth)) return;
  if (depth > 0 && cut_equal(t, idx, region, rules, depth)) return;

  const size_t n = rules.size();
  size_t best_max = n, best_sum = ~size_t(0);
  int best_dim = -1;
  uint64_t best_value = 0;
  std::vector<uint64_t> los(n), his(n);
  for (int d = 0; d < kDims; ++d) {
    const uint64_t rlo = region.lo[size_t(d)], rhi = region.hi[size_t(d)];
    if (rlo == rhi) continue;
    for (size_t j = 0; j < n; ++j) {
      const Box& b = boxes_[rules[j]];
      los[j] = std::max(b.lo[size_t(d)], rlo);
      his[j] = std::min(b.hi[size_t(d)], rhi);
    }
    std::sort(los.begin(), los.end());
    std::sort(his.begin(), his.end());
    // Sweep candidate thresholds v in (rlo, rhi]: left gets rules with lo < v, right hi >= v.
    auto consider = [&](uint64_t v) {
      size_t nl = size_t(std::lower_bound(los.begin(), los.end(), v) - los.begin());
      size_t nr = n - size_t(std::lower_bound(his.begin(), his.end(), v) - his.begin());
      size_t mx = std::max(nl, nr), sum = nl + nr;
      if (mx < best_max || (mx == best_max && sum < best_sum)) {
        best_max = mx, best_sum = sum, best_dim = d, best_value = v;
      }
    };
    for (size_t j = 0; j < n; ++j) {
      if (los[j] > rlo && (j == 0 || los[j] != los[j - 1])) consider(los[j]);
      if (his[j] < rhi && (j == 0 || his[j] != his[j - 1])) consider(his[j] + 1);
    }
  }
  if (best_dim < 0 || best_max >= n) return make_leaf(t, idx, rules, depth);

  std::vector<uint32_t> left, right;
  left.reserve(best_max), right.reserve(best_max);
  const size_t d = size_t(best_dim);
  for (uint32_t r : rules) {
    if (boxes_[r].lo[d] < best_value) left.push_back(r);
    if (boxes_[r].hi[d] >= best_value) right.push_back(r);
  }
  rules.clear();
  rules.shrink_to_fit();
  Box lreg = region, rreg = region;
  lreg.hi[d] = best_value - 1;
  rreg.lo[d] = best_value;
  const uint32_t c = uint32_t(t.nodes.size());
  t.nodes.resize(c + 2);
  t.nodes[idx] = Node{best_value, c, uint32_t(best_dim)};
  build_at(t, c, lreg, left, depth + 1);
  build_at(t, c + 1, rreg, right, depth + 1);
}

}  // namespace nfpark::nf
