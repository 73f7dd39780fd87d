// QueueMem (QUEUE-MEM) tests: functional equivalence with the baseline through a NAT-like
// rewrite, header drops (paper Q2), App. D's "drop the last header of every batch", explicit NF
// drops, reordering of returning headers, and no leak / no paused queue after drain().
// Adversarial NF timings: queue_mem_timing_test.cc. Hand-computed steps: queue_mem_steps_test.cc.
#include "park/queue_mem.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "park/queue_mem_fixtures.h"

namespace nfpark::park {
namespace {

using namespace qm_test;

QueueMemConfig small_cfg(uint16_t batch, uint16_t queues, uint16_t slices) {
  QueueMemConfig c;
  c.batch = batch;
  c.queues = queues;
  c.slices = slices;
  return c;
}

TEST(QueueMemConfig, DefaultsHoldWhatCanBeInFlightAndValidate) {
  QueueMemConfig c;
  EXPECT_EQ(c.validate(), "");
  EXPECT_EQ(c.batch, 20);
  EXPECT_EQ(c.header_array, 94000u);
  // More than the NF side can hold: 4096 ring slots each way + Reframer's 16384 packets.
  EXPECT_EQ(c.max_held(), 1600u * 20u);
  EXPECT_GT(c.max_held(), 2u * 4096u + 16384u);
  EXPECT_GT(c.lost_after, 0);
  c.header_array = 100;
  EXPECT_EQ(c.max_held(), 100u);  // each waiting packet holds a header-array entry
  c = QueueMemConfig{};
  c.slices = 1601;
  EXPECT_NE(c.validate().find("slices"), std::string::npos);
  c = QueueMemConfig{};
  c.batch = 0;
  EXPECT_NE(c.validate().find("batch"), std::string::npos);
  c = QueueMemConfig{};
  c.lost_after = 0;
  EXPECT_NE(c.validate().find("lost_after"), std::string::npos);
}

TEST(QueueMem, EquivalentToBaselineWithNatRewrite) {
  VecBuffer::live = 0;
  const Pkts in = mixed(3000, 1, 40, 2);
  {
    QueueMemConfig c = small_cfg(8, 12, 3);
    c.ports = 2;
    Rig r(c);
    r.reorder = [](std::vector<VecPkt*>& v) { std::reverse(v.begin(), v.end()); };
    r.run(in);
    r.finish();
    const auto& k = r.qm.counters();
    EXPECT_EQ(r.out.size(), in.size());
    EXPECT_GT(k.splits, in.size() / 2);
    EXPECT_GT(k.not_split_small, 0u);
    EXPECT_GT(k.not_split_untaggable, 0u);  // ICMP
    EXPECT_GT(k.joined_whole, 0u);          // small packets behind their flow's payloads
    EXPECT_EQ(k.drops(), 0u);
    EXPECT_GT(k.batches_complete, 0u);
    EXPECT_GT(k.batches_drained, 0u);  // partial batches at the end of traffic
    r.expect_conserved(in.size());
    r.expect_matches_baseline(in);
    // Byte-identical output multiset.
    std::vector<std::vector<uint8_t>> got, want;
    for (auto* p : r.out) got.push_back(p->bytes);
    for (auto& p : in) want.push_back(baseline(p.bytes));
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    EXPECT_EQ(got, want);
  }
  EXPECT_EQ(VecBuffer::live, 0);
}

class HeaderDrops : public ::testing::TestWithParam<int> {};

// Paper Q2: with x% of headers dropped by the NF (silently), the output is (1 - x) of the
// input: exactly the payloads whose header was lost are dropped, found by lost_after.
TEST_P(HeaderDrops, OutputIsOneMinusX) {
  VecBuffer::live = 0;
  const double x = GetParam() / 100.0;
  const Pkts in = udp_flows(20000, 64);
  {
    QueueMemConfig c;
    c.lost_after = 20 * kMicro;  // 20 rounds of the Rig
    Rig r(c, /*notify=*/false, uint32_t(7 + GetParam()));
    r.timing.drop = x;
    r.run(in);
    r.finish();
    const auto& k = r.qm.counters();
    EXPECT_EQ(k.splits, in.size());
    EXPECT_NEAR(double(r.out.size()) / double(in.size()), 1.0 - x, 0.01);
    EXPECT_EQ(k.released, in.size() - r.nf_dropped_headers);
    EXPECT_EQ(k.drop_header_lost + k.stranded_at_exit, r.nf_dropped_headers);
    EXPECT_EQ(k.drop_id_mismatch, 0u);
    EXPECT_EQ(k.stale_headers, 0u);  // no header was taken for lost
    if (GetParam() == 0)
      EXPECT_EQ(k.recoveries, 0u);
    else
      EXPECT_GT(k.recoveries, 0u);
    EXPECT_LE(k.peak_pkts, QueueMemConfig{}.max_held());
    std::printf("x=%d%%: out/in=%.4f recoveries=%llu (idle %llu) header_lost=%llu peak=%llu\n",
                GetParam(), double(r.out.size()) / double(in.size()),
                (unsigned long long)k.recoveries, (unsigned long long)k.recoveries_idle,
                (unsigned long long)k.drop_header_lost, (unsigned long long)k.peak_pkts);
    r.expect_conserved(in.size());
    r.expect_matches_baseline(in);
    EXPECT_EQ(r.flow_order_violations(in), 0u);
  }
  EXPECT_EQ(VecBuffer::live, 0);
}
INSTANTIATE_TEST_SUITE_P(QueueMem, HeaderDrops, ::testing::Values(0, 10, 30, 50));

// App. D: the NF drops the last header of every batch (batch 5): no batch ever completes; each
// is recovered (lost_after, or the store fills and the engine finds the NF idle), and the output
// is exactly 80%, every payload merged with its own header.
TEST(QueueMem, AppendixDDropLastHeaderOfEveryBatch) {
  VecBuffer::live = 0;
  const Pkts in = udp_flows(1000, 16);
  {
    QueueMemConfig c = small_cfg(5, 31, 1);
    c.lost_after = 10 * kMicro;
    Rig r(c, /*notify=*/false);
    r.nf_drop = [](VecPkt* h, const PacketView& v) {
      return v.wire_len > v.len && load_be32(h->bytes.data() + v.layout.payload_off + 4) % 5 == 4;
    };
    r.run(in);
    r.finish();
    const auto& k = r.qm.counters();
    EXPECT_EQ(r.out.size(), 800u);
    EXPECT_EQ(k.batches_complete, 0u);
    EXPECT_EQ(k.recoveries + k.batches_drained, 200u);
    EXPECT_EQ(k.drop_header_lost + k.stranded_at_exit, 200u);
    EXPECT_GT(k.recoveries, 0u);
    r.expect_conserved(in.size());
    r.expect_matches_baseline(in);
    EXPECT_EQ(r.flow_order_violations(in), 0u);
  }
  EXPECT_EQ(VecBuffer::live, 0);
}

// The NF drops a header and says so (tag drop flag): it counts as returned, so the batch
// completes without a recovery, and only that payload is dropped.
TEST(QueueMem, ExplicitDropsCompleteTheBatch) {
  VecBuffer::live = 0;
  Pkts in = udp_flows(400, 8);
  in.push_back({PacketBuilder()
                    .ipv4("10.0.0.1", "10.0.0.2")
                    .udp(5, 6)
                    .payload_size(10)
                    .packet_id(999)
                    .build(),
                999});  // small: goes whole and comes back
  {
    Rig r(small_cfg(10, 4, 1), /*notify=*/true);
    r.nf_drop = [](VecPkt* h, const PacketView&) { return h->id % 7 == 0; };
    r.run(in);
    r.finish();
    const auto& k = r.qm.counters();
    EXPECT_EQ(k.drop_explicit, 57u);  // ids 7, 14, ..., 399
    EXPECT_EQ(k.drop_explicit_whole, 0u);
    EXPECT_EQ(k.recoveries, 0u);
    EXPECT_EQ(k.batches_complete, 40u);
    EXPECT_EQ(r.out.size(), in.size() - 57u);
    r.expect_conserved(in.size());
    r.expect_matches_baseline(in);
  }
  EXPECT_EQ(VecBuffer::live, 0);
}

TEST(QueueMem, ExplicitDropOfWholePacket) {
  VecBuffer::live = 0;
  {
    Rig r(small_cfg(4, 2, 1));
    r.nf_drop = [](VecPkt*, const PacketView&) { return true; };
    r.run({{PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(5, 6).payload_size(10).build(), 1}});
    r.finish();
    EXPECT_EQ(r.qm.counters().drop_explicit_whole, 1u);
    r.expect_conserved(1);
  }
  EXPECT_EQ(VecBuffer::live, 0);
}

// Headers coming back in reverse order within each batch: payloads still leave in FIFO order.
TEST(QueueMem, ReorderedHeadersReleaseInFifoOrder) {
  VecBuffer::live = 0;
  const Pkts in = udp_flows(64, 1);
  {
    Rig r(small_cfg(8, 4, 1));
    r.reorder = [](std::vector<VecPkt*>& v) { std::reverse(v.begin(), v.end()); };
    r.run(in, 8);
    r.finish();
    ASSERT_EQ(r.out.size(), 64u);
    for (size_t i = 0; i < r.out.size(); ++i) EXPECT_EQ(payload_id(r.out[i]), i + 1);
    EXPECT_EQ(r.qm.counters().batches_complete, 8u);
    r.expect_matches_baseline(in);
  }
  EXPECT_EQ(VecBuffer::live, 0);
}

}  // namespace
}  // namespace nfpark::park
