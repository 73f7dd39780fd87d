// Random traces: every packet out exactly once, per-flow order kept, t_buff honoured, and
// rx == tx + coalesced + held after every call — across priorities, caps, bypass and evictions.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "reframe/flow_reorder.h"
#include "reframe_test_util.h"

namespace nfpark::reframe {
namespace {

struct Case {
  Priority priority;
  uint32_t max_burst, max_held_packets, max_held_flows, max_flows, flows;
  bool bypass_first;
};

class RandomTrace : public ::testing::TestWithParam<Case> {};

TEST_P(RandomTrace, ExactlyOnceInFlowOrderWithinTbuff) {
  const Case k = GetParam();
  ReorderConfig c;
  c.t_buff = 20 * kMicro;
  c.max_burst = k.max_burst;
  c.max_held_packets = k.max_held_packets;
  c.max_held_flows = k.max_held_flows;
  c.max_flows = k.max_flows;
  c.flow_timeout = 200 * kMicro;
  c.priority = k.priority;
  c.bypass_first_packet = k.bypass_first;
  c.self_bypass.enabled = false;  // the reorder paths themselves (self-bypass: its own tests)
  ASSERT_EQ(c.validate(), "");
  FlowReorder<uint32_t> r(c);
  std::mt19937_64 rng(42 + k.flows + k.max_held_packets);
  std::vector<uint64_t> flow_of;
  std::vector<Nanos> arrival;
  std::vector<int> seen;
  std::map<uint64_t, uint32_t> last_id;  // per flow, last emitted id
  test::RunOut out;
  size_t checked = 0;
  Nanos now = 0;
  auto check_out = [&](Nanos t) {
    for (; checked < out.out.size(); ++checked) {
      const uint32_t id = out.out[checked];
      ASSERT_LT(id, seen.size());
      ASSERT_EQ(seen[id]++, 0) << "packet " << id << " emitted twice";
      // What an emitter with emit_run() learns: the packet's own flow id, and a run start
      // exactly where the flow changes (every untracked packet without a flow id: its own run).
      ASSERT_EQ(out.flows[checked], flow_of[id]);
      const bool start =
          checked == 0 || flow_of[id] != flow_of[out.out[checked - 1]] || flow_of[id] == 0;
      ASSERT_EQ(bool(out.starts[checked]), start) << "packet " << id;
      ASSERT_LE(t - arrival[id], c.t_buff) << "held longer than t_buff";
      auto it = last_id.find(flow_of[id]);
      if (it != last_id.end()) {
        ASSERT_LT(it->second, id) << "flow order broken";
      }
      last_id[flow_of[id]] = id;
    }
    ASSERT_EQ(r.stats().rx, r.stats().tx + r.stats().coalesced + r.held_packets());
  };
  for (int burst = 0; burst < 3000; ++burst) {
    now += Nanos(rng() % (3 * kMicro));
    // A simulator's timer: poll exactly at every deadline up to now.
    while (r.next_deadline() <= now) {
      const Nanos d = r.next_deadline();
      r.poll(d, out);
      check_out(d);
    }
    const size_t n = 1 + rng() % 40;
    std::vector<uint32_t> ids;
    std::vector<PacketMeta> metas;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t f = rng() % 50 == 0 ? 0 : 1 + rng() % k.flows;  // some untracked
      const uint8_t flags = rng() % 20 == 0 ? PacketMeta::kBypass : 0;
      ids.push_back(uint32_t(flow_of.size()));
      metas.push_back(test::meta(f, flags));
      flow_of.push_back(f);
      arrival.push_back(now);
      seen.push_back(0);
    }
    r.push(std::span<const uint32_t>(ids), std::span<const PacketMeta>(metas), now, out);
    check_out(now);
    if (::testing::Test::HasFatalFailure()) return;
  }
  r.flush_all(now, out);
  check_out(now);
  EXPECT_EQ(out.out.size(), seen.size());
  EXPECT_EQ(r.held_packets(), 0u);
  EXPECT_EQ(r.stats().batched_packets, r.stats().held);
  EXPECT_EQ(r.stats().held + r.stats().bypassed, r.stats().rx);
  // The trace really exercised the paths this case is about.
  const bool capped = k.max_held_packets < 100, tiny_table = k.max_flows < 100;
  EXPECT_GT(r.stats().flush_bypass, 0u);
  EXPECT_TRUE(capped || r.stats().flush_timeout > 1000);
  EXPECT_TRUE(!capped || tiny_table || r.stats().flush_forced > 1000);
  EXPECT_TRUE(!tiny_table || r.stats().flows_evicted > 1000);
  EXPECT_TRUE(!tiny_table || r.stats().untracked > 2000);
  EXPECT_TRUE(k.max_burst > 4 || capped || r.stats().flush_full > 1000);
}

INSTANTIATE_TEST_SUITE_P(
    Configs, RandomTrace,
    ::testing::Values(Case{Priority::kOldestInQueue, 32, 16384, 4096, 4096, 200, true},
                      Case{Priority::kOldestFlow, 4, 16384, 4096, 4096, 200, false},
                      Case{Priority::kShortestFlow, 8, 16384, 4096, 4096, 200, false},
                      Case{Priority::kReady, 32, 16384, 4096, 4096, 200, true},
                      // caps: forced flushes all the time
                      Case{Priority::kShortestFlow, 32, 20, 6, 4096, 100, false},
                      Case{Priority::kOldestFlow, 3, 50, 10, 4096, 1000, false},
                      // a tiny table: evictions and untracked packets
                      Case{Priority::kShortestFlow, 16, 16384, 4096, 16, 300, true},
                      Case{Priority::kOldestInQueue, 16, 64, 64, 16, 3000, false}));

TEST(RandomTrace, LongPushIsSplitIntoRounds) {
  ReorderConfig c = test::small_config();
  c.max_held_packets = 10;
  FlowReorder<uint32_t> r(c);
  test::Out out;
  std::vector<uint32_t> ids;
  std::vector<PacketMeta> m;
  for (uint32_t i = 0; i < 1000; ++i) {
    ids.push_back(i);
    m.push_back(test::meta(1 + i % 300));
  }
  r.push(std::span<const uint32_t>(ids), std::span<const PacketMeta>(m), 0, out);
  EXPECT_EQ(r.held_packets(), 10u);
  EXPECT_EQ(out.out.size(), 990u);
  r.flush_all(1, out);
  std::vector<int> seen(1000, 0);
  for (uint32_t id : out.out) ++seen[id];
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), 1000);
}

}  // namespace
}  // namespace nfpark::reframe
