// Run-aware processing (nf/run_burst.h, Nf::process_runs) against per-packet processing, on
// random traces: for every run-aware NF alone and for chains, two identical NFs/chains — one
// run-aware, one packet by packet — get the same bursts and must give the same verdicts, the
// same bytes in every packet, the same counters and the same exported state (flow tables in
// slot order, pools, reverse maps, fragment notes, token buckets, meter ways).
//
// The configurations are small on purpose, so that the paths where a run must fall back to
// per-packet processing happen often: NAT pools of 2 x 32 ports and idle flows expiring
// (pool exhaustion, reclaim), counter/ratelimit tables of 64 flows and lb's of 16 (insert
// failures), rate limits and meters that drop in the middle of a run, a firewall that denies some
// flows, routes that leave some destinations unrouted, TTL-1 packets inside runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>

#include "core/counters.h"
#include "nf/counter.h"
#include "nf/firewall.h"
#include "nf/load_balancer.h"
#include "nf/meter.h"
#include "nf/nat.h"
#include "nf/rate_limiter.h"
#include "nf/router.h"
#include "nf/run_burst.h"
#include "nf/simple.h"
#include "random_trace.h"

namespace nfpark::nf::testing {
namespace {

std::unique_ptr<Nf> make_nf(const std::string& name) {
  std::string err;
  if (name == "counter") return std::make_unique<FlowCounter>(CounterConfig{64, 300'000});
  if (name == "ratelimit") {
    RateLimiterConfig c;
    c.rate_bps = 200'000'000;
    c.burst_bytes = 4000;
    c.max_flows = 64;
    c.idle_timeout = 300'000;
    return std::make_unique<RateLimiter>(c);
  }
  if (name == "nat") {
    NatConfig c;
    c.external = {ip4(198, 18, 0, 1), ip4(198, 18, 0, 2)};
    c.port_min = 2000;
    c.port_max = 2031;
    c.idle_timeout = 600'000;
    c.reclaim_probe = 8;
    c.frag_states = 16;
    return std::make_unique<Nat>(c);
  }
  if (name == "lb") {
    LbConfig c;
    c.vips = {ip4(192, 0, 2, 80), ip4(198, 18, 0, 1)};
    for (uint8_t i = 0; i < 128; ++i) c.vips.push_back(ip4(192, 0, 2, i));
    c.table_size = 251;
    c.max_flows = 16;
    c.idle_timeout = 1'000'000;
    return std::make_unique<LoadBalancer>(c);
  }
  if (name == "firewall") {
    std::vector<AclRule> rules;
    EXPECT_TRUE(
        parse_acl_text("deny src 10.0.1.0/24 proto tcp\n"
                       "deny dport 7000-7999\n"
                       "allow src 10.0.2.0/24\n"
                       "deny dst 192.0.2.0/26 proto icmp\n"
                       "deny src 2001:db8::/32 dport 81\n",
                       "rules", rules, err))
        << err;
    return std::make_unique<Firewall>(rules, AclAction::kAllow);
  }
  if (name == "router") {
    RouterConfig c;
    c.default_via = "none";
    c.routes = {"192.0.2.0/25 via 02:00:00:00:00:0a", "198.18.0.0/24 via 02:00:00:00:00:0b",
                "10.0.0.0/8 via 02:00:00:00:00:0c", "2001:db8::/32 via 02:00:00:00:00:0d"};
    auto r = Router::create(c, err);
    EXPECT_TRUE(r) << err;
    return r;
  }
  if (name == "meter" || name == "meter-global") {
    MeterConfig c;
    c.per_flow = name == "meter";
    c.max_flows = 16;
    c.cir = 20'000'000;
    c.cbs = 3000;
    c.ebs = 3000;
    c.drop_red = true;
    auto m = Meter::create(c, err);
    EXPECT_TRUE(m) << err;
    return m;
  }
  if (name == "trtcm") {
    MeterConfig c;
    c.mode = MeterConfig::Mode::kTrTcm;
    c.per_flow = true;
    c.max_flows = 16;
    c.cir = 10'000'000;
    c.pir = 30'000'000;
    c.cbs = 2000;
    c.pbs = 5000;
    return Meter::create(c, err);
  }
  if (name == "macswap") return std::make_unique<MacSwap>();
  ADD_FAILURE() << "unknown NF " << name;
  return nullptr;
}

std::unique_ptr<Chain> make_chain(const std::string& spec, bool run_aware) {
  auto chain = std::make_unique<Chain>();
  for (size_t at = 0; at <= spec.size();) {
    size_t comma = std::min(spec.find(',', at), spec.size());
    chain->add(make_nf(spec.substr(at, comma - at)));
    at = comma + 1;
  }
  chain->set_run_aware(run_aware);
  return chain;
}

std::map<std::string, uint64_t> counters_of(const Chain& c) {
  std::map<std::string, uint64_t> m;
  c.counters([&](std::string_view n, uint64_t v) { m[std::string(n)] = v; });
  return m;
}

// Feeds `bursts` random bursts to a run-aware and a per-packet chain; true when all agree.
// `slf_at(b)`, when given, sets the trace's SLF before burst b (locality that changes).
void expect_same(const std::string& spec, uint64_t seed, double slf, size_t bursts,
                 const std::function<double(size_t)>& slf_at = {}) {
  SCOPED_TRACE(spec + " seed " + std::to_string(seed) + " slf " + std::to_string(slf));
  auto runs = make_chain(spec, true), packets = make_chain(spec, false);
  // Run-aware with Reframer's flow ids as hints (RunHints: FlowKeyHash64 of each key, 1 for 0,
  // 0 without a key, as reframe::classify() computes them; tests/reframe checks that it does).
  auto hinted = make_chain(spec, true);
  RandomTrace trace(seed, 40 + uint32_t(seed % 5) * 40, slf);
  std::mt19937_64 clock_rng(seed);
  Nanos now = 1'000'000;
  for (size_t b = 0; b < bursts; ++b) {
    if (slf_at) trace.set_slf(slf_at(b));
    std::vector<TraceFrame> in = trace.burst();
    std::vector<TraceFrame> out = in, hin = in;
    std::vector<PacketView> va(in.size()), vb(in.size()), vh(in.size());
    std::vector<Verdict> da(in.size(), Verdict::kPass), db(in.size(), Verdict::kPass),
        dh(in.size(), Verdict::kPass);
    std::vector<uint64_t> ids(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      va[i] = view_of(in[i].bytes, in[i].cut, uint32_t(in[i].bytes.size()));
      vb[i] = view_of(out[i].bytes, out[i].cut, uint32_t(out[i].bytes.size()));
      vh[i] = view_of(hin[i].bytes, hin[i].cut, uint32_t(hin[i].bytes.size()));
      FlowKey k;
      ids[i] = vh[i].layout.ok() && extract_flow_key(vh[i].data, vh[i].layout, k)
                   ? std::max<uint64_t>(FlowKeyHash64{}(k), 1)
                   : 0;
    }
    const RunHints hints{ids.data()};
    runs->process(va, da, now);
    packets->process(vb, db, now);
    hinted->process(vh, dh, now, &hints);
    for (size_t i = 0; i < in.size(); ++i) {
      ASSERT_EQ(da[i], db[i]) << "burst " << b << " packet " << i << ": verdicts differ";
      ASSERT_EQ(in[i].bytes, out[i].bytes) << "burst " << b << " packet " << i << ": bytes differ";
      ASSERT_EQ(dh[i], db[i]) << "burst " << b << " packet " << i << ": verdicts differ (hints)";
      ASSERT_EQ(hin[i].bytes, out[i].bytes)
          << "burst " << b << " packet " << i << ": bytes differ (hints)";
      if (db[i] == Verdict::kPass) trace.emitted(out[i].bytes);
    }
    const uint64_t step = clock_rng() % 16;  // mostly a few µs; sometimes past idle timeouts
    now += step < 14 ? Nanos(clock_rng() % 20'000) : Nanos(300'000 + clock_rng() % 400'000);
  }
  EXPECT_EQ(counters_of(*runs), counters_of(*packets));
  EXPECT_EQ(counters_of(*hinted), counters_of(*packets));
  std::vector<uint8_t> sa, sb, sh;
  runs->export_state(sa);
  packets->export_state(sb);
  hinted->export_state(sh);
  EXPECT_TRUE(sh == sb) << "NF state differs with hints";
  EXPECT_FALSE(sb.empty() && spec != "macswap");
  EXPECT_TRUE(sa == sb) << "NF state differs (" << sa.size() << " vs " << sb.size() << " bytes)";
}

class RunEquivalence : public ::testing::TestWithParam<const char*> {};

TEST_P(RunEquivalence, SameOutputCountersAndStateAsPerPacket) {
  for (uint64_t seed = 1; seed <= 6; ++seed)
    for (double slf : {1.0, 2.5, 8.0}) expect_same(GetParam(), seed, slf, 150);
}

INSTANTIATE_TEST_SUITE_P(
    Nfs, RunEquivalence,
    ::testing::Values("counter", "ratelimit", "nat", "lb", "firewall", "router", "meter",
                      "meter-global", "trtcm", "router,nat,firewall,counter",
                      "firewall,nat,lb,meter,counter,ratelimit", "lb,counter,ratelimit",
                      "nat,macswap,counter,router,ratelimit", "firewall,router"),
    [](const auto& info) {
      std::string s = info.param;
      for (char& c : s)
        if (c == ',' || c == '-') c = '_';
      return s;
    });

// The firewall's self-bypass (firewall.h, "Runs"): it stops finding runs for itself on a trace
// without runs and finds them again once runs come back; either way the chain gives what
// per-packet processing gives, across every switch (SLF 1 and 8 alternating every 300 bursts,
// so each phase outlasts a probe period).
TEST(FirewallSelfBypass, SameAsPerPacketWhileLocalityChanges) {
  const auto phases = [](size_t b) { return (b / 300) % 2 ? 8.0 : 1.0; };
  for (const char* spec : {"firewall", "firewall,router", "router,firewall,counter"})
    for (uint64_t seed = 1; seed <= 3; ++seed) expect_same(spec, seed, 1.0, 1200, phases);
}

TEST(FirewallSelfBypass, StopsFindingRunsWithoutRunsAndResumesWithThem) {
  auto chain = make_chain("firewall", true);
  const Nf& fw = chain->at(0);
  std::vector<Frame> frames;  // 64 flows; a burst of 32 takes SLF consecutive packets a flow
  for (uint32_t f = 0; f < 64; ++f)
    frames.push_back(PacketBuilder()
                         .ipv4("10.1." + std::to_string(f) + ".1", "192.0.2.1")
                         .udp(uint16_t(1000 + f), 53)
                         .payload_size(64)
                         .build());
  const auto feed = [&](uint32_t slf, size_t bursts) {
    for (size_t b = 0; b < bursts; ++b) {
      std::vector<Frame> in;
      for (uint32_t i = 0; i < kBurst; ++i) in.push_back(frames[(b * kBurst + i) / slf % 64]);
      std::vector<PacketView> v;
      for (auto& fr : in) v.push_back(view_of(fr, uint32_t(fr.size()), uint32_t(fr.size())));
      std::vector<Verdict> d(in.size(), Verdict::kPass);
      chain->process(v, d, 1'000'000);
    }
  };
  EXPECT_TRUE(fw.finds_runs());
  feed(1, 8);  // 256 packets, every one a run of its own
  EXPECT_FALSE(fw.finds_runs()) << "runs of one packet: the firewall should classify the burst";
  feed(8, 4);  // between probes: nothing measured, still bypassing
  EXPECT_FALSE(fw.finds_runs());
  feed(8, Firewall::kProbeEvery + 8);  // a probe measures runs of 8
  EXPECT_TRUE(fw.finds_runs()) << "runs of 8 packets: the firewall should find runs";
  feed(2, 16);  // runs of 2 are still worth it
  EXPECT_TRUE(fw.finds_runs());
  std::map<std::string, uint64_t> c = counters_of(*chain);
  EXPECT_EQ(c["firewall.rx"], (8 + 4 + Firewall::kProbeEvery + 8 + 16) * kBurst);
  EXPECT_EQ(c["firewall.allowed"], c["firewall.rx"]);
}

}  // namespace
}  // namespace nfpark::nf::testing
