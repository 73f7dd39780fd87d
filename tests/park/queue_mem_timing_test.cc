// QueueMem against adversarial NF timings (the Rig of queue_mem_fixtures.h): headers back late,
// in reverse, interleaved across batches, duplicated, dropped; small and untaggable packets
// between parked ones; a store too small for what is in flight. In every case: every packet
// accounted for (in = out + drops), outputs byte-identical to the baseline, per-flow order kept,
// and nothing lost unless the NF lost it.
#include <gtest/gtest.h>

#include <cstdio>

#include "park/queue_mem_fixtures.h"

namespace nfpark::park {
namespace {

using namespace qm_test;
using Order = NfTiming::Order;

struct Case {
  const char* name;
  Order order;
  uint32_t max_rounds;  // NF latency, in rounds of 1 us
  Pkts (*traffic)();
  QueueMemConfig (*config)();
};

// Mixed sizes (parked, small, untaggable ICMP) over 60 flows; all-large UDP over 24 flows.
Pkts mixed_traffic() {
  return mixed(6000, 3, 60);
}
Pkts large_traffic() {
  return udp_flows(6000, 24, 600);
}
QueueMemConfig defaults() {
  return QueueMemConfig{};
}
QueueMemConfig small_batches() {  // many batches per flow, so they complete out of order
  QueueMemConfig c;
  c.batch = 4;
  c.slices = 3;
  return c;
}
QueueMemConfig tiny_store() {  // far less room than what is in flight: back-pressure
  QueueMemConfig c;
  c.batch = 3;
  c.queues = 4;
  c.slices = 2;
  c.header_array = 10;
  return c;
}

// What a faithful NF may do: keep each flow's order (Reframer does) or the link's (a slow NF),
// hold packets for any time, interleave flows. Whole packets keep their place too.
const Case kFaithful[] = {
    {"sync", Order::kFifo, 0, mixed_traffic, defaults},
    {"slow_fifo", Order::kFifo, 3000, mixed_traffic, defaults},  // 3 ms: > 620 packets late
    {"per_flow_interleaved", Order::kPerFlow, 40, mixed_traffic, small_batches},
    {"per_flow_tiny_store", Order::kPerFlow, 40, mixed_traffic, tiny_store},
    {"slow_fifo_tiny_store", Order::kFifo, 500, mixed_traffic, tiny_store},
};
// Headers (everything parked: large packets) back in any order: batches complete in any order.
const Case kAnyOrder[] = {
    {"any_order", Order::kAny, 60, large_traffic, small_batches},
    {"reverse", Order::kReverse, 5, large_traffic, small_batches},
};
// (Not here: an NF that reorders a flow's own packets with a store too small for them. Packets
// that then go whole, their flow having nothing waiting, are reordered by the NF itself, as
// they would be in baseline; only packets queued are ordered by QueueMem.)

void expect_lossless(const Case& k, double dup) {
  VecBuffer::live = 0;
  const Pkts in = k.traffic();
  {
    Rig r(k.config(), /*notify=*/true, 11);
    r.timing.order = k.order;
    r.timing.max_rounds = k.max_rounds;
    r.timing.dup = dup;
    r.run(in);
    r.finish();
    const auto& c = r.qm.counters();
    std::printf(
        "%s dup=%.2f: out %zu of %zu, refused %llu, recoveries %llu, joined %llu, "
        "waited %llu, peak %llu\n",
        k.name, dup, r.out.size(), in.size(), (unsigned long long)c.refused,
        (unsigned long long)c.recoveries, (unsigned long long)c.joined_whole,
        (unsigned long long)c.batches_waited, (unsigned long long)c.peak_pkts);
    EXPECT_EQ(r.out.size(), in.size() + r.extra_whole) << "nothing lost without a fault";
    EXPECT_EQ(c.drops(), 0u);
    EXPECT_EQ(c.recoveries, 0u);
    // A duplicate of a header or queued whole packet is freed: it meets its entry still
    // waiting (duplicate) or gone (stale, its batch left with the first copy).
    EXPECT_EQ(c.duplicate_headers + c.stale_headers, r.extra_tagged);
    EXPECT_LE(c.peak_pkts, k.config().max_held());
    r.expect_conserved(in.size());
    r.expect_matches_baseline(in);
    EXPECT_EQ(r.flow_order_violations(in), 0u);
  }
  EXPECT_EQ(VecBuffer::live, 0);
}

class FaithfulNf : public ::testing::TestWithParam<Case> {};
TEST_P(FaithfulNf, NothingLostFlowOrderKept) {
  expect_lossless(GetParam(), 0);
}
TEST_P(FaithfulNf, DuplicatesLeaveOnceFlowOrderKept) {
  expect_lossless(GetParam(), 0.05);
}
INSTANTIATE_TEST_SUITE_P(QueueMem, FaithfulNf, ::testing::ValuesIn(kFaithful),
                         [](const auto& i) { return std::string(i.param.name); });

class AnyOrderNf : public ::testing::TestWithParam<Case> {};
TEST_P(AnyOrderNf, BatchesLeaveInCreationOrder) {
  expect_lossless(GetParam(), 0);
}
INSTANTIATE_TEST_SUITE_P(QueueMem, AnyOrderNf, ::testing::ValuesIn(kAnyOrder),
                         [](const auto& i) { return std::string(i.param.name); });

// Silent drops with a late, interleaving NF: exactly the packets the NF lost are missing (the
// payloads of lost headers, counted at their recovery, and whole packets it freed), order kept,
// and a lost header stalls its slice for a bounded time (lost_after, or the store fills and the
// engine finds the NF idle), never until the end of the run.
TEST(QueueMemTiming, DropsLoseOnlyWhatTheNfLost) {
  VecBuffer::live = 0;
  const Pkts in = mixed(20000, 5, 60);
  {
    QueueMemConfig c = small_batches();
    c.lost_after = 200 * kMicro;  // 200 rounds > the NF's 40
    Rig r(c, /*notify=*/false, 5);
    r.timing = {Order::kPerFlow, 40, 0.1, 0.02};
    r.run(in);
    const uint64_t mid = r.qm.counters().recoveries;
    r.finish();
    const auto& k = r.qm.counters();
    EXPECT_EQ(r.out.size() + r.nf_dropped_headers + r.nf_freed_whole, in.size() + r.extra_whole);
    EXPECT_EQ(k.drop_header_lost + k.stranded_at_exit, r.nf_dropped_headers);
    EXPECT_GT(mid, 100u);  // found while traffic flowed, not left to the end
    // Bounded stall: no packet waits longer than its batch's seal_after + lost_after + the
    // NF's latency (in rounds of 1 us), however many headers around it were lost.
    EXPECT_LE(r.max_delay, (c.seal_after + c.lost_after) / kMicro + 40 + 8);
    std::printf("drops: recoveries %llu (%llu while traffic flowed), longest wait %llu us\n",
                (unsigned long long)k.recoveries, (unsigned long long)mid,
                (unsigned long long)r.max_delay);
    EXPECT_EQ(k.drop_id_mismatch, 0u);
    r.expect_conserved(in.size());
    r.expect_matches_baseline(in);
    EXPECT_EQ(r.flow_order_violations(in), 0u);
  }
  EXPECT_EQ(VecBuffer::live, 0);
}

// The assumption lost_after rests on: an NF that lets later headers overtake one for longer than
// lost_after (a Reframer T_buff above it) makes QueueMem take that header for lost. Then the
// payload is dropped and counted, the late header is counted as stale — never a mis-merge.
TEST(QueueMemTiming, OvertakenLongerThanLostAfterIsCountedNeverMismerged) {
  VecBuffer::live = 0;
  const Pkts in = udp_flows(6000, 24, 600);
  {
    QueueMemConfig c = small_batches();
    c.lost_after = 5 * kMicro;  // below the NF's 40 rounds
    Rig r(c, /*notify=*/true, 9);
    r.timing = {Order::kPerFlow, 40, 0, 0};
    r.run(in);
    r.finish();
    const auto& k = r.qm.counters();
    EXPECT_GT(k.recoveries, 0u);
    EXPECT_EQ(k.drop_header_lost + k.stranded_at_exit, k.stale_headers);
    EXPECT_EQ(k.drop_id_mismatch, 0u);
    r.expect_conserved(in.size());
    r.expect_matches_baseline(in);
    EXPECT_EQ(r.flow_order_violations(in), 0u);
  }
  EXPECT_EQ(VecBuffer::live, 0);
}

}  // namespace
}  // namespace nfpark::park
