#include "nf/simple.h"

#include <gtest/gtest.h>
#include <x86intrin.h>

#include <map>
#include <string>

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

// count() of a burst's sums counts what process() counts of the same all-kPass burst; only a
// chain of forwards takes sums (Chain::counts_only()), one with any other NF takes views.
TEST(Forward, CountOfTheSumsIsProcessOfTheViews) {
  Forward by_views, by_sums;
  std::vector<Bytes> pk;
  uint64_t wire = 0;
  std::vector<PacketView> v;
  for (uint32_t size : {64u, 1500u, 9000u, 128u, 65u})
    pk.push_back(PacketBuilder().ipv4("1.1.1.1", "2.2.2.2").udp(1, 2).frame_size(size).build());
  for (auto& b : pk) {  // the view holds 60 bytes of each; wire_len is the frame's on the wire
    v.push_back(testing::view_of(b, 60, uint32_t(b.size()) + 7));
    wire += b.size() + 7;
  }
  std::vector<Verdict> d(v.size(), Verdict::kPass);
  by_views.process(v, d, 0);
  by_sums.count_sums(v.size(), wire, 0);
  EXPECT_TRUE(by_sums.counts_only());
  EXPECT_EQ(counter(by_sums, "packets"), counter(by_views, "packets"));
  EXPECT_EQ(counter(by_sums, "bytes"), counter(by_views, "bytes"));
  EXPECT_EQ(counter(by_sums, "bytes"), 64u + 1500u + 9000u + 128u + 65u + 5 * 7u);

  Chain fwds;
  fwds.add(std::make_unique<Forward>());
  fwds.add(std::make_unique<Forward>());
  EXPECT_TRUE(fwds.counts_only());
  fwds.count_sums(3, 300, 0);
  std::map<std::string, uint64_t> c;
  fwds.counters([&](std::string_view k, uint64_t x) { c[std::string(k)] += x; });
  EXPECT_EQ(c["forward.packets"], 6u);  // both forwards report under one name
  EXPECT_EQ(c["forward.bytes"], 600u);
  for (int other = 0; other < 2; ++other) {
    Chain mixed;
    mixed.add(std::make_unique<Forward>());
    if (other == 0) mixed.add(std::make_unique<MacSwap>());
    if (other == 1) mixed.add(std::make_unique<Busy>(1));
    EXPECT_FALSE(mixed.counts_only()) << other;
  }
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
