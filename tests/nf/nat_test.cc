#include "nf/nat.h"

#include <gtest/gtest.h>

#include "core/bytes.h"
#include "nf_harness.h"

namespace nfpark::nf {
namespace {
using testing::Bytes;
using testing::counter;
using testing::ip4;

const uint32_t kExt = ip4(198, 18, 0, 1);

Bytes udp(const char* src, const char* dst, uint16_t sp, uint16_t dp) {
  return PacketBuilder().ipv4(src, dst).udp(sp, dp).payload_size(300).build();
}
Bytes tcp(const char* src, const char* dst, uint16_t sp, uint16_t dp) {
  return PacketBuilder().ipv4(src, dst).tcp(sp, dp).payload_size(700).build();
}
uint32_t src_ip(const Bytes& b) {
  return load_be32(b.data() + 14 + 12);
}
uint32_t dst_ip(const Bytes& b) {
  return load_be32(b.data() + 14 + 16);
}
uint16_t sport(const Bytes& b) {
  return load_be16(b.data() + 34);
}
uint16_t dport(const Bytes& b) {
  return load_be16(b.data() + 36);
}

TEST(Nat, OutboundRewritesSourceAndInboundReplyIsTranslatedBack) {
  auto twin = testing::make_twin<Nat>(NatConfig{});
  Bytes out = udp("10.0.0.5", "8.8.8.8", 5555, 53);
  ASSERT_EQ(twin.run1(out, 0), Verdict::kPass);
  EXPECT_EQ(src_ip(out), kExt);
  EXPECT_EQ(sport(out), 1024);  // first port of the FIFO pool
  EXPECT_EQ(dst_ip(out), ip4(8, 8, 8, 8));
  EXPECT_EQ(dport(out), 53);

  Bytes in = udp("8.8.8.8", "198.18.0.1", 53, 1024);
  ASSERT_EQ(twin.run1(in, 10), Verdict::kPass);
  EXPECT_EQ(dst_ip(in), ip4(10, 0, 0, 5));
  EXPECT_EQ(dport(in), 5555);
  EXPECT_EQ(src_ip(in), ip4(8, 8, 8, 8));

  // Same flow again keeps its mapping; a second flow gets the next port.
  Bytes again = udp("10.0.0.5", "8.8.8.8", 5555, 53);
  twin.run1(again, 20);
  EXPECT_EQ(sport(again), 1024);
  Bytes other = tcp("10.0.0.6", "1.1.1.1", 40000, 443);
  twin.run1(other, 20);
  EXPECT_EQ(sport(other), 1025);
  EXPECT_EQ(src_ip(other), kExt);
  EXPECT_EQ(counter(twin.whole(), "outbound"), 3u);
  EXPECT_EQ(counter(twin.whole(), "inbound"), 1u);
  EXPECT_EQ(counter(twin.whole(), "flows_created"), 2u);
}

TEST(Nat, InboundFromWrongRemoteOrUnmappedPortIsDropped) {
  auto twin = testing::make_twin<Nat>(NatConfig{});
  Bytes out = tcp("10.0.0.5", "93.184.216.34", 1234, 80);
  twin.run1(out, 0);
  Bytes wrong_host = tcp("93.184.216.35", "198.18.0.1", 80, 1024);
  Bytes wrong_port = tcp("93.184.216.34", "198.18.0.1", 81, 1024);
  Bytes wrong_proto = udp("93.184.216.34", "198.18.0.1", 80, 1024);
  Bytes unmapped = tcp("93.184.216.34", "198.18.0.1", 80, 2000);
  for (Bytes* b : {&wrong_host, &wrong_port, &wrong_proto, &unmapped})
    EXPECT_EQ(twin.run1(*b, 1), Verdict::kDrop);
  EXPECT_EQ(counter(twin.whole(), "drop.no_mapping"), 4u);
}

TEST(Nat, IcmpEchoIdentifierIsTranslated) {
  auto twin = testing::make_twin<Nat>(NatConfig{});
  Bytes req =
      PacketBuilder().ipv4("10.1.1.1", "9.9.9.9").icmp_echo(0x4242, 7).payload_size(56).build();
  ASSERT_EQ(twin.run1(req, 0), Verdict::kPass);
  EXPECT_EQ(src_ip(req), kExt);
  EXPECT_EQ(load_be16(req.data() + 34 + 4), 1024);
  Bytes rep =
      PacketBuilder().ipv4("9.9.9.9", "198.18.0.1").icmp_echo(1024, 7).payload_size(56).build();
  rep[34] = 0;  // echo reply
  PacketLayout L = parse_packet(rep.data(), uint32_t(rep.size()));
  fill_checksums(rep.data(), L);
  ASSERT_EQ(twin.run1(rep, 1), Verdict::kPass);
  EXPECT_EQ(dst_ip(rep), ip4(10, 1, 1, 1));
  EXPECT_EQ(load_be16(rep.data() + 34 + 4), 0x4242);
}

TEST(Nat, Ipv6PassesUnchangedAndUnsupportedIsDropped) {
  auto twin = testing::make_twin<Nat>(NatConfig{});
  Bytes v6 = PacketBuilder().ipv6("fd00::1", "2001:db8::1").udp(1, 2).payload_size(100).build();
  Bytes copy = v6;
  EXPECT_EQ(twin.run1(v6, 0), Verdict::kPass);
  EXPECT_EQ(v6, copy);
  Bytes icmp_other =
      PacketBuilder().ipv4("10.0.0.1", "9.9.9.9").icmp_echo(1, 1).payload_size(20).build();
  icmp_other[34] = 3;  // destination unreachable
  fill_checksums(icmp_other.data(), parse_packet(icmp_other.data(), uint32_t(icmp_other.size())));
  EXPECT_EQ(twin.run1(icmp_other, 0), Verdict::kDrop);
  EXPECT_EQ(counter(twin.whole(), "passthrough"), 1u);
  EXPECT_EQ(counter(twin.whole(), "drop.unsupported"), 1u);
}

TEST(Nat, InsidePrefixesDecideDirection) {
  NatConfig c;
  c.inside = {{ip4(10, 0, 0, 0), 8}};
  auto twin = testing::make_twin<Nat>(c);
  Bytes transit = udp("172.16.0.1", "8.8.8.8", 1, 2);  // neither inside nor to an external addr
  Bytes copy = transit;
  EXPECT_EQ(twin.run1(transit, 0), Verdict::kPass);
  EXPECT_EQ(transit, copy);
  Bytes out = udp("10.9.9.9", "8.8.8.8", 1, 2);
  twin.run1(out, 0);
  EXPECT_EQ(src_ip(out), kExt);
}

TEST(Nat, PoolExhaustionIsCountedAndExpiryReusesPorts) {
  NatConfig c;
  c.port_min = 5000;
  c.port_max = 5003;  // 4 ports
  c.idle_timeout = 10 * kSecond;
  c.max_flows = 4096;  // a large table, so that expiry happens through the pool's reclaim probe
  auto twin = testing::make_twin<Nat>(c);
  auto& nat = static_cast<Nat&>(twin.whole());
  for (uint16_t i = 0; i < 4; ++i) {
    Bytes b = udp("10.0.0.1", "8.8.8.8", uint16_t(100 + i), 53);
    ASSERT_EQ(twin.run1(b, 0), Verdict::kPass);
    EXPECT_EQ(sport(b), 5000 + i);
  }
  Bytes fifth = udp("10.0.0.1", "8.8.8.8", 200, 53);
  EXPECT_EQ(twin.run1(fifth, kSecond), Verdict::kDrop);
  EXPECT_EQ(counter(nat, "drop.pool_exhausted"), 1u);
  EXPECT_EQ(nat.free_ports(0), 0u);
  // Flow 100 stays active; the three others idle out after 10 s.
  Bytes keep = udp("10.0.0.1", "8.8.8.8", 100, 53);
  EXPECT_EQ(twin.run1(keep, 5 * kSecond), Verdict::kPass);
  Bytes sixth = udp("10.0.0.1", "8.8.8.8", 300, 53);
  ASSERT_EQ(twin.run1(sixth, 11 * kSecond), Verdict::kPass);  // probes 5000 (live), 5001 (idle)
  EXPECT_EQ(sport(sixth), 5001);
  EXPECT_EQ(counter(nat, "ports_reclaimed"), 1u);
  EXPECT_EQ(counter(nat, "drop.pool_exhausted"), 1u);
  // Port 5001 now belongs to the new flow: only its remote end may use it.
  Bytes stale = udp("8.8.4.4", "198.18.0.1", 53, 5001);
  EXPECT_EQ(twin.run1(stale, 11 * kSecond), Verdict::kDrop);
  Bytes fresh = udp("8.8.8.8", "198.18.0.1", 53, 5001);
  EXPECT_EQ(twin.run1(fresh, 11 * kSecond), Verdict::kPass);
  EXPECT_EQ(dport(fresh), 300);
  // The kept flow still translates.
  Bytes reply = udp("8.8.8.8", "198.18.0.1", 53, 5000);
  EXPECT_EQ(twin.run1(reply, 12 * kSecond), Verdict::kPass);
  EXPECT_EQ(dport(reply), 100);
}

TEST(Nat, SweepReturnsPortsWithoutTraffic) {
  NatConfig c;
  c.port_min = 1000;
  c.port_max = 1099;
  c.idle_timeout = kSecond;
  Nat nat(c);
  for (uint16_t i = 0; i < 100; ++i) {
    Bytes b = udp("10.0.0.1", "8.8.8.8", uint16_t(i + 1), 53);
    PacketView v = testing::view_of(b, uint32_t(b.size()), uint32_t(b.size()));
    Verdict d = Verdict::kPass;
    nat.process({&v, 1}, {&d, 1}, 0);
  }
  EXPECT_EQ(nat.free_ports(0), 0u);
  for (int i = 0; i < 100; ++i) nat.process({}, {}, 2 * kSecond);  // empty bursts still sweep
  EXPECT_EQ(nat.free_ports(0), 100u);
  EXPECT_EQ(nat.active_flows(), 0u);
}

// 1M concurrent flows over 16 external addresses x 64512 ports: none dropped, all replies map.
TEST(Nat, OneMillionConcurrentFlowsWithoutLoss) {
  NatConfig c;
  c.external.clear();
  for (uint32_t i = 0; i < 16; ++i) c.external.push_back(ip4(198, 18, 1, uint8_t(i + 1)));
  Nat nat(c);
  const uint32_t kFlows = 1'000'000;
  Bytes tmpl = PacketBuilder().ipv4("10.0.0.0", "203.0.113.7").udp(1, 443).payload_size(18).build();
  std::vector<Bytes> burst(kBurst, tmpl);
  std::vector<PacketView> views(kBurst);
  std::vector<Verdict> verdicts(kBurst);
  std::vector<uint32_t> ext_of(kFlows);
  std::vector<uint16_t> port_of(kFlows);
  for (uint32_t f0 = 0; f0 < kFlows; f0 += kBurst) {
    for (uint32_t j = 0; j < kBurst; ++j) {
      uint32_t f = f0 + j;
      burst[j] = tmpl;
      store_be32(burst[j].data() + 26, ip4(10, 0, 0, 0) + (f >> 6));  // 64 flows per host
      store_be16(burst[j].data() + 34, uint16_t(10000 + (f & 63)));
      views[j] = testing::view_of(burst[j], uint32_t(burst[j].size()), 1500);
      verdicts[j] = Verdict::kPass;
    }
    nat.process(views, verdicts, Nanos(f0));
    for (uint32_t j = 0; j < kBurst && f0 + j < kFlows; ++j) {
      ASSERT_EQ(verdicts[j], Verdict::kPass) << "flow " << f0 + j;
      ext_of[f0 + j] = src_ip(burst[j]);
      port_of[f0 + j] = sport(burst[j]);
    }
  }
  EXPECT_EQ(nat.active_flows(), size_t(kFlows) + (kBurst - kFlows % kBurst) % kBurst);
  EXPECT_EQ(counter(nat, "drop.pool_exhausted"), 0u);
  EXPECT_EQ(counter(nat, "drop.table_full"), 0u);
  // Replies of a sample of flows map back to their inside endpoint.
  for (uint32_t f = 0; f < kFlows; f += 4099) {
    Bytes r = PacketBuilder()
                  .ipv4(ip4(203, 0, 113, 7), ext_of[f])
                  .udp(443, port_of[f])
                  .payload_size(18)
                  .build();
    PacketView v = testing::view_of(r, uint32_t(r.size()), uint32_t(r.size()));
    Verdict d = Verdict::kPass;
    nat.process({&v, 1}, {&d, 1}, Nanos(kFlows));
    ASSERT_EQ(d, Verdict::kPass) << f;
    EXPECT_EQ(dst_ip(r), ip4(10, 0, 0, 0) + (f >> 6));
    EXPECT_EQ(dport(r), 10000 + (f & 63));
  }
}

}  // namespace
}  // namespace nfpark::nf
