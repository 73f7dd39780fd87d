// PackedLayout (core/carried_layout.h): the 4-byte carried parse the dataplane keeps in an mbuf
// dynamic field gives back exactly what parse_packet gives the bytes — for every shape a packet
// can carry (IPv4 with options, IPv6 with extension headers, TCP with options, UDP, 0-2 VLAN
// tags, the longest IP lengths) and for ~100k of them mutated and cut — and it keeps exactly
// the parses CarriedLayout keeps (kOk TCP/UDP, not a fragment).
#include <gtest/gtest.h>

#include <random>

#include "core/bytes.h"
#include "core/carried_layout.h"
#include "core/packet_builder.h"
#include "core/packets.h"
#include "core/parse.h"

namespace nfpark {
namespace {

void expect_same(const PacketLayout& a, const PacketLayout& b, uint64_t iter) {
  ASSERT_EQ(a.status, b.status) << iter;
  ASSERT_EQ(a.vlans, b.vlans) << iter;
  ASSERT_EQ(a.ip_version, b.ip_version) << iter;
  ASSERT_EQ(a.l4_proto, b.l4_proto) << iter;
  ASSERT_EQ(a.fragment, b.fragment) << iter;
  ASSERT_EQ(a.first_fragment, b.first_fragment) << iter;
  ASSERT_EQ(a.ethertype, b.ethertype) << iter;
  ASSERT_EQ(a.l3_off, b.l3_off) << iter;
  ASSERT_EQ(a.l4_off, b.l4_off) << iter;
  ASSERT_EQ(a.payload_off, b.payload_off) << iter;
  ASSERT_EQ(a.ip_end, b.ip_end) << iter;
  ASSERT_EQ(a.captured, b.captured) << iter;
}

// Packs the parse of f[0, len) and restores it; returns whether it was kept.
bool round_trip(const std::vector<uint8_t>& f, uint32_t len, uint64_t iter) {
  const testing::ExactBuf b(f, len);
  const PacketLayout L = b.parse();
  PackedLayout p;
  CarriedLayout c;
  const bool kept = p.keep(L);
  // Both forms keep the same parses, but for IPv6 extension headers past 468 bytes.
  EXPECT_EQ(kept, c.keep(L) && L.l4_off - L.l3_off < 512) << iter;
  if (!kept) return false;
  PacketLayout back;
  std::memset(static_cast<void*>(&back), 0xA5, sizeof back);  // a field restore forgot would show
  p.restore(len, back);
  expect_same(back, L, iter);
  return true;
}

std::vector<std::vector<uint8_t>> shapes() {
  std::vector<std::vector<uint8_t>> v;
  for (int vlans = 0; vlans <= 2; ++vlans) {
    auto b = [&] {
      PacketBuilder p;
      if (vlans > 0) p.vlan(7, 0x88A8);
      if (vlans > 1) p.vlan(9);
      return p;
    };
    v.push_back(b().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).payload_size(40).build());
    v.push_back(b().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).payload_size(0).build());
    v.push_back(b().ipv4("10.0.0.1", "10.0.0.2")
                    .ipv4_options(10)
                    .tcp(1, 2, 0x18, 1, 0, 10)
                    .payload_size(30)
                    .build());
    v.push_back(b().ipv6("fd00::1", "fd00::2").tcp(5, 6).payload_size(20).build());
    v.push_back(
        b().ipv6("fd00::1", "fd00::2").ipv6_ext_hop_by_hop().udp(5, 6).payload_size(9).build());
  }
  return v;
}

TEST(PackedLayout, RestoresExactlyWhatParsePacketGives) {
  uint64_t iter = 0, kept = 0;
  for (const auto& s : shapes())  // whole, and cut anywhere (header packets, short captures)
    for (uint32_t n = 0; n <= s.size(); ++n) kept += round_trip(s, n, iter++);
  EXPECT_GT(kept, 15u * 5);
  // The longest IP lengths (the buffer holds the headers only: a header-only capture).
  auto v4 = PacketBuilder().vlan(1).vlan(2).ipv4("1.2.3.4", "5.6.7.8").udp(1, 2).build();
  store_be16(v4.data() + 22 + 2, 0xFFFF);
  store_be16(v4.data() + 22 + 20 + 4, 0xFFFF - 20);
  EXPECT_TRUE(round_trip(v4, uint32_t(v4.size()), iter++));
  auto v6 = PacketBuilder().vlan(1).vlan(2).ipv6("fd00::1", "fd00::2").tcp(1, 2).build();
  store_be16(v6.data() + 22 + 4, 0xFFFF);
  EXPECT_TRUE(round_trip(v6, uint32_t(v6.size()), iter++));
  // Not carried: fragments, ICMP, other protocols.
  EXPECT_FALSE(round_trip(testing::with_ipv6_fragment(shapes()[3], 0, true), 200, iter++));
  EXPECT_FALSE(round_trip(
      PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").icmp_echo(1, 1).payload_size(8).build(), 50,
      iter++));
}

TEST(PackedLayout, MutatedHeadersRoundTripOrAreNotKept) {
  std::mt19937_64 rng(8);
  const auto base = shapes();
  uint64_t kept = 0;
  for (uint64_t i = 0; i < 100000; ++i) {
    std::vector<uint8_t> f = base[rng() % base.size()];
    for (int k = 0, flips = 1 + int(rng() % 3); k < flips; ++k)
      f[rng() % std::min<size_t>(f.size(), 80)] = uint8_t(rng());
    if (rng() % 3 == 0) f.resize(rng() % (f.size() + 1));
    kept += round_trip(f, uint32_t(f.size()), i);
    if (HasFailure()) return;
  }
  EXPECT_GT(kept, 10000u);
}

}  // namespace
}  // namespace nfpark
