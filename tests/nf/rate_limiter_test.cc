#include "nf/rate_limiter.h"

#include <gtest/gtest.h>

#include "nf_harness.h"

namespace nfpark::nf {
namespace {
using testing::Bytes;
using testing::counter;

Bytes pkt(uint16_t sport, uint32_t frame = 1000) {
  return PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(sport, 9).frame_size(frame).build();
}

RateLimiterConfig slow() {
  RateLimiterConfig c;
  c.rate_bps = 8000;  // 1000 B/s
  c.burst_bytes = 1500;
  return c;
}

TEST(RateLimiter, HandComputedBucket) {
  auto twin = testing::make_twin<RateLimiter>(slow());
  auto run = [&](Nanos t) {
    Bytes b = pkt(1);
    return twin.run1(b, t);
  };
  EXPECT_EQ(run(0), Verdict::kPass);              // 1500 -> 500
  EXPECT_EQ(run(0), Verdict::kDrop);              // 500 < 1000
  EXPECT_EQ(run(500 * kMilli), Verdict::kPass);   // 500 + 500 = 1000 -> 0
  EXPECT_EQ(run(999 * kMilli), Verdict::kDrop);   // 499
  EXPECT_EQ(run(1500 * kMilli), Verdict::kPass);  // 499 + 501 = 1000 -> 0
  EXPECT_EQ(run(100 * kSecond), Verdict::kPass);  // capped at 1500 -> 500
  EXPECT_EQ(run(100 * kSecond), Verdict::kDrop);
  EXPECT_EQ(counter(twin.whole(), "tx_bytes"), 4000u);
  EXPECT_EQ(counter(twin.whole(), "drop.rate_exceeded"), 3u);
  EXPECT_EQ(counter(twin.whole(), "drop_bytes"), 3000u);
}

TEST(RateLimiter, ConformingBytesAreExactlyBurstPlusRateTimesTime) {
  auto twin = testing::make_twin<RateLimiter>(slow());
  // 1000 B every 1 ms for 10 s: passes at 0, 0.5 s, 1.5 s, ..., 9.5 s = 11 packets.
  for (int i = 0; i < 10000; ++i) {
    Bytes b = pkt(1);
    twin.run1(b, i * kMilli);
  }
  EXPECT_EQ(counter(twin.whole(), "tx"), 11u);
  EXPECT_EQ(counter(twin.whole(), "tx_bytes"), 11000u);
  EXPECT_EQ(counter(twin.whole(), "drop.rate_exceeded"), 9989u);
}

TEST(RateLimiter, BucketsArePerFlowAndCountWireLength) {
  auto twin = testing::make_twin<RateLimiter>(slow());
  std::vector<Bytes> burst = {pkt(1, 1400), pkt(2, 1400), pkt(1, 200), pkt(1, 200)};
  auto v = twin.run(burst, 0);      // header-only views carry wire_len 1400/200
  EXPECT_EQ(v[0], Verdict::kPass);  // flow 1: 1500 -> 100
  EXPECT_EQ(v[1], Verdict::kPass);  // flow 2: its own bucket
  EXPECT_EQ(v[2], Verdict::kDrop);  // flow 1: 100 < 200
  EXPECT_EQ(v[3], Verdict::kDrop);
  EXPECT_EQ(counter(twin.whole(), "flows_active"), 2u);
}

TEST(RateLimiter, HighRatesDoNotOverflow) {
  RateLimiterConfig c;
  c.rate_bps = RateLimiterConfig::kMaxRateBps;
  c.burst_bytes = RateLimiterConfig::kMaxBurstBytes;
  auto twin = testing::make_twin<RateLimiter>(c);
  for (Nanos t : {Nanos(0), Nanos(1), 1000 * kSecond, 1000 * kSecond + 7}) {
    Bytes b = pkt(3, 1500);
    EXPECT_EQ(twin.run1(b, t), Verdict::kPass);
  }
}

}  // namespace
}  // namespace nfpark::nf
