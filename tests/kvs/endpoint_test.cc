// The L2/L3 surface: ARP and ICMP echo replies, UDP requests found (or dropped, by reason),
// and reply headers a kernel accepts.
#include "kvs/endpoint.h"

#include <gtest/gtest.h>

#include "core/bytes.h"
#include "core/checksum.h"
#include "core/packet_builder.h"
#include "core/parse.h"

namespace nfpark::kvs {
namespace {

constexpr std::array<uint8_t, 6> kMac = {0x02, 0, 0, 0, 0, 0x02};  // PacketBuilder's dst MAC
constexpr uint32_t kIp = 0x0A000002;                               // 10.0.0.2

std::vector<uint8_t> arp_request(uint32_t target) {
  std::vector<uint8_t> f(42);
  std::memset(f.data(), 0xFF, 6);
  const uint8_t smac[6] = {0x02, 9, 9, 9, 9, 9};
  std::memcpy(f.data() + 6, smac, 6);
  store_be16(f.data() + 12, 0x0806);
  uint8_t* a = f.data() + 14;
  store_be16(a, 1);
  store_be16(a + 2, 0x0800);
  a[4] = 6;
  a[5] = 4;
  store_be16(a + 6, 1);
  std::memcpy(a + 8, smac, 6);
  store_be32(a + 14, 0x0A000001);
  store_be32(a + 24, target);
  return f;
}

TEST(Endpoint, AnswersArpForItsAddressOnly) {
  Endpoint e(kMac, kIp, 11211);
  auto req = arp_request(kIp);
  ASSERT_EQ(e.classify(req.data(), 42).kind, FrameKind::kArpRequest);
  EXPECT_EQ(e.arp_reply(req.data()), 42u);
  const uint8_t* a = req.data() + 14;
  EXPECT_EQ(load_be16(a + 6), 2);
  EXPECT_EQ(std::memcmp(a + 8, kMac.data(), 6), 0);
  EXPECT_EQ(load_be32(a + 14), kIp);
  EXPECT_EQ(load_be32(a + 24), 0x0A000001u);
  EXPECT_EQ(req[0], 0x02);  // back to the requester
  EXPECT_EQ(req[5], 9);
  auto other = arp_request(0x0A000009);
  EXPECT_EQ(e.classify(other.data(), 42).drop, Drop::kArpOther);
}

TEST(Endpoint, AnswersIcmpEchoWithValidChecksums) {
  Endpoint e(kMac, kIp, 11211);
  auto f = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").icmp_echo(7, 1).payload_size(56).build();
  const Classified c = e.classify(f.data(), uint32_t(f.size()));
  ASSERT_EQ(c.kind, FrameKind::kIcmpEcho);
  e.icmp_reply(f.data(), c);
  const PacketLayout L = parse_packet(f.data(), uint32_t(f.size()));
  EXPECT_TRUE(verify_checksums(f.data(), L));
  EXPECT_EQ(f[14 + 20], 0);  // echo reply
  EXPECT_EQ(load_be32(f.data() + 14 + 12), kIp);
  EXPECT_EQ(load_be32(f.data() + 14 + 16), 0x0A000001u);
}

TEST(Endpoint, FindsUdpRequestsAndNamesEveryDrop) {
  Endpoint e(kMac, kIp, 11211);
  auto f = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(4000, 11211).payload_size(30).build();
  Classified c = e.classify(f.data(), uint32_t(f.size()));
  ASSERT_EQ(c.kind, FrameKind::kUdp);
  EXPECT_EQ(c.payload_off, 42u);
  EXPECT_EQ(c.payload_len, 30u);
  const Peer p = Endpoint::peer(f.data(), f.data() + 14);
  EXPECT_EQ(p.ip, 0x0A000001u);
  EXPECT_EQ(p.port, 4000);
  auto bad_csum = f;
  bad_csum[50] ^= 1;
  EXPECT_EQ(e.classify(bad_csum.data(), uint32_t(f.size())).drop, Drop::kBadUdp);
  auto no_csum = bad_csum;
  store_be16(no_csum.data() + 40, 0);  // "no checksum" is accepted
  EXPECT_EQ(e.classify(no_csum.data(), uint32_t(f.size())).kind, FrameKind::kUdp);
  auto port = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(4000, 53).payload_size(30).build();
  EXPECT_EQ(e.classify(port.data(), uint32_t(port.size())).drop, Drop::kOtherPort);
  auto other =
      PacketBuilder().ipv4("10.0.0.1", "10.0.0.3").udp(4000, 11211).payload_size(30).build();
  EXPECT_EQ(e.classify(other.data(), uint32_t(other.size())).drop, Drop::kNotOurs);
  auto v6 = PacketBuilder().ipv6("fd00::1", "fd00::2").udp(4000, 11211).payload_size(30).build();
  EXPECT_EQ(e.classify(v6.data(), uint32_t(v6.size())).drop, Drop::kNotIpv4);
  auto vlan = PacketBuilder().vlan(3).ipv4("10.0.0.1", "10.0.0.2").udp(4000, 11211).build();
  EXPECT_EQ(e.classify(vlan.data(), uint32_t(vlan.size())).drop, Drop::kVlan);
  auto tcp = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").tcp(4000, 11211).build();
  EXPECT_EQ(e.classify(tcp.data(), uint32_t(tcp.size())).drop, Drop::kOtherProto);
  EXPECT_EQ(e.classify(f.data(), 30).drop, Drop::kBadIp) << "truncated";
  auto frag = f;
  store_be16(frag.data() + 14 + 6, 0x2000);
  store_be16(frag.data() + 14 + 10, ipv4_header_checksum(frag.data() + 14, 20));
  EXPECT_EQ(e.classify(frag.data(), uint32_t(frag.size())).kind, FrameKind::kFragment);
}

TEST(Endpoint, ReplyHeadersParseAndCheckOut) {
  Endpoint e(kMac, kIp, 11211);
  Peer to;
  to.mac = {0x02, 1, 2, 3, 4, 5};
  to.ip = 0x0A000001;
  to.port = 4000;
  std::vector<uint8_t> f(kReplyHeaders + 100, 'x');
  e.reply_headers(f.data(), to, 100, 9);
  const PacketLayout L = parse_packet(f.data(), uint32_t(f.size()));
  ASSERT_TRUE(L.is_udp());
  EXPECT_EQ(L.ip_end, f.size());
  EXPECT_EQ(ipv4_header_checksum(f.data() + 14, 20), load_be16(f.data() + 24));
  EXPECT_EQ(load_be16(f.data() + 34), 11211);
  EXPECT_EQ(load_be16(f.data() + 36), 4000);
  EXPECT_EQ(load_be16(f.data() + 40), 0) << "UDP checksum: none (RFC 768)";
}

}  // namespace
}  // namespace nfpark::kvs
