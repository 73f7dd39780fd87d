// Self-bypass (issue 17, "it never makes things worse"): Reframer measures its own regrouping and
// passes traffic straight through while it gains nothing; order and exactly-once hold across the
// switch; it keeps regrouping traffic that does gain. Also FlowSlots' collision handling.
#include "reframe/self_bypass.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "reframe/flow_reorder.h"
#include "reframe_test_util.h"

namespace nfpark::reframe {
namespace {

// Pushes `packets` packets in bursts of 32, 100 ns apart, flows picked by `flow_of(i)`; checks
// per-flow order and exactly-once on the way. Returns the reorderer's stats.
template <class F>
ReorderStats drive(FlowReorder<uint32_t>& r, uint32_t packets, F flow_of) {
  test::Out out;
  std::vector<uint64_t> flows(packets);
  Nanos now = 0;
  for (uint32_t base = 0; base < packets; base += 32) {
    std::vector<uint32_t> ids;
    std::vector<PacketMeta> m;
    for (uint32_t i = base; i < std::min(packets, base + 32); ++i) {
      flows[i] = flow_of(i);
      ids.push_back(i);
      m.push_back(test::meta(flows[i]));
    }
    now += 3200;
    r.poll(now, out);
    r.push(std::span<const uint32_t>(ids), std::span<const PacketMeta>(m), now, out);
    EXPECT_EQ(r.stats().rx, r.stats().tx + r.stats().coalesced + r.held_packets());
  }
  r.flush_all(now, out);
  EXPECT_EQ(out.out.size(), packets);
  std::vector<int> seen(packets);
  std::map<uint64_t, uint32_t> last;
  for (uint32_t id : out.out) {
    EXPECT_EQ(seen[id]++, 0) << "packet " << id << " twice";
    auto it = last.find(flows[id]);
    if (it != last.end()) {
      EXPECT_LT(it->second, id) << "flow order broken";
    }
    last[flows[id]] = id;
  }
  return r.stats();
}

ReorderConfig config(bool self_bypass) {
  ReorderConfig c;
  c.t_buff = 64 * kMicro;
  c.max_flows = 1 << 16;
  c.self_bypass.enabled = self_bypass;
  c.self_bypass.probe_packets = 4096;
  c.self_bypass.bypass_packets = 65536;
  return c;
}

TEST(SelfBypass, CannotHelpTracePassesThroughInOrder) {
  // 50k flows round-robin: a flow's packets are 50k packets (5 ms) apart, far beyond t_buff.
  const uint32_t n = 400'000, flows = 50'000;
  auto rr = [&](uint32_t i) { return uint64_t(1 + i % flows); };
  FlowReorder<uint32_t> on(config(true));
  const ReorderStats s = drive(on, n, rr);
  EXPECT_GE(s.bypass_periods, 1u);
  EXPECT_GT(s.passed, n * 8 / 10) << "most packets should go straight through";
  EXPECT_GT(s.flush_self_bypass + s.flush_timeout, 0u);
  EXPECT_LT(s.last_gain_milli, 1100u);
  // Without self-bypass the same trace is all held and regrouped for nothing.
  FlowReorder<uint32_t> off(config(false));
  const ReorderStats t = drive(off, n, rr);
  EXPECT_EQ(t.passed, 0u);
  EXPECT_EQ(t.bypass_periods, 0u);
}

TEST(SelfBypass, RegroupableTraceKeepsRegrouping) {
  // 64 flows interleaved at random: within t_buff (640 packets) each flow has ~10 packets.
  std::mt19937_64 rng(5);
  FlowReorder<uint32_t> r(config(true));
  const ReorderStats s = drive(r, 200'000, [&](uint32_t) { return uint64_t(1 + rng() % 64); });
  EXPECT_EQ(s.passed, 0u);
  EXPECT_EQ(s.bypass_periods, 0u);
  EXPECT_GE(s.probes, 10u);
  EXPECT_GT(s.slf_out(), 4 * s.slf_in());
}

TEST(SelfBypass, ProbesAgainAfterTheBypassPeriodAndResumesWhenTrafficChanges) {
  // Round-robin over 50k flows first (bypass), then 64 random flows: after the bypass period
  // ends, the next probe sees the gain and Reframer stays in the path.
  std::mt19937_64 rng(9);
  const uint32_t switch_at = 150'000;
  FlowReorder<uint32_t> r(config(true));
  const ReorderStats s = drive(r, 400'000, [&](uint32_t i) {
    return i < switch_at ? uint64_t(1 + i % 50'000) : uint64_t(100'000 + rng() % 64);
  });
  EXPECT_GE(s.bypass_periods, 1u);
  EXPECT_GT(s.passed, 0u);
  EXPECT_LT(s.passed, 400'000u - 100'000u);  // the regroupable tail was not passed through
  EXPECT_FALSE(r.passing());
  EXPECT_GT(s.last_gain_milli, 1100u);
}

TEST(SelfBypass, JudgeNeedsAFullWindowAndHalfOfItOut) {
  SelfBypassConfig c;
  c.probe_packets = 100;
  c.bypass_packets = 10;
  SelfBypass m(c);
  for (int i = 0; i < 100; ++i) m.on_in(1, 1);
  for (int i = 0; i < 49; ++i) m.on_out(1, 1);
  EXPECT_FALSE(m.judge()) << "less than half of the window emitted";
  m.on_out(1, 1);
  EXPECT_TRUE(m.judge());  // gain 1.0 < 1.1
  EXPECT_TRUE(m.passing());
  EXPECT_FALSE(m.passed(9));
  EXPECT_TRUE(m.passed(1));
  EXPECT_FALSE(m.passing());
  c.enabled = false;
  SelfBypass off(c);
  for (int i = 0; i < 1000; ++i) off.on_in(1, 1), off.on_out(1, 1);
  EXPECT_FALSE(off.judge());
}

TEST(FlowSlots, FullSetForwardsUntrackedInOrderAndEvictsOnlyIdleFlows) {
  // 16 flow slots requested -> 16 sets of 4 ways. Flows that all map to set 0 (high half 0, low
  // half a multiple of 16 with the tag bit): the fifth concurrent one has no way.
  ReorderConfig c = test::small_config();
  c.max_flows = 16;
  c.t_buff = 10 * kMicro;
  FlowReorder<uint32_t> r(c);
  test::Out out;
  auto f = [](uint64_t k) { return uint64_t(k * 16); };  // same set, distinct tags
  test::push_flows(r, {0, 1, 2, 3}, {f(1), f(2), f(3), f(4)}, 0, out);
  EXPECT_EQ(r.held_packets(), 4u);  // four ways, four buffering batches
  test::push_flows(r, {4}, {f(5)}, 100, out);
  EXPECT_EQ(r.stats().untracked, 1u);
  EXPECT_EQ(out.out, std::vector<uint32_t>({4}));
  r.poll(20 * kMicro, out);  // all four batches due: slots idle now
  test::push_flows(r, {5}, {f(5)}, 21 * kMicro, out);
  EXPECT_EQ(r.stats().flows_evicted, 1u);
  r.flush_all(30 * kMicro, out);
  EXPECT_EQ(out.out.size(), 6u);
  EXPECT_EQ(r.held_packets(), 0u);
}

}  // namespace
}  // namespace nfpark::reframe
