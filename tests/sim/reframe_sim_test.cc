// Reframer in the simulator: in front of the chain (park::NfBurst, an idle core polling at
// Reframer's deadline) and as a box of its own (sim/reframe_box_stage.*, park::ReframeStage, as
// the dataplane's box lcore). Both give the packets a run without Reframer gives, flow by flow
// in the same order, hold nothing at the end, hold no packet longer than T_buff, and raise the
// chain's SLF; a scenario's [reframe] is nfpark run's. The dp ≡ sim test checks the box against
// `nfpark run --reframe-placement box`.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <vector>

#include "sim/run.h"
#include "sim/run_topology.h"
#include "sim/scenario.h"
#include "sim_outputs.h"

namespace nfpark::sim {
namespace {

SimRunConfig small() {
  SimRunConfig c;
  c.mode = SimMode::kPayloadPark;
  c.traffic.ports = 2;
  c.traffic.line_gbps = 40;
  c.traffic.pattern.gbps = 10;
  c.traffic.gen.flows = 20;
  c.traffic.gen.size = {trace::SizeKind::kDc, 0};
  c.traffic.gen.proto = trace::GenProto::kMix;
  c.nf.link_gbps = 40;
  c.nf.service.header_ns = c.nf.service.whole_ns = 30;
  c.chain = "lb";  // rewrites by flow only
  c.full_bytes = true;
  c.sw.register_bytes = 1ull << 30;
  c.duration = 300 * kUs;
  c.interval = 20 * kUs;
  return c;
}

struct Outcome {
  RunReport r;
  std::map<uint64_t, std::vector<uint8_t>> bytes;   // by input seq
  std::map<uint64_t, std::vector<uint64_t>> flows;  // flow -> input seqs in output order
};

Outcome run_all(const SimRunConfig& c) {
  Outcome o;
  o.r = run_tapped(c, [&](const Packet& p) {
    o.bytes[p.seq].assign(p.data(), p.data() + p.head);
    o.flows[p.flow].push_back(p.seq);
  });
  return o;
}

uint64_t counter(const RunReport& r, const std::string& k) {
  return counter_of(r, k);
}

TEST(SimReframer, InChainAndBoxGiveThePacketsOfARunWithoutIt) {
  SimRunConfig c = small();
  const Outcome plain = run_all(c);
  ASSERT_TRUE(plain.r.balanced && plain.r.pools_full);
  ASSERT_GT(plain.bytes.size(), 500u);
  const double t_buff_us = 20;
  for (run::Placement where : {run::Placement::kInChain, run::Placement::kBox}) {
    SCOPED_TRACE(where == run::Placement::kBox ? "box" : "in-chain");
    SimRunConfig r = c;
    r.reframe_us = t_buff_us;
    r.reframe.placement = where;
    const Outcome o = run_all(r);
    EXPECT_TRUE(o.r.balanced);
    EXPECT_TRUE(o.r.pools_full);
    EXPECT_EQ(o.r.drops_total, 0u);
    EXPECT_TRUE(o.bytes == plain.bytes) << "the same bytes for every packet";
    EXPECT_TRUE(o.flows == plain.flows) << "each flow in the same order";
    EXPECT_EQ(counter(o.r, "reframe.rx"), o.r.packets_in);
    EXPECT_EQ(counter(o.r, "reframe.held_now"), 0u);
    EXPECT_GT(counter(o.r, "reframe.held"), o.r.packets_in / 2) << "Reframer held packets";
    EXPECT_GT(counter(o.r, "reframe.slf_out_milli"), counter(o.r, "reframe.slf_in_milli"));
    // a packet waits T_buff at most, then its turn in the burst it is released with (up to
    // max_burst packets of each flow due then: a few µs of service and PCIe here)
    EXPECT_LE(o.r.latency_p99_us, plain.r.latency_p99_us + t_buff_us + 2);
    EXPECT_GT(o.r.latency_avg_us, plain.r.latency_avg_us + t_buff_us / 4);
  }
}

TEST(SimReframer, ScenarioKeysAreNfparkRunsAndInChainNeedsOneCore) {
  auto load = [](const std::string& text, std::string& err) {
    char p[] = "/tmp/nfpark_reframe_XXXXXX.toml";
    const int fd = mkstemps(p, 5);
    const std::string path = p;
    EXPECT_EQ(write(fd, text.data(), text.size()), ssize_t(text.size()));
    close(fd);
    Scenario s;
    const bool ok = load_scenario(path, false, s, err);
    std::remove(path.c_str());
    return ok ? s.runs : std::vector<SimRunConfig>{};
  };
  std::string err;
  auto runs = load(
      "[nf_server]\nreframe_us = 40\n[reframe]\nplacement = \"box\"\n"
      "max_burst = 8\n[faults]\ndup = 0.1\nseed = 9\n",
      err);
  ASSERT_EQ(runs.size(), 1u) << err;
  EXPECT_EQ(runs[0].reframe_us, 40);
  EXPECT_EQ(runs[0].reframe.placement, run::Placement::kBox);
  EXPECT_EQ(runs[0].reframe.cfg.max_burst, 8u);
  EXPECT_EQ(runs[0].faults.dup, 0.1);
  EXPECT_EQ(runs[0].faults.seed, 9u);
  for (const char* bad : {"[reframe]\nplacement = \"box\"\n",  // no T_buff
                          "[nf_server]\nreframe_us = 40\n[reframe]\nplacement = \"boxx\"\n",
                          "[faults]\ndrop = 2\n", "[faults]\ndrops = 0.1\n"}) {
    err.clear();
    EXPECT_TRUE(load(bad, err).empty()) << bad;
    EXPECT_EQ(err.find('\n'), std::string::npos) << "one line: " << err;
    EXPECT_TRUE(err.find("[reframe]") != std::string::npos ||
                err.find("[faults]") != std::string::npos)
        << "names the section: " << err;
  }
  SimRunConfig c = small();
  c.reframe_us = 20;
  c.nf.cores = 2;
  RunTopology t;
  err.clear();
  EXPECT_FALSE(t.build(c, err));
  EXPECT_NE(err.find("cores"), std::string::npos) << "[" << err << "]";
  c.reframe.placement = run::Placement::kBox;  // the box feeds every core
  RunTopology t2;
  err.clear();
  EXPECT_TRUE(t2.build(c, err)) << err;
}

}  // namespace
}  // namespace nfpark::sim
