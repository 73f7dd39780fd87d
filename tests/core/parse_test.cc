#include "core/parse.h"

#include <gtest/gtest.h>

#include "core/bytes.h"
#include "core/packet_builder.h"
#include "core/packets.h"

namespace nfpark {
namespace {

using testing::ExactBuf;

PacketLayout parse(const std::vector<uint8_t>& f) {
  return ExactBuf(f, uint32_t(f.size())).parse();
}

TEST(Parse, Ipv4Udp) {
  auto f = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1000, 53).payload_size(100).build();
  ASSERT_EQ(f.size(), 14u + 20 + 8 + 100);
  PacketLayout L = parse(f);
  EXPECT_EQ(L.status, ParseStatus::kOk);
  EXPECT_EQ(L.vlans, 0);
  EXPECT_EQ(L.ip_version, 4);
  EXPECT_EQ(L.ethertype, proto::kEthIpv4);
  EXPECT_EQ(L.l3_off, 14);
  EXPECT_EQ(L.l4_off, 34);
  EXPECT_EQ(L.payload_off, 42);
  EXPECT_EQ(L.ip_end, f.size());
  EXPECT_EQ(L.payload_len(), 100u);
  EXPECT_EQ(L.captured_payload(), 100u);
  EXPECT_TRUE(L.is_udp());
  EXPECT_FALSE(L.fragment);
}

TEST(Parse, OneAndTwoVlanTags) {
  auto one = PacketBuilder().vlan(7).ipv4("1.1.1.1", "2.2.2.2").tcp(1, 2).build();
  PacketLayout L = parse(one);
  EXPECT_EQ(L.status, ParseStatus::kOk);
  EXPECT_EQ(L.vlans, 1);
  EXPECT_EQ(L.l3_off, 18);
  EXPECT_EQ(L.l4_off, 38);
  auto two = PacketBuilder().vlan(7, 0x88A8).vlan(9).ipv4("1.1.1.1", "2.2.2.2").tcp(1, 2).build();
  L = parse(two);
  EXPECT_EQ(L.status, ParseStatus::kOk);
  EXPECT_EQ(L.vlans, 2);
  EXPECT_EQ(L.l3_off, 22);
  EXPECT_EQ(L.l4_off, 42);
  EXPECT_EQ(L.payload_off, 62);
}

TEST(Parse, Ipv4OptionsAndTcpOptions) {
  auto f = PacketBuilder()
               .ipv4("1.1.1.1", "2.2.2.2")
               .ipv4_options(2)
               .tcp(1, 2, 0x10, 1, 0, 3)
               .payload_size(10)
               .build();
  PacketLayout L = parse(f);
  EXPECT_EQ(L.status, ParseStatus::kOk);
  EXPECT_EQ(L.l4_off, 14 + 28);
  EXPECT_EQ(L.payload_off, 14 + 28 + 32);
  EXPECT_TRUE(L.is_tcp());
  EXPECT_EQ(L.payload_len(), 10u);
}

TEST(Parse, Ipv6HopByHop) {
  auto f = PacketBuilder()
               .ipv6("fd00::1", "fd00::2")
               .ipv6_ext_hop_by_hop()
               .udp(5, 6)
               .payload_size(30)
               .build();
  PacketLayout L = parse(f);
  EXPECT_EQ(L.status, ParseStatus::kOk);
  EXPECT_EQ(L.ip_version, 6);
  EXPECT_EQ(L.l4_off, 14 + 40 + 8);
  EXPECT_EQ(L.payload_off, 14 + 48 + 8);
  EXPECT_EQ(L.l4_proto, proto::kUdp);
  EXPECT_EQ(L.ip_end, f.size());
}

TEST(Parse, Ipv6FirstAndLaterFragments) {
  auto base = PacketBuilder().ipv6("fd00::1", "fd00::2").udp(5, 6).payload_size(40).build();
  PacketLayout L = parse(testing::with_ipv6_fragment(base, 0, true));
  EXPECT_EQ(L.status, ParseStatus::kOk);
  EXPECT_TRUE(L.fragment);
  EXPECT_TRUE(L.first_fragment);
  EXPECT_EQ(L.l4_off, 14 + 48);
  EXPECT_TRUE(L.is_udp());
  L = parse(testing::with_ipv6_fragment(base, 3, false));
  EXPECT_EQ(L.status, ParseStatus::kOk);
  EXPECT_TRUE(L.fragment);
  EXPECT_FALSE(L.first_fragment);
  EXPECT_EQ(L.l4_off, 0);
  EXPECT_EQ(L.payload_off, 14 + 48);
  EXPECT_FALSE(L.has_ports());
}

TEST(Parse, Ipv4LaterFragmentHasNoL4) {
  auto f = PacketBuilder().ipv4("1.1.1.1", "2.2.2.2").udp(1, 2).payload_size(20).build();
  store_be16(f.data() + 14 + 6, 0x0010);  // offset 16 units, no MF
  PacketLayout L = parse(f);
  EXPECT_EQ(L.status, ParseStatus::kOk);
  EXPECT_TRUE(L.fragment);
  EXPECT_FALSE(L.first_fragment);
  EXPECT_EQ(L.l4_off, 0);
  EXPECT_EQ(L.payload_off, 34);
}

// A first fragment carries the UDP header of the whole datagram: its UDP length runs past the
// fragment's end, and that is no malformation.
TEST(Parse, Ipv4FirstFragmentOfALongUdpDatagram) {
  auto f = PacketBuilder().ipv4("1.1.1.1", "2.2.2.2").udp(7, 9).payload_size(3000).build();
  f.resize(14 + 20 + 1480);
  store_be16(f.data() + 14 + 2, 20 + 1480);
  store_be16(f.data() + 14 + 6, 0x2000);  // MF, offset 0
  PacketLayout L = parse(f);
  EXPECT_EQ(L.status, ParseStatus::kOk);
  EXPECT_TRUE(L.fragment);
  EXPECT_TRUE(L.first_fragment);
  EXPECT_TRUE(L.is_udp());
  EXPECT_EQ(L.payload_off, 42);
  store_be16(f.data() + 14 + 6, 0);  // not a fragment: the same UDP length is malformed
  EXPECT_EQ(parse(f).status, ParseStatus::kMalformed);
}

TEST(Parse, IcmpAndIcmpV6) {
  auto f = PacketBuilder().ipv4("1.1.1.1", "2.2.2.2").icmp_echo(77, 1).payload_size(8).build();
  PacketLayout L = parse(f);
  EXPECT_EQ(L.status, ParseStatus::kOk);
  EXPECT_EQ(L.l4_proto, proto::kIcmp);
  EXPECT_EQ(L.l4_off, 34);
  EXPECT_EQ(L.payload_off, 42);
  auto g = PacketBuilder().ipv6("fd00::1", "fd00::2").icmp_echo(77, 1).build();
  L = parse(g);
  EXPECT_EQ(L.status, ParseStatus::kOk);
  EXPECT_EQ(L.l4_proto, proto::kIcmpV6);
  EXPECT_EQ(L.l4_off, 54);
  EXPECT_EQ(L.payload_off, 62);
}

// An ICMPv4 error of `type` quoting the first `quote` bytes of `inner`'s IPv4 packet.
std::vector<uint8_t> icmp_error(uint8_t type, const std::vector<uint8_t>& inner, uint32_t quote) {
  auto f = PacketBuilder().ipv4("9.9.9.9", "1.1.1.1").icmp_echo(0, 0).payload_size(quote).build();
  f[34] = type;
  std::copy_n(inner.begin() + 14, quote, f.begin() + 42);
  return f;
}

// RFC 5508: NATs rewrite an error's quoted header, so the quote's IPv4 header and the first
// 8 bytes of its transport header (20 for TCP) are headers; the rest of the quote is payload.
TEST(Parse, IcmpErrorQuoteCountsAsHeader) {
  auto udp = PacketBuilder().ipv4("1.1.1.1", "2.2.2.2").udp(1, 2).payload_size(100).build();
  auto tcp = PacketBuilder().ipv4("1.1.1.1", "2.2.2.2").tcp(1, 2).payload_size(100).build();
  auto opt = PacketBuilder().ipv4("1.1.1.1", "2.2.2.2").ipv4_options(1).udp(1, 2).build();
  for (uint8_t type : {3, 4, 5, 11, 12}) {
    EXPECT_EQ(parse(icmp_error(type, udp, 100)).payload_off, 42 + 20 + 8) << int(type);
  }
  EXPECT_EQ(parse(icmp_error(11, tcp, 100)).payload_off, 42 + 20 + 20);
  EXPECT_EQ(parse(icmp_error(11, tcp, 28)).payload_off, 42 + 28);  // RFC 792's 8 bytes
  EXPECT_EQ(parse(icmp_error(11, opt, 32)).payload_off, 42 + 24 + 8);
  EXPECT_EQ(parse(icmp_error(11, udp, 12)).payload_off, 42);  // quoted IP header cut: no quote
  EXPECT_EQ(parse(icmp_error(8, udp, 100)).payload_off, 42);  // echo request: no quote
  auto later = icmp_error(3, udp, 100);
  store_be16(later.data() + 42 + 6, 0x0010);  // the quote is a non-first fragment: no ports
  EXPECT_EQ(parse(later).payload_off, 42 + 20);
  auto not_v4 = icmp_error(3, udp, 100);
  not_v4[42] = 0x65;
  EXPECT_EQ(parse(not_v4).payload_off, 42);
  // A capture cut inside the quote: headers as far as they were captured.
  PacketLayout L = ExactBuf(icmp_error(3, tcp, 100), 70).parse();
  EXPECT_EQ(L.status, ParseStatus::kOk);
  EXPECT_EQ(L.payload_off, 70);
  EXPECT_EQ(L.captured_payload(), 0u);
}

TEST(Parse, HeaderOnlyCaptureIsOk) {
  auto f = PacketBuilder().ipv4("1.1.1.1", "2.2.2.2").udp(1, 2).payload_size(500).build();
  PacketLayout L = ExactBuf(f, 60).parse();
  EXPECT_EQ(L.status, ParseStatus::kOk);
  EXPECT_EQ(L.payload_len(), 500u);
  EXPECT_EQ(L.captured_payload(), 18u);
}

// Every prefix shorter than the headers is kTruncated; every longer one parses as the whole.
TEST(Parse, TruncatedAtEveryLength) {
  std::vector<std::vector<uint8_t>> frames = {
      PacketBuilder().ipv4("1.1.1.1", "2.2.2.2").udp(1, 2).payload_size(16).build(),
      PacketBuilder()
          .vlan(1, 0x88A8)
          .vlan(2)
          .ipv4("1.1.1.1", "2.2.2.2")
          .ipv4_options(3)
          .tcp(1, 2, 0x18, 1, 0, 4)
          .payload_size(16)
          .build(),
      PacketBuilder()
          .ipv6("fd00::1", "fd00::2")
          .ipv6_ext_hop_by_hop()
          .tcp(1, 2)
          .payload_size(16)
          .build(),
      testing::with_ipv6_fragment(
          PacketBuilder().ipv6("fd00::1", "fd00::2").udp(1, 2).payload_size(16).build(), 0, true),
      PacketBuilder().ipv4("1.1.1.1", "2.2.2.2").icmp_echo(1, 1).payload_size(16).build(),
      PacketBuilder().ipv6("fd00::1", "fd00::2").icmp_echo(1, 1).payload_size(16).build(),
  };
  for (size_t k = 0; k < frames.size(); ++k) {
    const auto& f = frames[k];
    PacketLayout full = parse(f);
    ASSERT_EQ(full.status, ParseStatus::kOk) << k;
    for (uint32_t n = 0; n <= f.size(); ++n) {
      PacketLayout L = ExactBuf(f, n).parse();
      EXPECT_EQ(L.captured, n);
      if (n < full.payload_off) {
        EXPECT_EQ(L.status, ParseStatus::kTruncated) << "frame " << k << " len " << n;
      } else {
        EXPECT_EQ(L.status, ParseStatus::kOk) << "frame " << k << " len " << n;
        EXPECT_EQ(L.payload_off, full.payload_off);
        EXPECT_EQ(L.l4_off, full.l4_off);
      }
    }
  }
}

TEST(Parse, MalformedHeaders) {
  auto udp = PacketBuilder().ipv4("1.1.1.1", "2.2.2.2").udp(1, 2).payload_size(20).build();
  auto tcp = PacketBuilder().ipv4("1.1.1.1", "2.2.2.2").tcp(1, 2).payload_size(20).build();
  auto bad_ihl = udp;
  bad_ihl[14] = 0x44;  // IHL 4 words = 16 bytes
  EXPECT_EQ(parse(bad_ihl).status, ParseStatus::kMalformed);
  auto short_total = udp;
  store_be16(short_total.data() + 16, 19);  // total length < IHL
  EXPECT_EQ(parse(short_total).status, ParseStatus::kMalformed);
  auto wrong_version = udp;
  wrong_version[14] = 0x65;
  EXPECT_EQ(parse(wrong_version).status, ParseStatus::kMalformed);
  auto bad_doff = tcp;
  bad_doff[34 + 12] = 4 << 4;
  EXPECT_EQ(parse(bad_doff).status, ParseStatus::kMalformed);
  auto doff_past_ip = tcp;
  doff_past_ip[34 + 12] = 15 << 4;  // 60-byte TCP header in a 40-byte segment
  EXPECT_EQ(parse(doff_past_ip).status, ParseStatus::kMalformed);
  auto bad_ulen = udp;
  store_be16(bad_ulen.data() + 34 + 4, 7);
  EXPECT_EQ(parse(bad_ulen).status, ParseStatus::kMalformed);
  auto ulen_past_ip = udp;
  store_be16(ulen_past_ip.data() + 34 + 4, 29);
  EXPECT_EQ(parse(ulen_past_ip).status, ParseStatus::kMalformed);
  auto l4_cut_by_ip = udp;
  store_be16(l4_cut_by_ip.data() + 16, 24);  // IP ends inside the UDP header
  EXPECT_EQ(parse(l4_cut_by_ip).status, ParseStatus::kMalformed);
}

TEST(Parse, TooManyVlanTags) {
  auto f = PacketBuilder().vlan(1, 0x88A8).vlan(2).ipv4("1.1.1.1", "2.2.2.2").udp(1, 2).build();
  uint8_t tag[4] = {0x81, 0x00, 0x00, 0x03};
  f.insert(f.begin() + 12, tag, tag + 4);
  EXPECT_EQ(parse(f).status, ParseStatus::kMalformed);
}

TEST(Parse, Ipv6ExtensionHeaderChainTooLong) {
  auto f = PacketBuilder().ipv6("fd00::1", "fd00::2").udp(1, 2).payload_size(8).build();
  // Insert 9 destination-options headers (8 bytes each): more than the parser accepts.
  std::vector<uint8_t> ext;
  for (int i = 0; i < 9; ++i) {
    uint8_t h[8] = {uint8_t(i == 8 ? 17 : 60), 0, 1, 4, 0, 0, 0, 0};
    ext.insert(ext.end(), h, h + 8);
  }
  f.insert(f.begin() + 54, ext.begin(), ext.end());
  f[14 + 6] = 60;
  store_be16(f.data() + 18, uint16_t(load_be16(f.data() + 18) + ext.size()));
  EXPECT_EQ(parse(f).status, ParseStatus::kMalformed);
}

TEST(Parse, NonIp) {
  std::vector<uint8_t> arp(42, 0);
  store_be16(arp.data() + 12, 0x0806);
  PacketLayout L = parse(arp);
  EXPECT_EQ(L.status, ParseStatus::kNotIp);
  EXPECT_EQ(L.ethertype, 0x0806);
  EXPECT_EQ(L.payload_off, 14);
  EXPECT_EQ(L.ip_version, 0);
  std::vector<uint8_t> tagged(46, 0);
  store_be16(tagged.data() + 12, 0x8100);
  store_be16(tagged.data() + 16, 0x88CC);  // LLDP
  L = parse(tagged);
  EXPECT_EQ(L.status, ParseStatus::kNotIp);
  EXPECT_EQ(L.vlans, 1);
  EXPECT_EQ(L.l3_off, 18);
  EXPECT_EQ(to_string(ParseStatus::kNotIp), "not_ip");
}

}  // namespace
}  // namespace nfpark
