#include "core/flow_key.h"

#include <gtest/gtest.h>

#include <set>

#include "core/packet_builder.h"
#include "core/packets.h"

namespace nfpark {
namespace {

FlowKey key_of(const std::vector<uint8_t>& f) {
  PacketLayout L = parse_packet(f.data(), uint32_t(f.size()));
  FlowKey k;
  EXPECT_TRUE(extract_flow_key(f.data(), L, k));
  return k;
}

TEST(FlowKey, Ipv4Udp) {
  FlowKey k = key_of(PacketBuilder().ipv4("10.1.2.3", "192.168.0.9").udp(1111, 53).build());
  EXPECT_EQ(k.ip_version, 4);
  EXPECT_EQ(k.proto, 17);
  EXPECT_EQ(k.sport, 1111);
  EXPECT_EQ(k.dport, 53);
  std::array<uint8_t, 16> src{};
  src[12] = 10, src[13] = 1, src[14] = 2, src[15] = 3;
  EXPECT_EQ(k.src, src);
  EXPECT_EQ(k.dst[15], 9);
}

TEST(FlowKey, Ipv6TcpAndIcmpEcho) {
  FlowKey k = key_of(PacketBuilder().vlan(5).ipv6("fd00::1", "fd00::2").tcp(7, 8).build());
  EXPECT_EQ(k.ip_version, 6);
  EXPECT_EQ(k.proto, 6);
  EXPECT_EQ(k.src[0], 0xfd);
  EXPECT_EQ(k.src[15], 1);
  EXPECT_EQ(k.dst[15], 2);
  EXPECT_EQ(k.sport, 7);
  FlowKey e = key_of(PacketBuilder().ipv4("1.1.1.1", "2.2.2.2").icmp_echo(4242, 1).build());
  EXPECT_EQ(e.proto, 1);
  EXPECT_EQ(e.sport, 4242);
  EXPECT_EQ(e.dport, 4242);
}

TEST(FlowKey, LaterFragmentHasNoPortsAndNonIpHasNoKey) {
  auto base = PacketBuilder().ipv6("fd00::1", "fd00::2").udp(5, 6).payload_size(40).build();
  FlowKey k = key_of(testing::with_ipv6_fragment(base, 2, false));
  EXPECT_EQ(k.sport, 0);
  EXPECT_EQ(k.dport, 0);
  EXPECT_EQ(k.proto, 17);
  std::vector<uint8_t> arp(42, 0);
  arp[12] = 0x08, arp[13] = 0x06;
  PacketLayout L = parse_packet(arp.data(), 42);
  FlowKey n;
  EXPECT_FALSE(extract_flow_key(arp.data(), L, n));
}

TEST(FlowKey, SymmetricHashMatchesBothDirections) {
  FlowKey a = key_of(PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").tcp(1000, 80).build());
  FlowKey b = key_of(PacketBuilder().ipv4("10.0.0.2", "10.0.0.1").tcp(80, 1000).build());
  EXPECT_EQ(a.reversed(), b);
  EXPECT_EQ(a.reversed().reversed(), a);
  EXPECT_EQ(a.symmetric_hash(), b.symmetric_hash());
  EXPECT_NE(a.hash(), b.hash());
  EXPECT_EQ(a.hash(), FlowKey(a).hash());
  // Same addresses, ports swapped on one side only: a different connection.
  FlowKey c = key_of(PacketBuilder().ipv4("10.0.0.2", "10.0.0.1").tcp(1000, 80).build());
  EXPECT_NE(a.symmetric_hash(), c.symmetric_hash());
}

TEST(FlowKey, HashSpreadsSimilarKeys) {
  // 65536 keys differing only in the source port: no 64-bit collisions, and the low 8 bits
  // (a table index) spread evenly: each of 256 buckets within ±25% of 256.
  std::set<uint64_t> seen;
  std::array<int, 256> bucket{};
  FlowKey k = key_of(PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(0, 80).build());
  for (uint32_t p = 0; p < 65536; ++p) {
    k.sport = uint16_t(p);
    uint64_t h = k.hash();
    seen.insert(h);
    ++bucket[h & 0xFF];
  }
  EXPECT_EQ(seen.size(), 65536u);
  for (int n : bucket) {
    EXPECT_GT(n, 192);
    EXPECT_LT(n, 320);
  }
  EXPECT_NE(hash_bytes("abc", 3), hash_bytes("abd", 3));
  EXPECT_NE(hash_bytes("abc", 3, 1), hash_bytes("abc", 3, 2));
}

}  // namespace
}  // namespace nfpark
