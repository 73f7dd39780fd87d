#include "nf/counter.h"

#include <gtest/gtest.h>

#include "nf_harness.h"

namespace nfpark::nf {
namespace {
using testing::Bytes;
using testing::counter;

Bytes pkt(uint16_t sport, uint32_t frame) {
  return PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").tcp(sport, 80).frame_size(frame).build();
}
FlowKey key(const Bytes& b) {
  FlowKey k;
  extract_flow_key(b.data(), parse_packet(b.data(), uint32_t(b.size())), k);
  return k;
}

TEST(FlowCounter, CountsPacketsAndWireBytesPerFlow) {
  CounterConfig c;
  c.idle_timeout = 10 * kSecond;
  auto twin = testing::make_twin<FlowCounter>(c);
  std::vector<Bytes> burst = {
      pkt(1, 1500), pkt(2, 64), pkt(1, 700),
      PacketBuilder().ipv6("fd00::1", "fd00::2").udp(1, 2).frame_size(300).build()};
  auto v = twin.run(burst, 0);
  for (Verdict d : v) EXPECT_EQ(d, Verdict::kPass);
  auto& hc = static_cast<FlowCounter&>(twin.headers());  // saw header-only views
  const FlowStats* f1 = hc.find(key(burst[0]), 1);
  ASSERT_NE(f1, nullptr);
  EXPECT_EQ(f1->packets, 2u);
  EXPECT_EQ(f1->bytes, 2200u);
  EXPECT_EQ(hc.find(key(burst[1]), 1)->bytes, 64u);
  EXPECT_EQ(hc.find(key(burst[3]), 1)->bytes, 300u);
  EXPECT_EQ(counter(hc, "packets"), 4u);
  EXPECT_EQ(counter(hc, "bytes"), 2564u);
  EXPECT_EQ(counter(hc, "flows_active"), 3u);
}

TEST(FlowCounter, IdleFlowsExpireAndRestartFromZero) {
  CounterConfig c;
  c.idle_timeout = kSecond;
  FlowCounter fc(c);
  auto feed = [&](Bytes b, Nanos t) {
    PacketView v = testing::view_of(b, uint32_t(b.size()), uint32_t(b.size()));
    Verdict d = Verdict::kPass;
    fc.process({&v, 1}, {&d, 1}, t);
  };
  Bytes a = pkt(1, 100);
  feed(a, 0);
  feed(a, kSecond);  // idle exactly 1 s: same flow
  EXPECT_EQ(fc.find(key(a), kSecond)->packets, 2u);
  feed(a, 3 * kSecond);  // idle 2 s: expired, new flow
  EXPECT_EQ(fc.find(key(a), 3 * kSecond)->packets, 1u);
  EXPECT_EQ(counter(fc, "flows_expired"), 1u);
  EXPECT_EQ(counter(fc, "flows_created"), 2u);
  EXPECT_EQ(counter(fc, "packets"), 3u);
  EXPECT_EQ(fc.find(key(a), 5 * kSecond), nullptr);
}

TEST(FlowCounter, SkipsPacketsDroppedEarlierInTheChain) {
  FlowCounter fc(CounterConfig{});
  Bytes a = pkt(1, 100);
  PacketView v = testing::view_of(a, uint32_t(a.size()), uint32_t(a.size()));
  Verdict d = Verdict::kDrop;
  fc.process({&v, 1}, {&d, 1}, 0);
  EXPECT_EQ(counter(fc, "packets"), 0u);
}

}  // namespace
}  // namespace nfpark::nf
