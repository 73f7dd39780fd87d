#include "nf/simple.h"

#include <gtest/gtest.h>
#include <x86intrin.h>

#include "nf_harness.h"

namespace nfpark::nf {
namespace {
using testing::Bytes;
using testing::counter;

TEST(MacSwap, SwapsMacs) {
  auto twin = testing::make_twin<MacSwap>();
  Bytes b = PacketBuilder()
                .eth({1, 2, 3, 4, 5, 6}, {7, 8, 9, 10, 11, 12})
                .ipv4("1.1.1.1", "2.2.2.2")
                .udp(1, 2)
                .payload_size(50)
                .build();
  twin.run1(b, 0);
  EXPECT_EQ(Bytes(b.begin(), b.begin() + 12), (Bytes{7, 8, 9, 10, 11, 12, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(counter(twin.whole(), "packets"), 1u);
}

TEST(Forward, PassesUnchangedAndCountsWireBytes) {
  auto twin = testing::make_twin<Forward>();
  Bytes b = PacketBuilder().ipv4("1.1.1.1", "2.2.2.2").udp(1, 2).frame_size(1500).build();
  Bytes copy = b;
  EXPECT_EQ(twin.run1(b, 0), Verdict::kPass);
  EXPECT_EQ(b, copy);
  EXPECT_EQ(counter(twin.headers(), "bytes"), 1500u);
}

// A burst where an earlier NF dropped some packets: only the others are counted.
TEST(Forward, CountsOnlyPacketsStillPassing) {
  Forward fwd;
  std::vector<Bytes> pk;
  for (uint32_t size : {64u, 1500u, 9000u, 128u})
    pk.push_back(PacketBuilder().ipv4("1.1.1.1", "2.2.2.2").udp(1, 2).frame_size(size).build());
  std::vector<PacketView> v;
  for (auto& b : pk) v.push_back(testing::view_of(b, uint32_t(b.size()), uint32_t(b.size())));
  std::vector<Verdict> d(4, Verdict::kPass);
  d[1] = d[2] = Verdict::kDrop;
  fwd.process(v, d, 0);
  EXPECT_EQ(counter(fwd, "packets"), 2u);
  EXPECT_EQ(counter(fwd, "bytes"), 64u + 128u);
  EXPECT_EQ(d[0], Verdict::kPass);
  EXPECT_EQ(d[1], Verdict::kDrop);
}

TEST(Busy, SpinsAtLeastTheConfiguredCyclesPerPacket) {
  Busy busy(570);
  std::vector<Bytes> pk(8, PacketBuilder().ipv4("1.1.1.1", "2.2.2.2").udp(1, 2).build());
  std::vector<PacketView> v;
  for (auto& b : pk) v.push_back(testing::view_of(b, uint32_t(b.size()), uint32_t(b.size())));
  std::vector<Verdict> d(8, Verdict::kPass);
  d[3] = Verdict::kDrop;  // skipped
  uint64_t t0 = __rdtsc();
  busy.process(v, d, 0);
  EXPECT_GE(__rdtsc() - t0, 7u * 570u);
  EXPECT_EQ(counter(busy, "packets"), 7u);
}

}  // namespace
}  // namespace nfpark::nf
