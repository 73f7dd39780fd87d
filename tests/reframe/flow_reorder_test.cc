#include "reframe/flow_reorder.h"

#include <gtest/gtest.h>

#include "reframe_test_util.h"

namespace nfpark::reframe {
namespace {

using test::meta;
using test::Out;
using test::push_flows;
using test::small_config;
using V = std::vector<uint32_t>;

TEST(FlowReorder, TimeoutIsExact) {
  FlowReorder<uint32_t> r(small_config());
  Out out;
  push_flows(r, {1}, {7}, 1000, out);
  EXPECT_TRUE(out.out.empty());
  EXPECT_EQ(r.next_deadline(), 1000 + 10 * kMicro);
  r.poll(1000 + 10 * kMicro - 1, out);
  EXPECT_TRUE(out.out.empty());
  r.poll(1000 + 10 * kMicro, out);
  EXPECT_EQ(out.out, V({1}));
  EXPECT_EQ(r.next_deadline(), kNever);
  EXPECT_EQ(r.stats().flush_timeout, 1u);
}

TEST(FlowReorder, BatchStartsAtFirstBufferedPacketNotLast) {
  FlowReorder<uint32_t> r(small_config());
  Out out;
  push_flows(r, {1}, {7}, 0, out);
  push_flows(r, {2}, {7}, 9 * kMicro, out);
  r.poll(10 * kMicro, out);  // both go at 10 us: the timer does not restart per packet
  EXPECT_EQ(out.out, V({1, 2}));
  // A packet arriving exactly at the deadline starts a new batch after the old one is flushed.
  push_flows(r, {3}, {7}, 11 * kMicro, out);
  push_flows(r, {4}, {7}, 21 * kMicro, out);
  EXPECT_EQ(out.out, V({1, 2, 3}));
  r.flush_all(30 * kMicro, out);
  EXPECT_EQ(out.out, V({1, 2, 3, 4}));
}

TEST(FlowReorder, FirstPacketOfFlowBypassesByDefault) {
  ReorderConfig c = small_config();
  c.bypass_first_packet = true;
  FlowReorder<uint32_t> r(c);
  Out out;
  push_flows(r, {1, 2, 3}, {7, 7, 8}, 0, out);
  EXPECT_EQ(out.out, V({1, 3}));
  EXPECT_EQ(r.stats().bypassed, 2u);
  EXPECT_EQ(r.held_packets(), 1u);
}

TEST(FlowReorder, MaxBurstFlushesTheFlowAtOnce) {
  ReorderConfig c = small_config();
  c.max_burst = 3;
  FlowReorder<uint32_t> r(c);
  Out out;
  push_flows(r, {1, 2, 3, 4}, {5, 6, 5, 5}, 0, out);  // flow 5 reaches 3 packets
  EXPECT_EQ(out.out, V({1, 3, 4}));
  EXPECT_EQ(r.stats().flush_full, 1u);
  EXPECT_EQ(r.stats().useless_wait_ns, 0u);
}

TEST(FlowReorder, RegroupsInterleavedFlowsAndCountsSlf) {
  FlowReorder<uint32_t> r(small_config());
  Out out;
  // A B C A B C A B C, one packet per microsecond.
  for (uint32_t i = 0; i < 9; ++i) push_flows(r, {i}, {uint64_t(10 + i % 3)}, i * kMicro, out);
  r.poll(20 * kMicro, out);
  EXPECT_EQ(out.out, V({0, 3, 6, 1, 4, 7, 2, 5, 8}));
  EXPECT_DOUBLE_EQ(r.stats().slf_in(), 1.0);   // 9 packets, 9 runs
  EXPECT_DOUBLE_EQ(r.stats().slf_out(), 3.0);  // 9 packets, 3 runs
  EXPECT_DOUBLE_EQ(r.stats().avg_batch(), 3.0);
  // Useless wait: flushed at 20 us; last arrivals at 6, 7, 8 us -> 14 + 13 + 12 us.
  EXPECT_EQ(r.stats().useless_wait_ns, uint64_t(39 * kMicro));
}

TEST(FlowReorder, SlfOnHandMadeSequence) {
  ReorderConfig c = small_config();
  c.max_burst = 2;
  FlowReorder<uint32_t> r(c);
  Out out;
  // In: A A B A B B C -> runs AA|B|A|BB|C = 5 runs, SLF 7/5.
  push_flows(r, {0, 1, 2, 3, 4, 5, 6}, {1, 1, 2, 1, 2, 2, 3}, 0, out);
  r.flush_all(1, out);
  // A full at 1, B full at 4, then A3 and B5 and C6 remain -> A A B B | A B C (end order).
  EXPECT_EQ(out.out, V({0, 1, 2, 4, 3, 5, 6}));
  EXPECT_EQ(r.stats().runs_in, 5u);
  EXPECT_EQ(r.stats().runs_out, 5u);  // AA BB A B C
}

TEST(FlowReorder, BypassFlushesTheFlowsBufferedPacketsFirst) {
  FlowReorder<uint32_t> r(small_config());
  Out out;
  push_flows(r, {1, 2, 3}, {7, 7, 8}, 0, out);
  std::vector<uint32_t> ids{4};
  std::vector<PacketMeta> m{meta(7, PacketMeta::kBypass)};
  r.push(std::span<const uint32_t>(ids), std::span<const PacketMeta>(m), 1, out);
  EXPECT_EQ(out.out, V({1, 2, 4}));
  EXPECT_EQ(r.stats().flush_bypass, 1u);
  EXPECT_EQ(r.held_packets(), 1u);  // flow 8 still waits
}

TEST(FlowReorder, BarrierKeepsItsPlaceInTheStream) {
  for (Priority p : {Priority::kOldestInQueue, Priority::kOldestFlow, Priority::kShortestFlow,
                     Priority::kReady}) {
    ReorderConfig c = small_config();
    c.priority = p;
    FlowReorder<uint32_t> r(c);
    Out out;
    push_flows(r, {1, 2, 3}, {7, 8, 7}, 0, out);
    // An untracked barrier (a later fragment has no ports) mid-burst, then more of flow 7.
    std::vector<uint32_t> ids{4, 5, 6};
    std::vector<PacketMeta> m{meta(9), meta(0, PacketMeta::kBarrier | PacketMeta::kBypass),
                              meta(7)};
    r.push(std::span<const uint32_t>(ids), std::span<const PacketMeta>(m), 1, out);
    ASSERT_EQ(out.out.size(), 5u) << to_string(p);
    EXPECT_EQ(out.out[4], 5u) << to_string(p);  // after 1, 2, 3, 4 in some order; 6 waits
    EXPECT_EQ(r.held_packets(), 1u);
    EXPECT_EQ(r.stats().flush_barrier, 3u);  // flows 7, 8, 9
  }
}

TEST(FlowReorder, BypassAfterFullBatchInSameRoundStaysBehindIt) {
  ReorderConfig c = small_config();
  c.max_burst = 2;
  c.priority = Priority::kShortestFlow;
  FlowReorder<uint32_t> r(c);
  Out out;
  std::vector<uint32_t> ids{1, 2, 3, 4, 5};
  std::vector<PacketMeta> m{meta(7), meta(7), meta(9), meta(7), meta(7, PacketMeta::kBypass)};
  r.push(std::span<const uint32_t>(ids), std::span<const PacketMeta>(m), 0, out);
  EXPECT_EQ(out.out, V({1, 2, 4, 5}));  // one contiguous batch for flow 7
}

TEST(FlowReorder, PacketCapForcesOldestFlowOut) {
  ReorderConfig c = small_config();
  c.max_held_packets = 3;
  FlowReorder<uint32_t> r(c);
  Out out;
  push_flows(r, {1, 2, 3}, {1, 2, 1}, 0, out);
  EXPECT_TRUE(out.out.empty());
  push_flows(r, {4}, {3}, 1, out);
  EXPECT_EQ(out.out, V({1, 3}));  // flow 1 was the oldest batch
  EXPECT_EQ(r.stats().flush_forced, 1u);
  EXPECT_EQ(r.held_packets(), 2u);
}

TEST(FlowReorder, FlowCapForcesOldestFlowOut) {
  ReorderConfig c = small_config();
  c.max_held_flows = 2;
  FlowReorder<uint32_t> r(c);
  Out out;
  push_flows(r, {1, 2, 3}, {1, 2, 2}, 0, out);
  push_flows(r, {4}, {1}, 1, out);  // flow 1 already buffered: no new flow, no force
  EXPECT_TRUE(out.out.empty());
  push_flows(r, {5}, {3}, 2, out);
  EXPECT_EQ(out.out, V({1, 4}));
  EXPECT_EQ(r.held_flows(), 2u);
}

// Ready order A, C, B with batch starts B=1 < C=2 < A=3, flow ages A=0 < B=1 < C=2 and packets
// seen at readiness A=4, C=2, B=2.
V priority_run(Priority p) {
  ReorderConfig c = small_config();
  c.max_burst = 2;
  c.t_buff = 100 * kMicro;
  c.priority = p;
  FlowReorder<uint32_t> r(c);
  Out out;
  const uint64_t A = 1, B = 2, C = 3;
  push_flows(r, {1, 2}, {A, A}, 0, out);  // full, emitted at once
  out.out.clear();
  push_flows(r, {3}, {B}, 1, out);
  push_flows(r, {4}, {C}, 2, out);
  push_flows(r, {5}, {A}, 3, out);
  push_flows(r, {6, 7, 8}, {A, C, B}, 4, out);
  return out.out;
}

TEST(FlowReorder, PrioritiesOnHandMadeSequence) {
  EXPECT_EQ(priority_run(Priority::kReady), V({5, 6, 4, 7, 3, 8}));          // A C B
  EXPECT_EQ(priority_run(Priority::kOldestInQueue), V({3, 8, 4, 7, 5, 6}));  // B C A
  EXPECT_EQ(priority_run(Priority::kOldestFlow), V({5, 6, 3, 8, 4, 7}));     // A B C
  EXPECT_EQ(priority_run(Priority::kShortestFlow), V({4, 7, 3, 8, 5, 6}));   // C B A
}

TEST(FlowReorder, UntrackedPacketsPassInOrder) {
  FlowReorder<uint32_t> r(small_config());
  Out out;
  push_flows(r, {1, 2, 3}, {0, 5, 0}, 0, out);
  EXPECT_EQ(out.out, V({1, 3}));
  EXPECT_EQ(r.stats().untracked, 2u);
}

TEST(FlowReorder, FlowsSharingATagNeverShareABatch) {
  // 1024 sets: flow ids (hi 5, lo 0) and (hi 5, lo 1024) fall in set 5 with tag 5, so they take
  // one slot. Each batch, hence each run an emitter is told of, must still hold one flow.
  FlowReorder<uint32_t> r(small_config());
  const uint64_t a = 5ull << 32, b = 5ull << 32 | 1024;
  test::RunOut out;
  push_flows(r, {1, 2, 3, 4, 5}, {a, b, b, a, a}, 0, out);
  r.flush_all(1, out);
  ASSERT_EQ(out.out, V({1, 2, 3, 4, 5}));  // each flow's order kept, nothing merged
  EXPECT_EQ(out.flows, std::vector<uint64_t>({a, b, b, a, a}));
  EXPECT_EQ(out.starts, std::vector<bool>({true, true, false, true, false}));
  EXPECT_EQ(r.stats().runs_out, 3u);
}

TEST(FlowReorder, CountersAndInvariant) {
  FlowReorder<uint32_t> r(small_config());
  Out out;
  push_flows(r, {1, 2, 3}, {1, 2, 1}, 0, out);
  CounterMap m;
  r.counters(m.sink());
  EXPECT_EQ(m.get("rx"), 3u);
  EXPECT_EQ(m.get("held_now"), 3u);
  EXPECT_EQ(m.get("flows_now"), 2u);
  EXPECT_EQ(m.get("slf_in_milli"), 1000u);
  r.flush_all(5, out);
  CounterMap m2;
  r.counters(m2.sink());
  EXPECT_EQ(m2.get("tx"), 3u);
  EXPECT_EQ(m2.get("flush.end"), 2u);
  EXPECT_EQ(m2.get("slf_out_milli"), 1500u);
  EXPECT_EQ(m2.get("avg_batch_milli"), 1500u);
}

TEST(ReorderConfig, ValidateNamesTheField) {
  ReorderConfig c;
  EXPECT_EQ(c.validate(), "");
  c.max_burst = 0;
  EXPECT_NE(c.validate().find("max_burst"), std::string::npos);
  c = ReorderConfig{};
  c.flow_timeout = c.t_buff;
  EXPECT_NE(c.validate().find("flow_timeout"), std::string::npos);
  EXPECT_EQ(parse_priority("shortest_flow"), Priority::kShortestFlow);
  EXPECT_FALSE(parse_priority("delay").has_value());
}

TEST(BurstEmitter, PacksBurstsOf32) {
  std::vector<size_t> sizes;
  uint32_t dropped = 0;
  BurstEmitter<uint32_t, std::function<void(std::span<uint32_t>)>, std::function<void(uint32_t)>> e(
      [&](std::span<uint32_t> b) { sizes.push_back(b.size()); }, [&](uint32_t) { ++dropped; });
  for (uint32_t i = 0; i < 70; ++i) e.emit(i);
  e.coalesced(1);
  e.finish();
  EXPECT_EQ(sizes, std::vector<size_t>({32, 32, 6}));
  EXPECT_EQ(dropped, 1u);
}

}  // namespace
}  // namespace nfpark::reframe
