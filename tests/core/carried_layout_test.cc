// CarriedLayout (core/carried_layout.h) keeps a parse as PacketLayout's own first bytes: what it
// restores is parse_packet's layout, field for field, for every packet it keeps, and it keeps
// exactly the unfragmented TCP/UDP packets parsed kOk whose IP length ends within 64 KiB.
#include "core/carried_layout.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "core/packet_builder.h"

namespace nfpark {
namespace {

TEST(CarriedLayout, RestoresTheParseOfEveryPacketItKeeps) {
  std::mt19937_64 rng(29);
  uint64_t kept = 0;
  for (int i = 0; i < 20000; ++i) {
    PacketBuilder b;
    if (rng() % 4 == 0) b.vlan(uint16_t(rng() % 4096));
    if (rng() % 3 == 0)
      b.ipv6("fd00::1", "fd00::2");
    else
      b.ipv4(uint32_t(rng()), uint32_t(rng()));
    switch (rng() % 3) {
      case 0:
        b.udp(uint16_t(rng()), uint16_t(rng()));
        break;
      case 1:
        b.tcp(uint16_t(rng()), uint16_t(rng()), uint8_t(rng()));
        break;
      default:
        b.icmp_echo(1, 2);
    }
    auto p = b.payload_size(uint32_t(rng() % 200)).build();
    const size_t ip = p[12] == 0x81 ? 18 : 14;
    if (rng() % 8 == 0) p[ip + 6] = uint8_t(rng() % 2 ? 0x20 : 0x01);  // IPv4 fragment
    const bool head = rng() % 2;  // a header packet: its first payload_off bytes only
    const PacketLayout full = parse_packet(p.data(), uint32_t(p.size()));
    const uint32_t len = head && full.ok() ? full.payload_off : uint32_t(p.size());
    const PacketLayout L = parse_packet(p.data(), len);
    CarriedLayout c;
    const bool can = L.ok() && L.ip_version != 0 && !L.fragment && L.has_ports();
    ASSERT_EQ(c.keep(L), can) << i;
    if (!can) {
      EXPECT_EQ(c.ip_version, 0) << i;
      continue;
    }
    ++kept;
    PacketLayout r;
    std::memset(static_cast<void*>(&r), 0xA5, sizeof r);  // every field must be written
    c.restore(len, r);
    ASSERT_EQ(r.status, L.status) << i;
    ASSERT_EQ(r.vlans, L.vlans) << i;
    ASSERT_EQ(r.ip_version, L.ip_version) << i;
    ASSERT_EQ(r.l4_proto, L.l4_proto) << i;
    ASSERT_EQ(r.fragment, L.fragment) << i;
    ASSERT_EQ(r.first_fragment, L.first_fragment) << i;
    ASSERT_EQ(r.ethertype, L.ethertype) << i;
    ASSERT_EQ(r.l3_off, L.l3_off) << i;
    ASSERT_EQ(r.l4_off, L.l4_off) << i;
    ASSERT_EQ(r.payload_off, L.payload_off) << i;
    ASSERT_EQ(r.ip_end, L.ip_end) << i;
    ASSERT_EQ(r.captured, L.captured) << i;
  }
  EXPECT_GT(kept, 8000u);
}

// ip_end is kept in 16 bits: a layout that ends past 65535 (an IPv6 jumbo-sized length behind
// VLANs) is not kept, so it is parsed again rather than restored wrong.
TEST(CarriedLayout, RefusesAnIpEndPast16Bits) {
  auto p = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).payload_size(10).build();
  PacketLayout L = parse_packet(p.data(), uint32_t(p.size()));
  CarriedLayout c;
  L.ip_end = 65535;
  EXPECT_TRUE(c.keep(L));
  L.ip_end = 65536;
  CarriedLayout d;
  EXPECT_FALSE(d.keep(L));
  EXPECT_EQ(d.ip_version, 0);
}

}  // namespace
}  // namespace nfpark
