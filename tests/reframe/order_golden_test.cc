// Reframer's output order is part of its contract with the benches and the e2e runs: a change
// that makes it cheaper must not change what it emits. Each case runs a seeded random stream
// (many flows, bursts of 32, bypass/pure-ACK/barrier flags, caps that force flushes, a few polls
// without traffic) and compares a hash of the emitted and coalesced sequences with the value the
// implementation before issue 17's cost work produced.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "reframe_test_util.h"

namespace nfpark::reframe::test {
namespace {

struct GoldenCase {
  const char* name;
  Priority priority;
  bool coalesce, bypass_first, self_bypass, prefetch;
  uint32_t flows, max_held;
  uint64_t golden;
};

uint64_t run_case(const GoldenCase& g, ReorderStats& st) {
  ReorderConfig c;
  c.t_buff = 20 * kMicro;
  c.priority = g.priority;
  c.coalesce_acks = g.coalesce;
  c.bypass_first_packet = g.bypass_first;
  c.self_bypass.enabled = g.self_bypass;
  c.self_bypass.probe_packets = 2048;
  c.self_bypass.bypass_packets = 8192;
  c.self_bypass.min_gain = 1.6;  // above this stream's gain (~1.3): it bypasses itself at times
  c.prefetch = g.prefetch;
  c.max_flows = 4096;
  c.max_held_packets = g.max_held;
  c.max_held_flows = g.max_held / 4;
  FlowReorder<uint32_t> r(c);
  std::mt19937_64 rng(g.flows * 7919 + g.max_held);
  Out out;
  std::vector<uint32_t> ids;
  std::vector<PacketMeta> metas;
  std::vector<uint32_t> acks(g.flows + 1, 0);
  Nanos now = 0;
  uint32_t id = 0;
  uint64_t hot = 1;  // a run of packets from one hot flow now and then (something to regroup)
  for (int burst = 0; burst < 4000; ++burst) {
    now += Nanos(rng() % 4000);
    ids.clear();
    metas.clear();
    const size_t n = 1 + rng() % 32;
    for (size_t i = 0; i < n; ++i) {
      uint64_t f = rng() % 8 < 3 ? hot : 1 + rng() % g.flows;
      if (rng() % 64 == 0) hot = 1 + rng() % g.flows;
      uint8_t flags = 0;
      const uint32_t k = uint32_t(rng() % 100);
      if (k < 3) flags |= PacketMeta::kBypass;
      if (k >= 3 && k < 30) flags |= PacketMeta::kPureAck;
      if (k == 99 && rng() % 8 == 0) flags |= PacketMeta::kBarrier;
      if (rng() % 200 == 0) f = 0;  // untracked
      acks[f % acks.size()] += uint32_t(rng() % 3) * 1000;
      ids.push_back(id++);
      metas.push_back(meta(f * 0x9E3779B97F4A7C15ULL + f, flags, acks[f % acks.size()]));
    }
    r.poll(now, out);
    r.push(std::span<const uint32_t>(ids), std::span<const PacketMeta>(metas), now, out);
    if (rng() % 16 == 0) r.poll(now + c.t_buff / 2, out);
  }
  r.flush_all(now + 1, out);
  st = r.stats();
  EXPECT_EQ(out.out.size() + out.dropped.size(), id);
  uint64_t h = 1469598103934665603ULL;
  for (uint32_t x : out.out) h = (h ^ x) * 1099511628211ULL;
  h = (h ^ 0xFFFFFFFF) * 1099511628211ULL;
  for (uint32_t x : out.dropped) h = (h ^ x) * 1099511628211ULL;
  return h;
}

TEST(ReorderGolden, EmitsTheSameOrderAsBefore) {
  const GoldenCase cases[] = {
      {"oldest_in_queue", Priority::kOldestInQueue, false, true, false, true, 3000, 1024,
       0x32a52b2177818d9fULL},
      {"oldest_in_queue-noprefetch", Priority::kOldestInQueue, false, true, false, false, 3000,
       1024, 0x32a52b2177818d9fULL},
      {"oldest_flow+acks", Priority::kOldestFlow, true, false, false, true, 500, 256,
       0xcecb240a8af86786ULL},
      {"shortest_flow", Priority::kShortestFlow, false, true, false, true, 200, 4096,
       0xd830047a5a582a98ULL},
      {"ready+caps", Priority::kReady, true, true, false, true, 5000, 64, 0xd4ce1cb3789bebd5ULL},
      {"self_bypass", Priority::kOldestInQueue, false, true, true, true, 20000, 16384,
       0xb24c61a13c81387aULL},
  };
  for (const GoldenCase& g : cases) {
    ReorderStats st;
    const uint64_t h = run_case(g, st);
    std::printf(
        "  {\"%s\", 0x%016llxULL} slf %.2f -> %.2f coalesced %llu forced %llu barrier "
        "%llu bypass_periods %llu\n",
        g.name, (unsigned long long)h, st.slf_in(), st.slf_out(), (unsigned long long)st.coalesced,
        (unsigned long long)st.flush_forced, (unsigned long long)st.flush_barrier,
        (unsigned long long)st.bypass_periods);
    EXPECT_EQ(h, g.golden) << g.name;
    // The stream exercises what it is meant to: regrouping, and per case its special path.
    EXPECT_GT(st.slf_out(), st.slf_in() * 1.2) << g.name;
    EXPECT_GT(st.flush_barrier, 0u) << g.name;
    if (g.coalesce) {
      EXPECT_GT(st.coalesced, 0u) << g.name;
    }
    if (g.max_held <= 256) {
      EXPECT_GT(st.flush_forced, 0u) << g.name;
    }
    if (g.self_bypass) {
      EXPECT_GT(st.bypass_periods, 0u) << g.name;
    }
  }
}

}  // namespace
}  // namespace nfpark::reframe::test
