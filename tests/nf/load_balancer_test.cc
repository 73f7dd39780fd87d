#include "nf/load_balancer.h"

#include <gtest/gtest.h>

#include <set>

#include "core/bytes.h"
#include "nf_harness.h"

namespace nfpark::nf {
namespace {
using testing::Bytes;
using testing::counter;
using testing::ip4;

Bytes flow(uint16_t sport, const char* dst = "192.0.2.10") {
  return PacketBuilder().ipv4("10.0.0.1", dst).tcp(sport, 80).payload_size(900).build();
}
uint32_t dst_ip(const Bytes& b) {
  return load_be32(b.data() + 30);
}

TEST(LoadBalancer, RewritesDestinationAddressAndMacToTheMaglevBackend) {
  auto twin = testing::make_twin<LoadBalancer>(LbConfig{});
  auto& lb = static_cast<LoadBalancer&>(twin.whole());
  std::set<uint32_t> used;
  for (uint16_t p = 1; p <= 200; ++p) {
    Bytes b = flow(p);
    ASSERT_EQ(twin.run1(b, 0), Verdict::kPass);
    uint32_t d = dst_ip(b);
    used.insert(d);
    const LbBackend* be = nullptr;
    for (const auto& x : lb.backends())
      if (x.addr == d) be = &x;
    ASSERT_NE(be, nullptr) << "not a backend: " << d;
    EXPECT_TRUE(std::equal(be->mac.begin(), be->mac.end(), b.begin()));
  }
  EXPECT_EQ(used.size(), 4u);  // 200 flows reach all 4 default backends 10.10.0.1-4
  EXPECT_TRUE(used.count(ip4(10, 10, 0, 1)));
  EXPECT_EQ(counter(lb, "new_flows"), 200u);
}

TEST(LoadBalancer, ExistingFlowsKeepTheirBackendWhenBackendsChange) {
  auto twin = testing::make_twin<LoadBalancer>(LbConfig{});
  std::vector<uint32_t> first;
  for (uint16_t p = 1; p <= 300; ++p) {
    Bytes b = flow(p);
    twin.run1(b, 0);
    first.push_back(dst_ip(b));
  }
  LbBackend extra{ip4(10, 10, 0, 9), {2, 0, 0, 0, 0, 9}, 4};
  static_cast<LoadBalancer&>(twin.whole()).add_backend(extra);
  static_cast<LoadBalancer&>(twin.headers()).add_backend(extra);
  for (uint16_t p = 1; p <= 300; ++p) {
    Bytes b = flow(p);
    twin.run1(b, 1);
    EXPECT_EQ(dst_ip(b), first[p - 1]) << "flow " << p << " moved";
  }
  // New flows do reach the new backend (weight 4 of 8).
  int to_extra = 0;
  for (uint16_t p = 1000; p < 1200; ++p) {
    Bytes b = flow(p);
    twin.run1(b, 2);
    to_extra += dst_ip(b) == extra.addr;
  }
  EXPECT_GT(to_extra, 60);
}

TEST(LoadBalancer, FlowsOfARemovedBackendAreRerouted) {
  auto twin = testing::make_twin<LoadBalancer>(LbConfig{});
  const uint32_t gone = ip4(10, 10, 0, 2);
  std::vector<uint16_t> victims;
  for (uint16_t p = 1; p <= 100; ++p) {
    Bytes b = flow(p);
    twin.run1(b, 0);
    if (dst_ip(b) == gone) victims.push_back(p);
  }
  ASSERT_FALSE(victims.empty());
  EXPECT_TRUE(static_cast<LoadBalancer&>(twin.whole()).remove_backend(gone));
  EXPECT_TRUE(static_cast<LoadBalancer&>(twin.headers()).remove_backend(gone));
  for (uint16_t p : victims) {
    Bytes b = flow(p);
    twin.run1(b, 1);
    EXPECT_NE(dst_ip(b), gone);
  }
  EXPECT_EQ(counter(twin.whole(), "rerouted"), victims.size());
}

TEST(LoadBalancer, OnlyVipsAreBalancedWhenConfigured) {
  LbConfig c;
  c.vips = {ip4(192, 0, 2, 10)};
  auto twin = testing::make_twin<LoadBalancer>(c);
  Bytes other = flow(5, "192.0.2.11");
  Bytes copy = other;
  twin.run1(other, 0);
  EXPECT_EQ(other, copy);
  Bytes vip = flow(5, "192.0.2.10");
  twin.run1(vip, 0);
  EXPECT_NE(dst_ip(vip), ip4(192, 0, 2, 10));
  Bytes udp = PacketBuilder().ipv4("10.0.0.1", "192.0.2.10").udp(9, 53).payload_size(0).build();
  twin.run1(udp, 0);  // UDP checksum patched as well (checked by the harness)
  EXPECT_EQ(counter(twin.whole(), "passthrough"), 1u);
}

}  // namespace
}  // namespace nfpark::nf
