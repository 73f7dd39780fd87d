#include "trace/generator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "core/checksum.h"
#include "core/flow_key.h"
#include "trace/trace_stats.h"

namespace nfpark::trace {
namespace {

Trace gen(GenConfig c) {
  EXPECT_EQ(c.validate(), "");
  Trace t;
  generate_trace(c, t);
  EXPECT_EQ(t.size(), c.packets);
  return t;
}

TraceStats stats(const Trace& t) {
  StatsBuilder b(t.size());
  for (size_t i = 0; i < t.size(); ++i) b.add(t[i].ts, t.data(i), t[i].len, t[i].wire_len);
  return b.finish();
}

GenConfig base(uint64_t packets, uint64_t flows, uint32_t slf) {
  GenConfig c;
  c.packets = packets;
  c.flows = flows;
  c.slf = slf;
  return c;
}

TEST(Generator, SlfAndFlowCountAreExact) {
  for (uint32_t k : {1u, 2u, 4u, 16u}) {
    TraceStats s = stats(gen(base(8000, 100, k)));
    EXPECT_DOUBLE_EQ(s.slf, double(k)) << k;
    EXPECT_EQ(s.flows, 100u);
    EXPECT_EQ(s.packets, 8000u);
  }
  GenConfig z = base(8000, 100, 2);
  z.zipf = 1.0;
  TraceStats s = stats(gen(z));
  EXPECT_DOUBLE_EQ(s.slf, 2.0);
  EXPECT_GT(s.max_flow_packets, 5 * 80u);  // flow 0 is far above the uniform share of 80
}

TEST(Generator, IdsUniqueInOrderAndChecksumsValid) {
  GenConfig c = base(3000, 50, 3);
  c.proto = GenProto::kMix;
  c.size = {SizeKind::kImix, 0};
  c.ipv6 = 0.5;
  c.vlan = true;
  Trace t = gen(c);
  uint64_t v6 = 0, tcp = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    PacketLayout L = parse_packet(t.data(i), t[i].len);
    ASSERT_TRUE(L.ok()) << i;
    ASSERT_EQ(L.vlans, 1);
    ASSERT_TRUE(verify_checksums(t.data(i), L)) << i;
    auto id = read_packet_id(t.data(i) + L.payload_off, L.captured_payload());
    ASSERT_TRUE(id.has_value()) << i;
    ASSERT_EQ(*id, i);
    v6 += L.ip_version == 6;
    tcp += L.is_tcp();
  }
  EXPECT_NEAR(double(v6) / 3000, 0.5, 0.2);  // 50 flows: share of flows, not packets
  EXPECT_NEAR(double(tcp) / 3000, 0.5, 0.2);
}

TEST(Generator, FixedSizesAndTheIdMinimum) {
  GenConfig c = base(500, 10, 1);
  c.size = {SizeKind::kFixed, 64};
  Trace t = gen(c);
  for (size_t i = 0; i < t.size(); ++i) ASSERT_EQ(t[i].len, 64u);
  c.size = {SizeKind::kFixed, 9000};
  t = gen(c);
  for (size_t i = 0; i < t.size(); ++i) ASSERT_EQ(t[i].len, 9000u);
  // IPv4/TCP needs 54 B of headers + 12 B of id: 64 is raised to 66.
  c.size = {SizeKind::kFixed, 64};
  c.proto = GenProto::kTcp;
  t = gen(c);
  for (size_t i = 0; i < t.size(); ++i) ASSERT_EQ(t[i].len, 66u);
}

TEST(Generator, SizeDistributionMeans) {
  struct Case {
    SizeKind k;
    double mean, tol;
  } cases[] = {
      {SizeKind::kDc, 882, 12}, {SizeKind::kImix, 361.8, 8}, {SizeKind::kCaida, 894.4, 15}};
  for (auto& cs : cases) {
    GenConfig c = base(40000, 1000, 1);
    c.size = {cs.k, 0};
    c.seed = 11;
    Trace t = gen(c);
    TraceStats s = stats(t);
    EXPECT_NEAR(s.mean_size, cs.mean, cs.tol) << int(cs.k);
    EXPECT_NEAR(c.size.mean(), cs.mean, 0.5);
    if (cs.k == SizeKind::kDc) {  // ~30% of packets with < 160 B of payload
      uint64_t small = 0;
      for (size_t i = 0; i < t.size(); ++i) {
        PacketLayout L = parse_packet(t.data(i), t[i].len);
        small += L.payload_len() < 160;
      }
      EXPECT_NEAR(double(small) / double(t.size()), 0.30, 0.015);
    }
  }
}

TEST(Generator, DeterministicBySeed) {
  GenConfig c = base(2000, 64, 2);
  c.size = {SizeKind::kDc, 0};
  c.proto = GenProto::kMix;
  c.zipf = 0.8;
  Trace a = gen(c), b = gen(c);
  ASSERT_EQ(a.arena_bytes(), b.arena_bytes());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].ts, b[i].ts);
    ASSERT_EQ(a[i].len, b[i].len);
    ASSERT_EQ(0, std::memcmp(a.data(i), b.data(i), a[i].len));
  }
  c.seed = 2;
  Trace d = gen(c);
  bool differ = d.arena_bytes() != a.arena_bytes();
  for (size_t i = 0; !differ && i < a.size(); ++i)
    differ = std::memcmp(a.data(i), d.data(i), a[i].len) != 0;
  EXPECT_TRUE(differ);
}

TEST(Generator, TimestampsFollowTheRate) {
  GenConfig c = base(1001, 10, 1);
  c.rate_gbps = 10;  // 64 B + 24 B overhead = 704 bits = 70.4 ns per packet
  Trace t = gen(c);
  EXPECT_EQ(t[0].ts, 0);
  EXPECT_EQ(t[1000].ts - t[0].ts, 70400);
}

// Max number of flows whose [first, last] packet span covers some position of the trace.
size_t max_live(const Trace& t) {
  std::map<uint64_t, std::pair<size_t, size_t>> span;
  for (size_t i = 0; i < t.size(); ++i) {
    PacketLayout L = parse_packet(t.data(i), t[i].len);
    FlowKey k;
    extract_flow_key(t.data(i), L, k);
    auto [it, fresh] = span.try_emplace(k.hash(), i, i);
    it->second.second = i;
  }
  std::vector<int> delta(t.size() + 1, 0);
  for (auto& [h, s] : span) ++delta[s.first], --delta[s.second + 1];
  int live = 0, best = 0;
  for (int d : delta) best = std::max(best, live += d);
  return size_t(best);
}

TEST(Generator, ActiveBoundsLiveFlows) {
  GenConfig c = base(20000, 2000, 2);
  c.active = 16;
  Trace t = gen(c);
  TraceStats s = stats(t);
  EXPECT_EQ(s.flows, 2000u);
  EXPECT_LE(max_live(t), 16u);
  EXPECT_NEAR(s.slf, 2.0, 0.01);
  // Packets of a flow stay close: 10 packets per flow among 16 live flows.
  EXPECT_LT(s.spatial.p99, 200);
  // Without --active the same population is live across the whole trace.
  c.active = 0;
  EXPECT_GT(max_live(gen(c)), 1000u);
}

TEST(Generator, ValidateNamesTheBadOption) {
  GenConfig c;
  c.flows = 0;
  EXPECT_NE(c.validate().find("--flows"), std::string::npos);
  c = GenConfig{};
  c.ipv6 = 1.5;
  EXPECT_NE(c.validate().find("--ipv6"), std::string::npos);
  SizeSpec s;
  std::string err;
  EXPECT_FALSE(SizeSpec::parse("63", s, &err));
  EXPECT_NE(err.find("64..9000"), std::string::npos);
  EXPECT_TRUE(SizeSpec::parse("caida", s, &err));
  EXPECT_EQ(s.kind, SizeKind::kCaida);
}

}  // namespace
}  // namespace nfpark::trace
