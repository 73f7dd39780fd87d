// QUEUE-MEM in whole simulated runs (park::QueueMem over the switch's egress queues): its output
// is byte-identical to the baseline's and keeps every flow's order; it carries what the NF link
// cannot (payloads wait in the switch, headers go to the NF) with no loss and a small buffer;
// a header-drop fault costs exactly the payloads of the lost headers (Fig. 7's rule).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "sim/run.h"
#include "sim/run_topology.h"
#include "sim_outputs.h"

namespace nfpark::sim {
namespace {

// 4 x 100 GbE of 1500 B frames into one NF server with a 100 GbE link.
SimRunConfig fast(SimMode mode, double gbps_per_port) {
  SimRunConfig c;
  c.mode = mode;
  c.traffic.ports = 4;
  c.traffic.line_gbps = 100;
  c.traffic.pattern.gbps = gbps_per_port;
  c.traffic.gen.flows = 200;
  c.traffic.gen.size = {trace::SizeKind::kFixed, 1500};
  c.sw.buffer_bytes = 64ull << 20;
  c.sw.register_bytes = 24ull << 20;
  c.nf.link_gbps = 100;
  c.nf.pcie_gbps = 400;
  c.nf.cores = 8;
  c.nf.rx_ring = 4096;
  c.nf.service.header_ns = c.nf.service.whole_ns = 40;
  c.chain = "forward";
  c.queuemem.lost_after = 5 * kMicro;
  c.queuemem.seal_after = 10 * kMicro;
  c.duration = 300 * kUs;
  c.warmup = 50 * kUs;
  c.interval = 50 * kUs;
  return c;
}

RunReport run(const SimRunConfig& c) {
  RunReport r;
  std::string err;
  EXPECT_TRUE(run_sim(c, r, err)) << err;
  EXPECT_TRUE(r.balanced) << "in = out + drops";
  EXPECT_TRUE(r.pools_full);
  return r;
}

uint64_t drop(const RunReport& r, const std::string& why) {
  for (auto& [k, v] : r.drops)
    if (k == why) return v;
  return 0;
}
uint64_t counter(const RunReport& r, const std::string& name) {
  return counter_of(r, name);
}

TEST(SimQueueMem, CarriesWhatTheNfLinkCannotWithoutLoss) {
  const RunReport base = run(fast(SimMode::kBaseline, 90));
  const RunReport qm = run(fast(SimMode::kQueueMem, 90));
  EXPECT_NEAR(base.out_gbps, 100, 2) << "the baseline is capped by the NF link";
  EXPECT_NEAR(qm.in_gbps, 360, 4);
  EXPECT_NEAR(qm.out_gbps, qm.in_gbps, 0.01 * qm.in_gbps);
  EXPECT_EQ(qm.drops_total, 0u);
  EXPECT_LT(qm.nf_link_gbps, 0.07 * qm.in_gbps) << "headers only: 90 of 1524 wire bytes";
  EXPECT_LT(qm.peak_buffer_bytes, 4u << 20) << "far below the switch's 64 MB";
  EXPECT_GT(qm.peak_buffer_bytes, 100u << 10) << "payloads wait in the buffer";
  EXPECT_EQ(qm.reorder.flow_reordered, 0u);
}

TEST(SimQueueMem, HeaderDropsCostExactlyTheirPayloads) {
  SimRunConfig c = fast(SimMode::kQueueMem, 90);
  c.nf.drop = 0.3;
  const RunReport r = run(c);
  // A payload whose header the NF lost is counted once, where it was lost (the fault).
  const uint64_t lost = counter(r, "queuemem.drop.header_lost"), fault = drop(r, "fault");
  EXPECT_GT(fault, 1000u);
  EXPECT_EQ(lost, fault) << "one payload per lost header, no more";
  EXPECT_EQ(r.drops_total, fault) << "no other drop: buffer, store and NF are not overloaded";
  EXPECT_NEAR(r.out_gbps, 0.7 * r.in_gbps, 0.03 * r.in_gbps);
  EXPECT_EQ(drop(r, "leaked"), 0u);
  EXPECT_EQ(r.reorder.flow_reordered, 0u);
}

std::map<uint64_t, std::vector<uint8_t>> outputs(const SimRunConfig& c,
                                                 std::map<uint64_t, std::vector<uint64_t>>* order) {
  return run_outputs(c, [&](const Packet& p) {
    if (order) (*order)[p.flow].push_back(p.seq);
  });
}

TEST(SimQueueMem, OutputIsByteIdenticalToBaselineInFlowOrder) {
  // dc sizes: small packets go whole (behind their flow's waiting payloads when it has some);
  // the LB rewrites the destination per flow.
  SimRunConfig c = fast(SimMode::kBaseline, 20);
  c.traffic.gen.size = {trace::SizeKind::kDc, 0};
  c.traffic.gen.slf = 4;
  c.chain = "lb";
  c.full_bytes = true;
  c.duration = 100 * kUs;
  const auto base = outputs(c, nullptr);
  ASSERT_GT(base.size(), 1000u);
  c.mode = SimMode::kQueueMem;
  std::map<uint64_t, std::vector<uint64_t>> order;
  const auto qm = outputs(c, &order);
  EXPECT_EQ(qm.size(), base.size());
  EXPECT_TRUE(qm == base) << "same bytes per packet";
  for (auto& [flow, seqs] : order)
    EXPECT_TRUE(std::is_sorted(seqs.begin(), seqs.end())) << "flow " << flow;
}

}  // namespace
}  // namespace nfpark::sim
