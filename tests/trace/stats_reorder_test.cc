#include <gtest/gtest.h>

#include "core/packet_builder.h"
#include "trace/reorder.h"
#include "trace/trace_stats.h"

namespace nfpark::trace {
namespace {

std::vector<uint8_t> pkt(char flow) {
  if (flow == 'X') {  // ARP: not IP
    std::vector<uint8_t> f(60, 0);
    f[12] = 0x08, f[13] = 0x06;
    return f;
  }
  return PacketBuilder()
      .ipv4(0x0A000000u + uint32_t(flow), 0x0A000063)
      .udp(1000, 80)
      .payload_size(100)
      .build();
}

TraceStats run(const std::string& flows, Nanos step = 10) {
  StatsBuilder b;
  for (size_t i = 0; i < flows.size(); ++i) {
    auto f = pkt(flows[i]);
    b.add(Nanos(i) * step, f.data(), uint32_t(f.size()), uint32_t(f.size()));
  }
  return b.finish();
}

TEST(Stats, SlfAndDistancesByHand) {
  TraceStats s = run("AABBA");
  EXPECT_EQ(s.packets, 5u);
  EXPECT_EQ(s.flows, 2u);
  EXPECT_EQ(s.runs, 3u);
  EXPECT_DOUBLE_EQ(s.slf, 5.0 / 3);
  // Pairs: A 0->1 (1), B 2->3 (1), A 1->4 (3).
  EXPECT_EQ(s.spatial.count, 3u);
  EXPECT_DOUBLE_EQ(s.spatial.mean, 5.0 / 3);
  EXPECT_DOUBLE_EQ(s.spatial.share_gt1, 1.0 / 3);
  EXPECT_EQ(s.spatial.p50, 1);
  EXPECT_EQ(s.spatial.max, 3);
  EXPECT_DOUBLE_EQ(s.temporal.mean, 50.0 / 3);
  EXPECT_EQ(s.temporal.max, 30);
  EXPECT_EQ(s.ipv4, 5u);
  EXPECT_EQ(s.udp, 5u);
  EXPECT_EQ(s.bytes, 5u * 142);
  EXPECT_DOUBLE_EQ(s.mean_size, 142);
  EXPECT_EQ(s.size_hist[size_bin(142)], 5u);
  EXPECT_EQ(s.mean_flow_packets, 2.5);
  EXPECT_EQ(s.max_flow_packets, 3u);
}

TEST(Stats, RoundRobinAndNonIp) {
  EXPECT_DOUBLE_EQ(run("ABCABC").slf, 1.0);
  EXPECT_DOUBLE_EQ(run("AABBCC").slf, 2.0);
  TraceStats s = run("AXXA");  // non-IP packets form their own pseudo-flow for SLF
  EXPECT_EQ(s.unparsed, 2u);
  EXPECT_EQ(s.flows, 1u);
  EXPECT_EQ(s.runs, 3u);
  EXPECT_EQ(s.spatial.max, 3);
  TraceStats e = run("");
  EXPECT_EQ(e.packets, 0u);
  EXPECT_EQ(e.slf, 0);
}

TEST(Stats, PercentilesAreNearestRank) {
  std::vector<uint32_t> v;
  for (uint32_t i = 1; i <= 100; ++i) v.push_back(101 - i);
  DistSummary d = summarize(v);
  EXPECT_EQ(d.p50, 50);
  EXPECT_EQ(d.p90, 90);
  EXPECT_EQ(d.p99, 99);
  EXPECT_EQ(d.max, 100);
  EXPECT_DOUBLE_EQ(d.mean, 50.5);
}

TEST(Stats, JsonHasTheRequiredKeys) {
  std::string j = run("AABBA").to_json();
  for (const char* k : {"\"packets\"", "\"bytes\"", "\"flows\"", "\"mean_size\"", "\"slf\"",
                        "\"size_hist\"", "\"ipv4\"", "\"ipv6\"", "\"tcp\"", "\"udp\"",
                        "\"spatial_distance\"", "\"temporal_distance_ns\""})
    EXPECT_NE(j.find(k), std::string::npos) << k;
  EXPECT_NE(j.find("\"slf\": 1.6667"), std::string::npos);
}

ReorderStats ro(std::vector<uint64_t> sent, std::vector<uint64_t> recv) {
  return compute_reorder(sent, recv);
}

TEST(Reorder, InOrderHasNoReordering) {
  ReorderStats r = ro({1, 2, 3, 4, 5}, {1, 2, 3, 4, 5});
  EXPECT_EQ(r.reordered, 0u);
  EXPECT_EQ(r.out_of_order_pct, 0);
  EXPECT_EQ(r.lost, 0u);
  EXPECT_EQ(r.matched, 5u);
}

TEST(Reorder, OneSwap) {
  ReorderStats r = ro({1, 2, 3, 4, 5}, {1, 3, 2, 4, 5});
  EXPECT_EQ(r.reordered, 1u);  // 2 arrives after 3
  EXPECT_DOUBLE_EQ(r.out_of_order_pct, 20);
  EXPECT_EQ(r.extent_max, 1u);
  EXPECT_DOUBLE_EQ(r.extent_mean, 1);
}

TEST(Reorder, ExtentCountsBackToTheFirstLaterPacket) {
  // RFC 4737 §4.2: 3 arrives at position 4; the first packet with a larger number (4) arrived at
  // position 2, so its extent is 2.
  ReorderStats r = ro({1, 2, 3, 4, 5, 6}, {1, 2, 4, 5, 3, 6});
  EXPECT_EQ(r.reordered, 1u);
  EXPECT_EQ(r.extent_max, 2u);
  r = ro({1, 2, 3, 4, 5}, {1, 4, 2, 3, 5});  // 2 (extent 1) and 3 (extent 2)
  EXPECT_EQ(r.reordered, 2u);
  EXPECT_DOUBLE_EQ(r.out_of_order_pct, 40);
  EXPECT_EQ(r.extent_max, 2u);
  EXPECT_DOUBLE_EQ(r.extent_mean, 1.5);
  r = ro({1, 2, 3, 4, 5}, {5, 4, 3, 2, 1});
  EXPECT_EQ(r.reordered, 4u);
  EXPECT_EQ(r.extent_max, 4u);
  EXPECT_DOUBLE_EQ(r.extent_mean, 2.5);
}

TEST(Reorder, LossDuplicatesAndStrangers) {
  ReorderStats r = ro({1, 2, 3, 4}, {1, 1, 2, 4, 9});
  EXPECT_EQ(r.lost, 1u);
  EXPECT_EQ(r.duplicated, 1u);
  EXPECT_EQ(r.unmatched, 1u);
  EXPECT_EQ(r.reordered, 0u);
  EXPECT_EQ(r.matched, 3u);
}

TEST(Reorder, RepeatedKeysMatchInOrder) {
  // Frame-hash matching: identical frames are matched to sent copies in order.
  ReorderStats r = ro({7, 7, 8}, {7, 8, 7});
  EXPECT_EQ(r.matched, 3u);
  EXPECT_EQ(r.reordered, 1u);
  EXPECT_EQ(r.duplicated, 0u);
  std::string j = r.to_json();
  for (const char* k : {"out_of_order_pct", "reordering_extent_max", "lost", "duplicated"})
    EXPECT_NE(j.find(k), std::string::npos) << k;
}

}  // namespace
}  // namespace nfpark::trace
