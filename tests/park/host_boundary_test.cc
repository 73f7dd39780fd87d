// Host-boundary byte accounting: hand-computed bytes per mode for a 1518 B UDP frame split at
// 64 B (nicmem's offset) and sliced by NFSlicer (Eth 14 + IPv4 20 + UDP 8 + token 8 = 50 B).
#include "park/host_boundary.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace nfpark::park {
namespace {

constexpr uint32_t kFrame = 1518, kHdrSeg = 64, kSliced = 50;

TEST(HostBoundary, HostModeMovesEverythingBothWays) {
  HostBoundary b(HostMode::kHost);
  b.rx_host(kFrame);
  b.tx_host(kFrame);
  EXPECT_EQ(b.rx().data_bytes, 1518u);
  EXPECT_EQ(b.tx().data_bytes, 1518u);
  EXPECT_EQ(b.rx().descriptors, 1u);
  EXPECT_EQ(b.rx().kept_bytes, 0u);
  EXPECT_EQ(b.total_bytes(b.rx()), 1518u + 16u);
}

// A burst's sums count exactly what the same frames one by one would (the dataplane's baseline
// adds a burst at once).
TEST(HostBoundary, BurstSumsEqualThePerPacketCounts) {
  HostBoundary one(HostMode::kHost), burst(HostMode::kHost);
  const uint32_t frames[] = {64, 1518, 871, 60};
  const uint32_t touched[] = {42, 54, 42, 34};
  uint64_t bytes = 0, hdr = 0;
  for (int i = 0; i < 4; ++i) {
    one.rx_host(frames[i]);
    one.nf(touched[i]);
    one.tx_host(frames[i]);
    bytes += frames[i];
    hdr += touched[i];
  }
  burst.rx_host_burst(4, bytes);
  burst.nf_burst(4, hdr);
  burst.tx_host_burst(4, bytes);
  std::map<std::string, uint64_t> a, b;
  one.report([&](std::string_view k, uint64_t v) { a[std::string(k)] = v; });
  burst.report([&](std::string_view k, uint64_t v) { b[std::string(k)] = v; });
  EXPECT_EQ(a, b);
  EXPECT_EQ(b["rx_packets"], 4u);
  EXPECT_EQ(b["rx_data_bytes"], 2513u);
  EXPECT_EQ(b["tx_descriptors"], 4u);
  EXPECT_EQ(b["nf_touched_bytes"], 172u);
}

TEST(HostBoundary, SplitMovesEverythingWithTwoDescriptors) {
  HostBoundary b(HostMode::kSplit);
  b.rx_split(kHdrSeg, kFrame - kHdrSeg);
  b.tx_split(kHdrSeg, kFrame - kHdrSeg);
  EXPECT_EQ(b.rx().data_bytes, 1518u);
  EXPECT_EQ(b.rx().descriptors, 2u);
  EXPECT_EQ(b.tx().descriptors, 2u);
  EXPECT_EQ(b.total_bytes(b.tx()), 1518u + 32u);
}

TEST(HostBoundary, NicmemMovesHeadersOnlyUntilThePoolRunsOut) {
  HostBoundary b(HostMode::kNicmem);
  b.rx_nicmem(kHdrSeg, kFrame - kHdrSeg, true);
  b.tx_nicmem(kHdrSeg, kFrame - kHdrSeg, true);
  EXPECT_EQ(b.rx().data_bytes, 64u);
  EXPECT_EQ(b.rx().kept_bytes, 1454u);
  EXPECT_EQ(b.tx().data_bytes, 64u);
  EXPECT_EQ(b.nicmem_fallbacks(), 0u);
  b.rx_nicmem(kHdrSeg, kFrame - kHdrSeg, false);  // secondary (host) ring
  b.tx_nicmem(kHdrSeg, kFrame - kHdrSeg, false);
  EXPECT_EQ(b.rx().data_bytes, 64u + 1518u);
  EXPECT_EQ(b.tx().data_bytes, 64u + 1518u);
  EXPECT_EQ(b.nicmem_fallbacks(), 1u);
  b.rx_nicmem(60, 0, true);  // no longer than the split offset: one segment on TX
  b.tx_nicmem(60, 0, true);
  EXPECT_EQ(b.rx().descriptors, 6u);
  EXPECT_EQ(b.tx().descriptors, 5u);
  // 1518 / 64 = 23.7: the "up to 24x" of both papers
  EXPECT_NEAR(double(kFrame) / kHdrSeg, 23.7, 0.05);
}

TEST(HostBoundary, NfslicerMovesHeaderPacketAndToken) {
  HostBoundary b(HostMode::kNfslicer);
  b.rx_nfslicer(kFrame, kSliced);
  b.tx_nfslicer(kFrame, kSliced);
  b.rx_nfslicer(300, 308);    // escaped (wire DSCP 63): 8 bytes more than the wire
  b.tx_nfslicer(0, kSliced);  // a header whose splice was dropped
  b.nf(42);
  b.nf(42);
  EXPECT_EQ(b.rx().data_bytes, 50u + 308u);
  EXPECT_EQ(b.rx().wire_bytes, 1518u + 300u);
  EXPECT_EQ(b.rx().kept_bytes, 1468u);
  EXPECT_EQ(b.tx().wire_bytes, 1518u);
  EXPECT_EQ(b.tx().data_bytes, 100u);
  EXPECT_EQ(b.nf_touched(), 84u);
}

TEST(HostBoundary, ReportAndMerge) {
  HostBoundary a(HostMode::kNicmem, 64), c(HostMode::kNicmem, 64);
  a.rx_nicmem(kHdrSeg, 1454, true);
  c.rx_nicmem(kHdrSeg, 1454, false);
  a.merge_from(c);
  CounterMap m;
  a.report(m.sink("host."));
  EXPECT_EQ(m.get("host.rx_packets"), 2u);
  EXPECT_EQ(m.get("host.rx_data_bytes"), 64u + 1518u);
  EXPECT_EQ(m.get("host.rx_desc_bytes"), 4u * 64u);
  EXPECT_EQ(m.get("host.rx_kept_bytes"), 1454u);
  EXPECT_EQ(m.get("host.nicmem_fallbacks"), 1u);
  EXPECT_EQ(m.values.size(), 15u);
  EXPECT_EQ(parse_host_mode("nicmem"), HostMode::kNicmem);
  EXPECT_EQ(to_string(HostMode::kNfslicer), "nfslicer");
  EXPECT_FALSE(parse_host_mode("nic"));
}

}  // namespace
}  // namespace nfpark::park
