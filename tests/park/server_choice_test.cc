// ServerChoice: the spread of flows over M NF servers (each key), failover of a down server's
// flows to the live ones without moving the live servers' flows, liveness (silence while
// something is outstanding), trials with back-off, take-back, late packets.
#include "park/server_choice.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/packet_builder.h"

namespace nfpark::park {
namespace {

std::vector<uint8_t> udp(const char* src, const char* dst, uint16_t sp, uint16_t dp) {
  return PacketBuilder().ipv4(src, dst).udp(sp, dp).payload_size(200).build();
}
uint32_t pick(const ServerChoice& c, const std::vector<uint8_t>& p) {
  return c.pick(p.data(), uint32_t(p.size()));
}

TEST(ServerChoice, FiveTupleSpreadsFlowsOverEveryServerAndKeepsEachFlowOnOne) {
  ServerChoice c(4, Spread::kFiveTuple, 0);
  std::map<uint32_t, int> per;
  for (uint16_t f = 0; f < 400; ++f) {
    auto p = udp("10.0.0.1", "10.0.0.2", uint16_t(1000 + f), 80);
    const uint32_t k = pick(c, p);
    ASSERT_LT(k, 4u);
    EXPECT_EQ(pick(c, p), k);  // a flow always lands on the same server
    ++per[k];
  }
  ASSERT_EQ(per.size(), 4u);
  for (auto& [k, n] : per) EXPECT_GT(n, 50) << "server " << k;  // roughly even (100 expected)
}

TEST(ServerChoice, SrcIpPutsAHostsFlowsOnOneServer) {
  ServerChoice c(4, Spread::kSrcIp, 0);
  std::set<uint32_t> seen;
  for (uint16_t f = 0; f < 50; ++f)
    seen.insert(pick(c, udp("10.0.0.7", "10.9.0.2", uint16_t(1000 + f), uint16_t(80 + f))));
  EXPECT_EQ(seen.size(), 1u);
  std::set<uint32_t> hosts;
  for (int h = 1; h < 60; ++h)
    hosts.insert(pick(c, udp(("10.0.1." + std::to_string(h)).c_str(), "10.9.0.2", 1, 2)));
  EXPECT_EQ(hosts.size(), 4u);
}

TEST(ServerChoice, SymmetricPutsBothDirectionsOnOneServerFiveTupleDoesNot) {
  ServerChoice sym(8, Spread::kSymmetric, 0), five(8, Spread::kFiveTuple, 0);
  int differ = 0;
  for (uint16_t f = 0; f < 64; ++f) {
    auto a = udp("10.0.0.1", "10.0.0.2", uint16_t(2000 + f), 443);
    auto b = udp("10.0.0.2", "10.0.0.1", 443, uint16_t(2000 + f));
    EXPECT_EQ(pick(sym, a), pick(sym, b));
    differ += pick(five, a) != pick(five, b);
  }
  EXPECT_GT(differ, 0);
}

TEST(ServerChoice, NonIpPacketsGoToServerZero) {
  ServerChoice c(3, Spread::kFiveTuple, 0);
  std::vector<uint8_t> arp(60, 0);
  arp[12] = 0x08, arp[13] = 0x06;
  EXPECT_EQ(c.pick(arp.data(), uint32_t(arp.size())), 0u);
}

// A down server's flows move to live ones; the live servers' flows stay where they were.
TEST(ServerChoice, DownServerFlowsMoveLiveServersFlowsStay) {
  const Nanos dead = 100;
  ServerChoice c(3, Spread::kFiveTuple, dead);
  std::vector<std::vector<uint8_t>> flows;
  std::vector<uint32_t> before;
  for (uint16_t f = 0; f < 300; ++f) {
    flows.push_back(udp("10.0.0.1", "10.0.0.2", uint16_t(3000 + f), 53));
    before.push_back(pick(c, flows.back()));
  }
  c.sent(1, 0);
  c.sent(0, 0);
  c.heard(0, 50);  // 0 answers, 1 never does
  std::vector<std::pair<uint32_t, bool>> changes;
  c.tick(99, [&](uint32_t k, bool live) { changes.emplace_back(k, live); });
  EXPECT_TRUE(changes.empty());  // not yet dead_after
  c.tick(100, [&](uint32_t k, bool live) { changes.emplace_back(k, live); });
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0], std::make_pair(1u, false));
  EXPECT_FALSE(c.live(1));
  EXPECT_EQ(c.state(1).downs, 1u);
  std::set<uint32_t> moved_to;
  for (size_t i = 0; i < flows.size(); ++i) {
    const uint32_t now = pick(c, flows[i]);
    EXPECT_NE(now, 1u);
    if (before[i] != 1)
      EXPECT_EQ(now, before[i]);  // a live server's flows never move
    else
      moved_to.insert(now);
  }
  EXPECT_EQ(moved_to.size(), 2u);  // spread over both live servers
}

TEST(ServerChoice, AnIdleServerIsNeverDeclaredDead) {
  ServerChoice c(2, Spread::kFiveTuple, 10);
  int changes = 0;
  c.sent(0, 0);
  c.heard(0, 5);
  c.tick(1000000, [&](uint32_t, bool) { ++changes; });
  EXPECT_EQ(changes, 0);  // answered everything; server 1 was never sent anything
}

TEST(ServerChoice, ZeroDeadAfterMeansServersNeverDie) {
  ServerChoice c(2, Spread::kFiveTuple, 0);
  c.sent(1, 0);
  int changes = 0;
  c.tick(Nanos(1) << 50, [&](uint32_t, bool) { ++changes; });
  EXPECT_EQ(changes, 0);
  EXPECT_TRUE(c.live(1));
}

// Trials: a down server is taken back after dead_after, doubling per failed trial (at most 16x);
// one that answers stays and its back-off starts over.
TEST(ServerChoice, TrialsBackOffAndAnAnsweringServerIsTakenBack) {
  const Nanos d = 100;
  ServerChoice c(2, Spread::kFiveTuple, d);
  std::vector<std::pair<Nanos, bool>> log;
  auto note = [&](Nanos now) {
    c.tick(now, [&](uint32_t k, bool live) {
      EXPECT_EQ(k, 1u);
      log.emplace_back(now, live);
    });
  };
  Nanos t = 0;
  c.sent(1, t);
  note(t + d);  // down at 100, trial at 200
  note(199);
  note(200);  // taken back on trial
  c.sent(1, 200);
  note(300);  // silent again: down, trial at 300 + 200
  note(499);
  note(500);
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[0], std::make_pair(Nanos(100), false));
  EXPECT_EQ(log[1], std::make_pair(Nanos(200), true));
  EXPECT_EQ(log[2], std::make_pair(Nanos(300), false));
  EXPECT_EQ(log[3], std::make_pair(Nanos(500), true));
  EXPECT_TRUE(c.heard(1, 510));  // it answers on trial: it stays
  c.sent(1, 600);
  note(700);  // down again: back-off starts over (trial at 800)
  note(799);
  note(800);
  ASSERT_EQ(log.size(), 6u);
  EXPECT_EQ(log[5], std::make_pair(Nanos(800), true));
  EXPECT_EQ(c.state(1).takebacks, 3u);
  EXPECT_EQ(c.state(1).downs, 3u);
}

TEST(ServerChoice, LateAnswerFromADownServerIsRefusedAndTakesItBack) {
  ServerChoice c(2, Spread::kFiveTuple, 100);
  c.sent(0, 0);
  c.tick(100, [](uint32_t, bool) {});
  ASSERT_FALSE(c.live(0));
  EXPECT_FALSE(c.heard(0, 150));  // stale: the engine drops it
  EXPECT_EQ(c.state(0).late, 1u);
  bool back = false;
  c.tick(150, [&](uint32_t k, bool live) { back = k == 0 && live; });
  EXPECT_TRUE(back);
  EXPECT_TRUE(c.heard(0, 160));
}

TEST(ServerChoice, WithNoServerLiveTheHomeServerIsUsed) {
  ServerChoice c(2, Spread::kFiveTuple, 10);
  c.sent(0, 0);
  c.sent(1, 0);
  c.tick(10, [](uint32_t, bool) {});
  ASSERT_FALSE(c.live(0));
  ASSERT_FALSE(c.live(1));
  for (uint64_t h = 0; h < 8; ++h) EXPECT_EQ(c.pick_hash(h), uint32_t(h % 2));
}

TEST(ServerChoice, ParsesItsSpreadNames) {
  for (Spread s : {Spread::kFiveTuple, Spread::kSrcIp, Spread::kSymmetric})
    EXPECT_EQ(parse_spread(to_string(s)), s);
  EXPECT_FALSE(parse_spread("rss"));
}

}  // namespace
}  // namespace nfpark::park
