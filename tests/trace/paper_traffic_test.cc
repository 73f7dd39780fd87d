// The generator's many-flow options (issue 17): heavy-tailed flow sizes, paced flows, and
// time-shifted copies with rewritten flow ids. Checked on the generator's own flow ids.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <unordered_map>

#include "trace/generator.h"

namespace nfpark::trace {
namespace {

struct Pkt {
  Nanos ts;
  uint32_t flow, size;
  uint64_t hash;  // of the frame bytes
};

std::vector<Pkt> run(const GenConfig& c) {
  EXPECT_EQ(c.validate(), "");
  CopyMerger g(c);
  std::vector<Pkt> v;
  Nanos ts;
  const std::vector<uint8_t>* f;
  uint32_t flow;
  while (g.next(ts, f, flow)) {
    uint64_t h = 1469598103934665603ULL;
    for (uint8_t b : *f) h = (h ^ b) * 1099511628211ULL;
    v.push_back({ts, flow, uint32_t(f->size()), h});
  }
  return v;
}

double slf(const std::vector<Pkt>& v) {
  size_t runs = 0;
  for (size_t i = 0; i < v.size(); ++i) runs += i == 0 || v[i].flow != v[i - 1].flow;
  return double(v.size()) / double(runs);
}

std::unordered_map<uint32_t, uint64_t> sizes(const std::vector<Pkt>& v) {
  std::unordered_map<uint32_t, uint64_t> m;
  for (const Pkt& p : v) ++m[p.flow];
  return m;
}

// Max number of flows between their first and last packet at one position.
size_t max_live(const std::vector<Pkt>& v) {
  std::unordered_map<uint32_t, std::pair<size_t, size_t>> span;
  for (size_t i = 0; i < v.size(); ++i) {
    auto [it, fresh] = span.try_emplace(v[i].flow, i, i);
    it->second.second = i;
  }
  std::vector<int> d(v.size() + 1, 0);
  for (auto& [f, s] : span) ++d[s.first], --d[s.second + 1];
  int live = 0, best = 0;
  for (int x : d) best = std::max(best, live += x);
  return size_t(best);
}

// Median span (last - first position) of flows of > 200 packets over that of flows of 40..100.
double span_ratio(const std::vector<Pkt>& v) {
  std::unordered_map<uint32_t, std::pair<size_t, size_t>> span;
  for (size_t i = 0; i < v.size(); ++i) {
    auto [it, fresh] = span.try_emplace(v[i].flow, i, i);
    it->second.second = i;
  }
  auto m = sizes(v);
  std::vector<double> small, large;
  for (auto& [f, s] : span) {
    if (s.second > v.size() / 2) continue;
    const double len = double(s.second - s.first);
    if (m[f] >= 40 && m[f] <= 100) small.push_back(len);
    if (m[f] > 200) large.push_back(len);
  }
  EXPECT_GT(small.size(), 20u);
  EXPECT_GT(large.size(), 5u);
  if (small.empty() || large.empty()) return 0;
  std::sort(small.begin(), small.end());
  std::sort(large.begin(), large.end());
  return large[large.size() / 2] / small[small.size() / 2];
}

GenConfig many(uint64_t packets, uint64_t flows, uint64_t active) {
  GenConfig c;
  c.packets = packets;
  c.flows = flows;
  c.active = active;
  c.seed = 5;
  return c;
}

TEST(PaperTraffic, FlowSizeSpecsParseAndReject) {
  FlowSizeSpec s;
  std::string err;
  EXPECT_TRUE(FlowSizeSpec::parse("pareto:1.2", s, &err));
  EXPECT_EQ(s.kind, FlowSizeKind::kPareto);
  EXPECT_EQ(s.name(), "pareto:1.2");
  EXPECT_TRUE(FlowSizeSpec::parse("lognormal:2", s, &err));
  EXPECT_EQ(s.kind, FlowSizeKind::kLognormal);
  EXPECT_TRUE(FlowSizeSpec::parse("even", s, &err));
  EXPECT_TRUE(s.even());
  for (const char* bad : {"pareto:1", "pareto:x", "pareto", "weibull:2", "lognormal:0", ""}) {
    EXPECT_FALSE(FlowSizeSpec::parse(bad, s, &err)) << bad;
    EXPECT_NE(err.find(bad), std::string::npos) << err;
  }
  GenConfig c = many(100, 10, 0);
  c.pace = true;
  EXPECT_NE(c.validate().find("--pace"), std::string::npos);
  c = many(100, 10, 0);
  c.flow_sizes = {FlowSizeKind::kPareto, 1.5};
  EXPECT_NE(c.validate().find("--flow-sizes"), std::string::npos);
  c = many(100, 10'000'000, 0);
  c.copies = 2;
  EXPECT_NE(c.validate().find("--copies"), std::string::npos);
}

TEST(PaperTraffic, ParetoSizesAreHeavyTailed) {
  GenConfig c = many(200'000, 20'000, 500);
  c.flow_sizes = {FlowSizeKind::kPareto, 1.2};
  const auto v = run(c);
  ASSERT_EQ(v.size(), 200'000u);
  auto m = sizes(v);
  std::vector<uint64_t> s;
  for (auto& [f, n] : m) s.push_back(n);
  std::sort(s.rbegin(), s.rend());
  const uint64_t top = std::accumulate(s.begin(), s.begin() + s.size() / 10, uint64_t(0));
  EXPECT_GT(double(top) / double(v.size()), 0.5);  // the top 10% of flows: most packets
  EXPECT_GT(s.front(), 100 * 10u);                 // an elephant 100x the mean (10)
  EXPECT_LE(double(s[s.size() / 2]), 10.0);        // the median flow: a mouse
  // Even sizes: every flow its share.
  c.flow_sizes = {};
  for (auto& [f, n] : sizes(run(c))) ASSERT_EQ(n, 10u);
}

TEST(PaperTraffic, LognormalMeanNearNominal) {
  GenConfig c = many(100'000, 10'000, 200);
  c.flow_sizes = {FlowSizeKind::kLognormal, 1.5};
  auto m = sizes(run(c));
  // Flows started until the packets ran out: the realised mean size is near 10 (within 35%;
  // the last flows are cut short).
  const double mean = 100'000.0 / double(m.size());
  EXPECT_GT(mean, 6.5);
  EXPECT_LT(mean, 13.5);
}

TEST(PaperTraffic, PacedFlowsSpreadAtTheirOwnRate) {
  const uint64_t active = 2000;
  GenConfig c = many(300'000, 30'000, active);
  c.flow_sizes = {FlowSizeKind::kPareto, 1.3};
  c.pace = true;
  c.train = 1.2;
  const auto v = run(c);
  ASSERT_EQ(v.size(), 300'000u);
  EXPECT_NEAR(slf(v), 1.2, 0.06);
  EXPECT_LE(max_live(v), active + active / 20);
  // A flow's packets are spread over its lifetime (active * mean size * U(0.5, 1.5) slots)
  // whatever its size: elephants send often, mice rarely. So the median span of large flows
  // (> 200 packets) is close to that of small ones (40..100); with random picks (no --pace)
  // a flow's span grows with its size. Flows inside the first half of the trace only (the
  // population is not used up there; later a flow may go live a second time).
  const double paced = span_ratio(v);
  EXPECT_GT(paced, 0.5);
  EXPECT_LT(paced, 2.0);
  c.pace = false;
  c.active = 200;  // random picks: span ~ size x active (200 so that large flows end in time)
  EXPECT_GT(span_ratio(run(c)), 3.0);
}

TEST(PaperTraffic, PacedTraceIsDeterministicBySeed) {
  GenConfig c = many(20'000, 2'000, 300);
  c.flow_sizes = {FlowSizeKind::kLognormal, 1.0};
  c.pace = true;
  c.train = 1.5;
  c.copies = 2;
  c.copy_shift = 50 * kMicro;
  const auto a = run(c), b = run(c);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].hash, b[i].hash) << i;
    ASSERT_EQ(a[i].ts, b[i].ts) << i;
  }
  c.seed = 6;
  const auto d = run(c);
  size_t same = 0;
  for (size_t i = 0; i < a.size(); ++i) same += a[i].flow == d[i].flow;
  EXPECT_LT(same, a.size() / 10);
}

TEST(PaperTraffic, CopiesAreShiftedWithTheirOwnFlowIds) {
  GenConfig c = many(5'000, 500, 50);
  c.flow_sizes = {FlowSizeKind::kPareto, 1.5};
  c.pace = true;
  c.train = 1.5;
  c.rate_gbps = 100;
  const auto one = run(c);
  c.copies = 3;
  c.copy_shift = 20 * kMicro;
  const auto three = run(c);
  ASSERT_EQ(three.size(), 3 * one.size());
  for (size_t i = 1; i < three.size(); ++i) ASSERT_LE(three[i - 1].ts, three[i].ts) << i;
  EXPECT_NEAR(slf(three), slf(one), 0.06);  // trains are merged whole
  // Copy k = the packets with flow ids in [k*500, (k+1)*500): copy 0's flows, sizes and times,
  // shifted by k * 20 us.
  for (uint32_t k = 0; k < 3; ++k) {
    std::vector<Pkt> mine;
    for (const Pkt& p : three)
      if (p.flow / 500 == k) mine.push_back(p);
    ASSERT_EQ(mine.size(), one.size()) << k;
    for (size_t i = 0; i < one.size(); ++i) {
      ASSERT_EQ(mine[i].flow, one[i].flow + k * 500) << k << " " << i;
      ASSERT_EQ(mine[i].size, one[i].size) << k << " " << i;
      // Shifted by k * 20 us; a packet may wait behind another copy's train (a few packets).
      ASSERT_GE(mine[i].ts, one[i].ts + Nanos(k) * 20 * kMicro) << k << " " << i;
      ASSERT_LE(mine[i].ts, one[i].ts + Nanos(k) * 20 * kMicro + kMicro) << k << " " << i;
    }
  }
  EXPECT_EQ(sizes(three).size(), 3 * sizes(one).size());
}

}  // namespace
}  // namespace nfpark::trace
