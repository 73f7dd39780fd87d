#include "nf/router.h"

#include <gtest/gtest.h>
#include <toml++/toml.h>

#include <cstring>
#include <vector>

#include "core/checksum.h"
#include "core/packet_builder.h"
#include "nf_harness.h"

namespace nfpark::nf {
namespace {

// Runs one packet through `nf`; returns the verdict.
Verdict run(Nf& nf, PacketView v) {
  Verdict verdict = Verdict::kPass;
  nf.process(std::span(&v, 1), std::span(&verdict, 1), 0);
  return verdict;
}

std::unique_ptr<Router> make_router() {
  RouterConfig cfg;
  cfg.routes = {"10.0.0.0/8 via 02:00:00:00:00:0a", "10.1.0.0/16 via 02:00:00:00:00:0b",
                "2001:db8::/32 via 02:00:00:00:00:0c"};
  std::string e;
  auto r = Router::create(cfg, e);
  EXPECT_TRUE(r) << e;
  return r;
}

TEST(Router, Ipv4LpmTtlAndMacRewriteWithValidChecksum) {
  auto r = make_router();
  auto pkt =
      PacketBuilder().ipv4("192.168.1.1", "10.1.2.3", 64).tcp(1000, 80).payload_size(100).build();
  ASSERT_EQ(run(*r, testing::view_of(pkt, uint32_t(pkt.size()), uint32_t(pkt.size()))),
            Verdict::kPass);
  auto L = parse_packet(pkt.data(), uint32_t(pkt.size()));
  EXPECT_EQ(pkt[L.l3_off + 8], 63);
  EXPECT_TRUE(verify_checksums(pkt.data(), L));
  const uint8_t nh[6] = {2, 0, 0, 0, 0, 0x0b}, me[6] = {2, 0, 0, 0, 1, 0};
  EXPECT_EQ(std::memcmp(pkt.data(), nh, 6), 0);
  EXPECT_EQ(std::memcmp(pkt.data() + 6, me, 6), 0);
}

TEST(Router, DefaultRouteIpv6HopLimitAndExpiry) {
  auto r = make_router();
  auto v6 =
      PacketBuilder().ipv6("2001:db8::1", "2001:db8::2", 2).udp(1, 2).payload_size(10).build();
  ASSERT_EQ(run(*r, testing::view_of(v6, uint32_t(v6.size()), uint32_t(v6.size()))),
            Verdict::kPass);
  EXPECT_EQ(v6[14 + 7], 1);
  EXPECT_EQ(v6[5], 0x0c);
  EXPECT_EQ(run(*r, testing::view_of(v6, uint32_t(v6.size()), uint32_t(v6.size()))),
            Verdict::kDrop);  // hop limit 1
  auto other = PacketBuilder().ipv4("1.1.1.1", "8.8.8.8", 1).udp(1, 2).build();
  EXPECT_EQ(run(*r, testing::view_of(other, uint32_t(other.size()), uint32_t(other.size()))),
            Verdict::kDrop);
  CounterMap c;
  r->counters(c.sink());
  EXPECT_EQ(c.get("drop.ttl_expired"), 2u);
  EXPECT_EQ(c.get("forwarded"), 1u);
}

TEST(Router, NoDefaultRouteDropsUnmatched) {
  RouterConfig cfg;
  cfg.default_via = "none";
  std::string e;
  auto r = Router::create(cfg, e);
  ASSERT_TRUE(r);
  auto p = PacketBuilder().ipv4("1.1.1.1", "8.8.8.8").udp(1, 2).build();
  EXPECT_EQ(run(*r, testing::view_of(p, uint32_t(p.size()), uint32_t(p.size()))), Verdict::kDrop);
  CounterMap c;
  r->counters(c.sink());
  EXPECT_EQ(c.get("drop.no_route"), 1u);
}

TEST(Router, BadRouteIsAnError) {
  RouterConfig cfg;
  cfg.routes = {"10.0.0.0/8 via 02:00:00:00:0a"};
  std::string e;
  EXPECT_FALSE(Router::create(cfg, e));
  EXPECT_NE(e.find("bad MAC"), std::string::npos) << e;
}

TEST(Router, HeaderOnlyEqualsWholePacket) {
  for (int v6 = 0; v6 < 2; ++v6) {
    PacketBuilder b;
    if (v6)
      b.ipv6("2001:db8::1", "2001:db8:5::2");
    else
      b.ipv4("10.9.9.9", "10.1.200.3", 17).ipv4_options(2);
    auto whole = b.tcp(5, 6).payload_size(900).build();
    auto split = whole;
    const uint32_t hdr = b.header_bytes(), n = uint32_t(whole.size());
    auto r1 = make_router(), r2 = make_router();
    ASSERT_EQ(run(*r1, testing::view_of(whole, n, n)), Verdict::kPass);
    std::vector<uint8_t> head(split.begin(), split.begin() + hdr);
    ASSERT_EQ(run(*r2, testing::view_of(head, hdr, n)), Verdict::kPass);
    std::memcpy(split.data(), head.data(), hdr);
    EXPECT_EQ(split, whole);
    EXPECT_TRUE(verify_checksums(split.data(), parse_packet(split.data(), n)));
  }
}

}  // namespace
}  // namespace nfpark::nf

namespace nfpark::nf {
namespace {

TEST(RouterConfig, ParsesTomlAndRejectsBadKeys) {
  auto t = toml::parse(R"(port_mac = "02:00:00:00:09:09"
routes = ["10.0.0.0/8 via 02:00:00:00:00:0a", "2001:db8::/32 via 02:00:00:00:00:0b"]
default_via = "none")");
  RouterConfig c;
  std::string e;
  ASSERT_TRUE(RouterConfig::parse(t, c, e)) << e;
  EXPECT_EQ(c.port_mac[4], 0x09);
  EXPECT_EQ(c.routes.size(), 2u);
  EXPECT_EQ(c.default_via, "none");
  auto bad = toml::parse(R"(routes = ["10.0.0.0/8 to 02:00:00:00:00:0a"])");
  EXPECT_FALSE(RouterConfig::parse(bad, c, e));
  EXPECT_NE(e.find("expected 'PREFIX via MAC'"), std::string::npos) << e;
  auto typo = toml::parse("port_mack = \"x\"");
  EXPECT_FALSE(RouterConfig::parse(typo, c, e));
  EXPECT_NE(e.find("unknown key 'port_mack'"), std::string::npos) << e;
}

}  // namespace
}  // namespace nfpark::nf
