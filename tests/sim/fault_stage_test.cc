// [faults] in the simulator (sim/fault_stage.*, park::FaultInjector): every fault kind on every
// mode keeps the invariants (in + duplicates = out + drops, every record and NIC buffer back,
// never a payload on another packet's headers); a delay holds packets that long; dropped nicmem
// packets return their NIC buffers; a scenario's [faults] is nfpark run's (keys, ranges,
// messages). The dp ≡ sim test (tests/e2e/test_dp_sim_equiv.py) checks the decisions are the
// dataplane's.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "sim/run.h"
#include "sim/run_topology.h"
#include "sim_outputs.h"

namespace nfpark::sim {
namespace {

SimRunConfig small(SimMode mode, double gbps = 5) {
  SimRunConfig c;
  c.mode = mode;
  c.traffic.ports = 2;
  c.traffic.line_gbps = 40;
  c.traffic.pattern.gbps = gbps;
  c.traffic.gen.flows = 50;
  c.traffic.gen.size = {trace::SizeKind::kDc, 0};
  c.traffic.gen.proto = trace::GenProto::kMix;
  c.nf.link_gbps = 40;
  c.nf.service.header_ns = c.nf.service.whole_ns = 30;
  c.chain = "lb";  // rewrites by flow only: a packet's output bytes do not depend on the order
  c.full_bytes = true;
  c.sw.register_bytes = 1ull << 30;
  c.duration = 200 * kUs;
  c.interval = 20 * kUs;
  return c;
}

struct Outcome {
  RunReport r;
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> out;  // (input seq, bytes), in order
};

Outcome run_all(const SimRunConfig& c) {
  Outcome o;
  o.r = run_tapped(c, [&](const Packet& p) {
    o.out.emplace_back(p.seq, std::vector<uint8_t>(p.data(), p.data() + p.head));
  });
  return o;
}

uint64_t counter(const RunReport& r, const std::string& k) {
  return counter_of(r, k);
}

TEST(SimFaults, EveryKindKeepsTheInvariantsInEveryMode) {
  for (SimMode m : {SimMode::kBaseline, SimMode::kPayloadPark, SimMode::kQueueMem,
                    SimMode::kNfSlicer, SimMode::kNicmem, SimMode::kSplit}) {
    SCOPED_TRACE(to_string(m));
    SimRunConfig c = small(m);
    const auto base = run_outputs(c);  // the same traffic without faults
    ASSERT_GT(base.size(), 250u);
    // A loaded core reads bursts (reordering and forging act within one), every kind at once.
    c.nf.service.header_ns = c.nf.service.whole_ns = 600;
    c.faults = {.drop = 0.05,
                .dup = 0.05,
                .reorder = 0.3,
                .corrupt_tag = 0.05,
                .forge_tag = 0.1,
                .delay_us = 3,
                .delay_share = 0.5,
                .seed = 11};
    const Outcome o = run_all(c);
    EXPECT_TRUE(o.r.balanced) << "in + duplicates = out + drops";
    EXPECT_TRUE(o.r.pools_full) << "every record (and NIC buffer) back";
    EXPECT_EQ(o.r.in_flight_at_end, 0u);
    EXPECT_EQ(o.r.duplicates, counter(o.r, "faults.duplicated"));
    for (const char* k :
         {"faults.dropped", "faults.duplicated", "faults.reordered", "faults.delayed"})
      EXPECT_GT(counter(o.r, k), 0u) << k;
    const bool tagged =
        m == SimMode::kPayloadPark || m == SimMode::kQueueMem || m == SimMode::kNfSlicer;
    if (tagged) {
      EXPECT_GT(counter(o.r, "faults.corrupted"), 0u);
      EXPECT_GT(counter(o.r, "faults.forged"), 0u);
    }
    // never a payload merged onto another packet's headers (nor garbage): each frame that
    // leaves is its own packet's frame of the fault-free run
    size_t checked = 0;
    for (const auto& [seq, bytes] : o.out) {
      auto it = base.find(seq);
      ASSERT_NE(it, base.end()) << "seq " << seq;
      EXPECT_TRUE(bytes == it->second) << "seq " << seq << ": not its own frame";
      ++checked;
    }
    EXPECT_GT(checked, base.size() / 2);
  }
}

TEST(SimFaults, ADelayHoldsPacketsThatLong) {
  SimRunConfig c = small(SimMode::kBaseline, 1);
  c.chain = "forward";
  const Outcome plain = run_all(c);
  c.faults.delay_us = 30;
  const Outcome late = run_all(c);
  ASSERT_TRUE(late.r.balanced && late.r.pools_full);
  EXPECT_EQ(late.r.packets_out, plain.r.packets_out);
  EXPECT_EQ(counter(late.r, "faults.delayed"), late.r.packets_in);
  EXPECT_NEAR(late.r.latency_p50_us - plain.r.latency_p50_us, 30, 30 * 0.01);
  EXPECT_EQ(late.out.size(), plain.out.size());
  for (size_t i = 0; i < late.out.size(); ++i)  // all delayed alike: the same order
    EXPECT_EQ(late.out[i].first, plain.out[i].first);
}

TEST(SimFaults, DroppedNicmemPacketsReturnTheirNicBuffers) {
  SimRunConfig c = small(SimMode::kNicmem);
  c.faults.drop = 0.3;
  const Outcome o = run_all(c);
  ASSERT_GT(counter(o.r, "faults.dropped"), 50u);
  EXPECT_TRUE(o.r.balanced);
  EXPECT_TRUE(o.r.pools_full) << "NIC memory of the dropped packets back";
  EXPECT_EQ(counter(o.r, "park.nic_memory_used_at_end"), 0u);
}

TEST(SimFaults, SameSeedSameRunAnotherSeedAnotherRun) {
  SimRunConfig c = small(SimMode::kPayloadPark);
  c.faults = {.drop = 0.05, .dup = 0.05, .corrupt_tag = 0.05, .seed = 3};
  const Outcome a = run_all(c), b = run_all(c);
  EXPECT_EQ(a.r.counters.values, b.r.counters.values);
  EXPECT_EQ(a.out, b.out);
  c.faults.seed = 4;
  const Outcome d = run_all(c);
  EXPECT_NE(a.r.counters.values, d.r.counters.values);
}

}  // namespace
}  // namespace nfpark::sim
