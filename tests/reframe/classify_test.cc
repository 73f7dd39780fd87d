#include "reframe/classify.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "core/carried_layout.h"
#include "core/flow_key.h"
#include "core/packet_builder.h"

namespace nfpark::reframe {
namespace {

PacketMeta run(const std::vector<uint8_t>& p, const BypassRules& rules = {}) {
  return classify(p.data(), parse_packet(p.data(), uint32_t(p.size())), rules);
}

// Random link and IP layers: a VLAN tag one time in `vlan_in`, IPv6 one time in `v6_in` (random
// addresses), else IPv4 with options one time in `options_in`. True for IPv6.
bool random_l3(PacketBuilder& b, std::mt19937_64& rng, unsigned vlan_in, unsigned v6_in,
               unsigned options_in) {
  if (rng() % vlan_in == 0) b.vlan(uint16_t(rng() % 4096));
  if (rng() % v6_in == 0) {
    std::array<uint8_t, 16> s{}, d{};
    for (auto& x : s) x = uint8_t(rng());
    for (auto& x : d) x = uint8_t(rng());
    b.ipv6(s, d);
    return true;
  }
  b.ipv4(uint32_t(rng()), uint32_t(rng()));
  if (rng() % options_in == 0) b.ipv4_options(uint8_t(1 + rng() % 4));
  return false;
}

TEST(Classify, FlowIdIsTheDirectionalFlowTableHash) {
  auto p = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).payload_size(10).build();
  auto q = PacketBuilder().ipv4("10.0.0.2", "10.0.0.1").udp(2, 1).payload_size(10).build();
  PacketLayout L = parse_packet(p.data(), uint32_t(p.size()));
  FlowKey k;
  ASSERT_TRUE(extract_flow_key(p.data(), L, k));
  EXPECT_EQ(run(p).flow, FlowKeyHash64{}(k));
  EXPECT_NE(run(p).flow, run(q).flow);
  EXPECT_EQ(run(p).flags, 0);
}

// classify() reads IPv4 keys straight from the packet: its flow id must stay the flow table's
// hash of extract_flow_key()'s key for every kind of packet (random addresses and ports; UDP,
// TCP, ICMP echo and error, other protocols, IP options, VLANs, fragments, IPv6, truncation).
TEST(Classify, FlowIdEqualsTheKeyHashOnRandomPackets) {
  std::mt19937_64 rng(17);
  for (int i = 0; i < 4000; ++i) {
    PacketBuilder b;
    const bool v6 = random_l3(b, rng, 4, 5, 4);
    const uint16_t sp = uint16_t(rng()), dp = uint16_t(rng());
    switch (rng() % 4) {
      case 0:
        b.udp(sp, dp);
        break;
      case 1:
        b.tcp(sp, dp, uint8_t(rng()));
        break;
      case 2:
        b.icmp_echo(sp, dp);
        break;
      default:
        break;  // IP only
    }
    auto p = b.payload_size(uint32_t(rng() % 64)).build();
    if (!v6 && rng() % 4 == 0) {  // another protocol, or an ICMP error, or a fragment
      const size_t ip = p[12] == 0x81 ? 18 : 14;
      const int k = int(rng() % 3);
      if (k == 0) p[ip + 9] = 47;                                // GRE: no ports
      if (k == 1 && p[ip + 9] == 1) p[ip + 20] = 3;              // ICMP destination unreachable
      if (k == 2) p[ip + 6] = uint8_t(rng() % 2 ? 0x20 : 0x01);  // first / later fragment
    }
    const uint32_t len = rng() % 8 == 0 ? uint32_t(rng() % p.size()) : uint32_t(p.size());
    const PacketLayout L = parse_packet(p.data(), len);
    FlowKey k;
    const bool keyed = L.ok() && extract_flow_key(p.data(), L, k);
    uint64_t want = keyed ? FlowKeyHash64{}(k) : 0;
    if (keyed && want == 0) want = 1;
    ASSERT_EQ(classify(p.data(), L, {}).flow, want) << "packet " << i;
  }
}

TEST(Classify, SynBypassesUnlessDisabled) {
  auto syn = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").tcp(1, 2, 0x02).build();
  auto synack = PacketBuilder().ipv4("10.0.0.2", "10.0.0.1").tcp(2, 1, 0x12).build();
  EXPECT_TRUE(run(syn).bypass());
  EXPECT_TRUE(run(synack).bypass());
  EXPECT_FALSE(run(synack).pure_ack());
  BypassRules no_syn;
  no_syn.tcp_syn = false;
  EXPECT_FALSE(run(syn, no_syn).bypass());
}

TEST(Classify, DscpMaskAndPredicate) {
  auto ef = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").dscp(46).udp(1, 2).build();
  auto ef6 = PacketBuilder().ipv6("2001:db8::1", "2001:db8::2").dscp(46).udp(1, 2).build();
  auto be = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).build();
  BypassRules r;
  r.dscp_mask = uint64_t(1) << 46;
  EXPECT_TRUE(run(ef, r).bypass());
  EXPECT_TRUE(run(ef6, r).bypass());
  EXPECT_FALSE(run(be, r).bypass());
  BypassRules dns;
  dns.match = [](const uint8_t* p, const PacketLayout& L) {
    return L.is_udp() && p[L.l4_off + 3] == 53;
  };
  auto q = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(999, 53).build();
  EXPECT_TRUE(run(q, dns).bypass());
  EXPECT_FALSE(run(be, dns).bypass());
}

TEST(Classify, PureAckNeedsAckOnlyAndNoPayload) {
  auto ack = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").tcp(1, 2, 0x10, 5, 0xABCDEF01).build();
  auto data =
      PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").tcp(1, 2, 0x10, 5, 7).payload_size(1).build();
  auto ece = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").tcp(1, 2, 0x50, 5, 7).build();
  EXPECT_TRUE(run(ack).pure_ack());
  EXPECT_EQ(run(ack).ack, 0xABCDEF01u);
  EXPECT_FALSE(run(data).pure_ack());
  EXPECT_FALSE(run(ece).pure_ack());
}

TEST(Classify, NonIpIsUntrackedBypass) {
  std::vector<uint8_t> arp(60, 0);
  arp[12] = 0x08;
  arp[13] = 0x06;
  PacketMeta m = run(arp);
  EXPECT_EQ(m.flow, 0u);
  EXPECT_TRUE(m.bypass());
}

// Packets whose meaning depends on other flows keep their place in the stream (a NAT behind
// Reframer needs the first fragment's mapping, and the mapping an ICMP error is about).
TEST(Classify, LaterFragmentsAndIcmpErrorsAreBarriers) {
  auto udp = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).payload_size(100).build();
  auto first = udp, later = udp;
  const size_t ip = 14;
  first[ip + 6] = 0x20;  // MF, offset 0
  later[ip + 6] = 0x00;  // last fragment, offset 185 * 8
  later[ip + 7] = 185;
  EXPECT_FALSE(run(udp).barrier());
  EXPECT_FALSE(run(first).barrier());
  EXPECT_NE(run(first).flow, 0u);
  EXPECT_TRUE(run(later).barrier());
  EXPECT_TRUE(run(later).bypass());

  auto echo = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").icmp_echo(7, 1).payload_size(8).build();
  auto error = echo;
  error[ip + 20] = 3;  // destination unreachable (its quote is not a whole header: still an error)
  error[ip + 21] = 1;
  EXPECT_FALSE(run(echo).barrier());
  EXPECT_TRUE(run(error).barrier());
  for (uint8_t t : {4, 5, 11, 12}) {
    error[ip + 20] = t;
    EXPECT_TRUE(run(error).barrier()) << int(t);
  }
  error[ip + 20] = 13;  // timestamp request: a query
  EXPECT_FALSE(run(error).barrier());
}

// classify()'s inline fast path (the common IPv4 TCP/UDP packet) gives classify_general()'s
// PacketMeta on every input: random packets of every kind (VLANs, options, IPv6, ICMP, other
// protocols, fragments, any TCP flags, DSCP, empty payloads, truncation) under default rules,
// no SYN rule, a DSCP mask and a header-match rule; the fast path must take most of them.
TEST(Classify, FastPathEqualsTheGeneralPath) {
  std::mt19937_64 rng(23);
  BypassRules no_syn, dscp, match;
  no_syn.tcp_syn = false;
  dscp.dscp_mask = uint64_t(1) << 46 | uint64_t(1) << 10;
  match.match = [](const uint8_t* p, const PacketLayout& L) {
    return L.has_ports() && p[L.l4_off + 3] % 3 == 0;
  };
  const BypassRules* rules[] = {nullptr, &no_syn, &dscp, &match};
  const BypassRules plain;
  uint64_t fast = 0, took = 0;
  for (int i = 0; i < 20000; ++i) {
    PacketBuilder b;
    random_l3(b, rng, 8, 6, 6);
    b.dscp(uint8_t(rng() % 4 ? (rng() % 2 ? 46 : 10) : rng() % 64));
    const uint16_t sp = uint16_t(rng()), dp = uint16_t(rng());
    switch (rng() % 5) {
      case 0:
      case 1:
        b.udp(sp, dp);
        break;
      case 2:
      case 3: {
        static constexpr uint8_t kFlags[] = {0x10, 0x02, 0x12, 0x18, 0x11, 0x50, 0x04};
        b.tcp(sp, dp, rng() % 2 ? kFlags[rng() % 7] : uint8_t(rng()), uint32_t(rng()),
              uint32_t(rng()));
        break;
      }
      case 4:
        if (rng() % 2) b.icmp_echo(sp, dp);
        break;
    }
    auto p = b.payload_size(rng() % 3 == 0 ? 0 : uint32_t(rng() % 64)).build();
    const size_t ip = p[12] == 0x81 ? 18 : 14;
    if (rng() % 10 == 0) p[ip + 6] = uint8_t(rng() % 2 ? 0x20 : 0x01);  // a fragment (IPv4)
    if (rng() % 20 == 0) p[ip + 9] = uint8_t(rng());  // any protocol (IPv4; IPv6 hop limit)
    const uint32_t len = rng() % 8 == 0 ? uint32_t(rng() % p.size()) : uint32_t(p.size());
    const PacketLayout L = parse_packet(p.data(), len);
    const BypassRules& r = rules[i % 4] ? *rules[i % 4] : plain;
    bool took_fast = false;
    const PacketMeta a = classify(p.data(), L, r, took_fast), g = classify_general(p.data(), L, r);
    ASSERT_EQ(a.flow, g.flow) << "packet " << i;
    ASSERT_EQ(a.flags, g.flags) << "packet " << i;
    ASSERT_EQ(a.ack, g.ack) << "packet " << i;
    fast += L.ok() && L.ip_version == 4 && !L.fragment && L.has_ports() && !r.match;
    if (took_fast) {  // ReframeStage then keeps the parse with keep_ports(): keep()'s result
      CarriedLayout k, want;
      ASSERT_EQ(k.keep_ports(L), want.keep(L)) << "packet " << i;
      ASSERT_EQ(std::memcmp(&k, &want, sizeof k), 0) << "packet " << i;
      ++took;
    }
  }
  EXPECT_GT(fast, 8000u);  // the fast path's packets were among them
  EXPECT_GT(took, 6000u);  // and it said so (not for the DSCP rule's marked packets)
  EXPECT_LE(took, fast);
}

}  // namespace
}  // namespace nfpark::reframe
