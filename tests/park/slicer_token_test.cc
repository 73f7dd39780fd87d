// NFSlicer token layout, DSCP mark (IPv4 checksum, IPv6 traffic class,
// ECN kept), the host-side inspect, config checks.
#include "park/slicer_token.h"

#include <gtest/gtest.h>

#include <set>

#include "core/bytes.h"
#include "core/checksum.h"
#include "core/packet_builder.h"
#include "park/slicer.h"

namespace nfpark::park {
namespace {

TEST(SlicerToken, LayoutPacksCoreGenerationIndex) {
  TokenLayout t(12);  // N = 4096
  EXPECT_EQ(t.generation_bits(), 44u);
  const uint64_t tok = t.make(3, 0xABCDE, 0x123);
  EXPECT_EQ(tok, 0x03000000ABCDE123ull);  // hand-packed: 03 | 000000ABCDE (44 bits) | 123
  EXPECT_EQ(TokenLayout::core(tok), 3);
  EXPECT_EQ(t.generation(tok), 0xABCDEu);
  EXPECT_EQ(t.index(tok), 0x123u);
  EXPECT_EQ(t.generation(t.make(0, ~uint64_t(0), 0)), t.generation_mask());  // gen truncated
  EXPECT_EQ(TokenLayout::core(kEscapeToken), 255);                           // no ring can issue it
}

TEST(SlicerToken, DscpIpv4KeepsEcnAndChecksum) {
  auto p = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).dscp(46).payload_size(10).build();
  PacketLayout L = parse_packet(p.data(), uint32_t(p.size()));
  uint8_t* ip = p.data() + L.l3_off;
  ip[1] |= 0x02;  // ECT(0)
  store_be16(ip + 10, ipv4_header_checksum(ip, 20));
  EXPECT_EQ(read_dscp(p.data(), L), 46);
  write_dscp(p.data(), L, 63);
  EXPECT_EQ(ip[1], 0xFE);
  EXPECT_EQ(load_be16(ip + 10), ipv4_header_checksum(ip, 20));
  write_dscp(p.data(), L, 46);
  EXPECT_EQ(ip[1], 46 << 2 | 0x02);
  EXPECT_TRUE(verify_checksums(p.data(), L));
}

TEST(SlicerToken, DscpIpv6TrafficClass) {
  auto p =
      PacketBuilder().ipv6("2001:db8::1", "2001:db8::2").udp(1, 2).dscp(10).payload_size(4).build();
  PacketLayout L = parse_packet(p.data(), uint32_t(p.size()));
  uint8_t* ip = p.data() + L.l3_off;
  ip[1] |= 0x10;  // ECN = 01 (low TC bits sit in byte 1's high nibble)
  const uint32_t flow = load_be32(ip) & 0xFFFFF;
  EXPECT_EQ(read_dscp(p.data(), L), 10);
  write_dscp(p.data(), L, 63);
  EXPECT_EQ(load_be32(ip) >> 20, 0x6FDu);  // version 6, TC = 0xFD = 63 << 2 | 01
  EXPECT_EQ(load_be32(ip) & 0xFFFFF, flow);
  EXPECT_EQ(read_dscp(p.data(), L), 63);
}

TEST(SlicerToken, InspectPlainPacket) {
  auto p = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).dscp(62).frame_size(900).build();
  PacketLayout L = parse_packet(p.data(), uint32_t(p.size()));
  SliceInfo i = inspect_slice(p.data(), uint32_t(p.size()), uint32_t(p.size()), L);
  EXPECT_EQ(i.mark, SliceMark::kPlain);
  EXPECT_EQ(i.wire_len, 900u);
}

// The rule both sides share: a packet carries a token only if it is TCP/UDP, unfragmented, and
// shorter than its IP length or starting its payload with the escape token — never by DSCP.
TEST(SlicerToken, CarriesTokenIgnoresDscpAndOtherProtocols) {
  auto whole =
      PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).dscp(63).frame_size(300).build();
  PacketLayout L = parse_packet(whole.data(), uint32_t(whole.size()));
  EXPECT_FALSE(carries_token(whole.data(), uint32_t(whole.size()), uint32_t(whole.size()), L))
      << "DSCP 63 alone is not a token";
  const uint32_t cut = 80;  // a header-only capture of it: shorter than its IP length
  EXPECT_TRUE(carries_token(whole.data(), cut, cut, parse_packet(whole.data(), cut)));
  auto esc = whole;
  store_be64(esc.data() + L.payload_off, kEscapeToken);
  EXPECT_TRUE(carries_token(esc.data(), uint32_t(esc.size()), uint32_t(esc.size()), L));
  auto icmp = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").icmp_echo(7, 1).frame_size(300).build();
  PacketLayout I = parse_packet(icmp.data(), 60);
  EXPECT_FALSE(carries_token(icmp.data(), 60, 60, I)) << "ICMP never carries a token";
}

TEST(SlicerToken, ConfigChecksNameTheField) {
  EXPECT_FALSE(check(SlicerConfig{}));
  SlicerConfig c;
  c.ttl = 0;
  ASSERT_TRUE(check(c));
  EXPECT_NE(check(c)->find("slicer.ttl"), std::string::npos);
  c = {};
  c.entries = (1u << 24) + 1;
  EXPECT_NE(check(c)->find("slicer.entries"), std::string::npos);
  c = {};
  c.cores = 0;
  EXPECT_TRUE(check(c));
  EXPECT_EQ(slicer_index_bits(250), 8u);  // the paper's N = 250 -> 256
  EXPECT_EQ(slicer_index_bits(4096), 12u);
  EXPECT_EQ(slicer_index_bits(1), 0u);
}

}  // namespace
}  // namespace nfpark::park
