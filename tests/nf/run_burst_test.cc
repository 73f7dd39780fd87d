// FlowRuns (nf/run_burst.h): where a burst's runs begin and end, and which run solo.
#include "nf/run_burst.h"

#include <gtest/gtest.h>

#include <vector>

#include "nat_packets.h"
#include "nf/counter.h"
#include "nf/nat.h"
#include "nf_harness.h"

namespace nfpark::nf::testing {
namespace {

Frame udp(uint8_t host, uint16_t sport) {
  return PacketBuilder().ipv4(ip4(10, 0, 0, host), ip4(192, 0, 2, 1)).udp(sport, 80).build();
}

struct Burst {
  std::vector<Frame> frames;
  std::vector<PacketView> views;
  std::vector<Verdict> verdicts;
  FlowRuns runs;
  explicit Burst(std::vector<Frame> f, std::vector<Verdict> v = {})
      : frames(std::move(f)), verdicts(std::move(v)) {
    verdicts.resize(frames.size(), Verdict::kPass);
    for (Frame& fr : frames) views.push_back(view_of(fr, uint32_t(fr.size()), uint32_t(fr.size())));
    runs.build(views, verdicts);
  }
  // "b-e" per run, "s" after a solo one.
  std::string shape() const {
    std::string s;
    for (size_t r = 0; r < runs.count; ++r)
      s += std::to_string(runs.begin(r)) + "-" + std::to_string(runs.end(r)) +
           (runs.solo[r] ? "s " : " ");
    return s;
  }
};

TEST(FlowRuns, ConsecutivePacketsOfAFlowShareARun) {
  Burst b({udp(1, 5), udp(1, 5), udp(1, 5), udp(2, 5), udp(1, 5), udp(1, 6), udp(1, 6)});
  EXPECT_EQ(b.shape(), "0-3 3-4 4-5 5-7 ");
  EXPECT_EQ(b.runs.hashes[0], FlowKeyHash64{}(b.runs.keys[0]));
  FlowKey k;
  ASSERT_TRUE(extract_flow_key(b.frames[3].data(), b.views[3].layout, k));
  EXPECT_EQ(b.runs.keys[1], k);
}

TEST(FlowRuns, ADroppedPacketDoesNotSplitARun) {
  Burst b({udp(1, 5), udp(2, 5), udp(1, 5), udp(3, 5)},
          {Verdict::kPass, Verdict::kDrop, Verdict::kPass, Verdict::kPass});
  EXPECT_EQ(b.shape(), "0-3 3-4 ");
  Burst lead({udp(2, 5), udp(1, 5), udp(1, 5)}, {Verdict::kDrop});
  EXPECT_EQ(lead.shape(), "0-1s 1-3 ");
}

TEST(FlowRuns, PacketsThatNeedMoreThanTheirKeyRunSolo) {
  const Frame dgram = PacketBuilder()
                          .ipv4(ip4(10, 0, 0, 1), ip4(192, 0, 2, 1))
                          .udp(5, 80)
                          .payload_size(200)
                          .build();
  std::vector<Frame> frags = fragments(dgram, 64);
  Frame arp = udp(1, 5);
  store_be16(arp.data() + 12, 0x0806);
  Frame err = icmp_error(ip4(10, 0, 0, 1), ip4(192, 0, 2, 1), 3, 1, udp(1, 5));
  Frame echo = PacketBuilder().ipv4(ip4(10, 0, 0, 1), ip4(192, 0, 2, 1)).icmp_echo(9, 1).build();
  Burst b({frags[0], frags[1], udp(1, 5), arp, arp, err, err, echo, echo, udp(1, 5)});
  EXPECT_EQ(b.shape(), "0-1s 1-2s 2-3 3-4s 4-5s 5-6s 6-7s 7-9 9-10 ");
}

TEST(FlowRuns, APacketWithTheRunsAddressAndPortBytesJoinsOnlyWhenItsKeyIsTheRuns) {
  // same_v4_ports' shortcut must not take a first fragment or another protocol into a run.
  const Frame dgram = PacketBuilder()
                          .ipv4(ip4(10, 0, 0, 1), ip4(192, 0, 2, 1))
                          .udp(5, 80)
                          .payload_size(200)
                          .build();
  const Frame tcp = PacketBuilder().ipv4(ip4(10, 0, 0, 1), ip4(192, 0, 2, 1)).tcp(5, 80).build();
  Burst b({udp(1, 5), udp(1, 5), fragments(dgram, 64)[0], udp(1, 5), tcp, tcp, udp(1, 5)});
  EXPECT_EQ(b.shape(), "0-2 2-3s 3-4 4-6 6-7 ");
  EXPECT_EQ(b.runs.keys[3].proto, proto::kTcp);
}

TEST(FlowRuns, TheNatRemapsItsRunsToWhatFindingThemAgainGives) {
  // Outbound runs, a dropped packet inside a run, one leading the burst, a solo fragment, an
  // inbound packet with no mapping (dropped) and a run of ICMP echoes.
  const Frame dgram = PacketBuilder()
                          .ipv4(ip4(10, 0, 0, 3), ip4(192, 0, 2, 1))
                          .udp(7, 80)
                          .payload_size(200)
                          .build();
  const Frame echo =
      PacketBuilder().ipv4(ip4(10, 0, 0, 1), ip4(192, 0, 2, 1)).icmp_echo(9, 1).build();
  const Frame in = PacketBuilder().ipv4(ip4(192, 0, 2, 1), ip4(198, 18, 0, 1)).udp(80, 999).build();
  NatConfig nc;
  nc.external = {ip4(198, 18, 0, 1)};
  Nat nat(nc);
  Burst b({udp(4, 5), udp(1, 5), udp(1, 5), udp(2, 5), udp(1, 5), udp(1, 5),
           fragments(dgram, 64)[0], in, echo, echo, udp(2, 5), udp(2, 5)},
          {Verdict::kDrop, Verdict::kPass, Verdict::kPass, Verdict::kPass, Verdict::kPass,
           Verdict::kDrop});
  nat.process_runs(b.views, b.verdicts, b.runs, 1);
  ASSERT_EQ(b.verdicts[7], Verdict::kDrop);
  ASSERT_TRUE(nat.remap_runs(b.views, b.verdicts, b.runs));
  // Every live packet sits, in the remapped runs and in runs found again, in a run of the same
  // kind with the same key and hash: its own translated key. (A run left with no live packet
  // may stay, so the counts may differ.)
  FlowRuns again;
  again.build(b.views, b.verdicts);
  auto run_of = [](const FlowRuns& runs, size_t i) {
    size_t r = 0;
    while (runs.end(r) <= i) ++r;
    return r;
  };
  size_t checked = 0;
  for (size_t i = 0; i < b.views.size(); ++i) {
    if (b.verdicts[i] != Verdict::kPass) continue;
    SCOPED_TRACE("packet " + std::to_string(i));
    const size_t r = run_of(b.runs, i), a = run_of(again, i);
    ASSERT_EQ(b.runs.solo[r], again.solo[a]);
    if (again.solo[a]) continue;
    FlowKey k;
    ASSERT_TRUE(extract_flow_key(b.frames[i].data(), b.views[i].layout, k));
    EXPECT_EQ(b.runs.keys[r], k);
    EXPECT_EQ(again.keys[a], k);
    EXPECT_EQ(b.runs.hashes[r], again.hashes[a]);
    EXPECT_EQ(k.src[12], 198) << "not translated";
    ++checked;
  }
  EXPECT_EQ(checked, 8u);
}

// Reframer's flow ids as hints (nf::RunHints): a packet whose id differs from the one before
// starts a run without key compares; packets of one id are still split by their keys (an id is
// an unkeyed hash: two flows may share one), and a run's hash is its id.
TEST(FlowRuns, HintsGiveTheRunsFindingThemGives) {
  Burst plain({udp(1, 5), udp(1, 5), udp(2, 5), udp(2, 5), udp(2, 6), udp(1, 5)});
  std::vector<uint64_t> ids;
  for (const PacketView& v : plain.views) {
    FlowKey k;
    ASSERT_TRUE(extract_flow_key(v.data, v.layout, k));
    ids.push_back(FlowKeyHash64{}(k));
  }
  const RunHints hints{ids.data()};
  FlowRuns hinted;
  hinted.build(plain.views, plain.verdicts, &hints);
  ASSERT_EQ(hinted.count, plain.runs.count);
  for (size_t r = 0; r < hinted.count; ++r) {
    EXPECT_EQ(hinted.begin(r), plain.runs.begin(r));
    EXPECT_EQ(hinted.solo[r], plain.runs.solo[r]);
    EXPECT_TRUE(hinted.keys[r] == plain.runs.keys[r]);
    EXPECT_EQ(hinted.hashes[r], plain.runs.hashes[r]);
  }
  // Two flows under one id (a collision): still two runs, each with its own key.
  const std::vector<uint64_t> same(ids.size(), ids[0]);
  const RunHints collide{same.data()};
  hinted.build(plain.views, plain.verdicts, &collide);
  ASSERT_EQ(hinted.count, plain.runs.count);
  for (size_t r = 0; r < hinted.count; ++r) {
    EXPECT_EQ(hinted.begin(r), plain.runs.begin(r));
    EXPECT_TRUE(hinted.keys[r] == plain.runs.keys[r]);
  }
}

TEST(FlowRuns, AFullBurstIsCutAtKBurst) {
  std::vector<Frame> f(kBurst + 3, udp(1, 5));
  Burst b(f);
  EXPECT_EQ(b.shape(), "0-32 ");
}

TEST(Chain, FindsRunsAgainAfterAnNfThatRewritesKeys) {
  // The counter after a NAT must count the translated flows, not the keys the burst came with.
  NatConfig nc;
  nc.external = {ip4(198, 18, 0, 1)};
  auto counter_nf = std::make_unique<FlowCounter>(CounterConfig{});
  FlowCounter* counter = counter_nf.get();
  Chain chain;
  chain.add(std::make_unique<Nat>(nc));
  chain.add(std::move(counter_nf));
  std::vector<Frame> f = {udp(1, 5), udp(1, 5), udp(2, 5), udp(2, 5)};
  std::vector<PacketView> v;
  for (Frame& fr : f) v.push_back(view_of(fr, uint32_t(fr.size()), uint32_t(fr.size())));
  std::vector<Verdict> d(f.size(), Verdict::kPass);
  chain.process(v, d, 1);
  for (size_t i = 0; i < f.size(); ++i) {
    FlowKey k;
    ASSERT_TRUE(extract_flow_key(f[i].data(), parse_packet(f[i].data(), uint32_t(f[i].size())), k));
    EXPECT_EQ(k.src[12], 198) << "packet " << i << " not translated";
    const FlowStats* st = counter->find(k, 1);
    ASSERT_NE(st, nullptr) << "packet " << i << ": its translated flow was not counted";
    EXPECT_EQ(st->packets, 2u);
  }
}

}  // namespace
}  // namespace nfpark::nf::testing
