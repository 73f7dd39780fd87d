// Shard: symmetric (a packet and its reply on one worker), spread (flows balance over workers),
// fragments together, non-IP on worker 0, NAT steering by the external port's partition.
#include "core/shard.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "core/packet_builder.h"
#include "park/server_choice.h"
#include "packets.h"

namespace nfpark {
namespace {

uint32_t shard_of(const Shard& s, const std::vector<uint8_t>& f) {
  return s.of(f.data(), uint32_t(f.size()));
}

std::string ip(uint32_t a) {
  return std::to_string(a >> 24) + "." + std::to_string(a >> 16 & 255) + "." +
         std::to_string(a >> 8 & 255) + "." + std::to_string(a & 255);
}

TEST(Shard, OneWorkerTakesEverything) {
  Shard s(1);
  EXPECT_EQ(shard_of(s, PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).build()), 0u);
}

TEST(Shard, BothDirectionsOfEveryFlowOnOneWorker) {
  for (uint32_t n : {2u, 3u, 4u, 7u}) {
    Shard s(n);
    for (uint32_t f = 0; f < 2000; ++f) {
      const std::string a = ip(0x0a000000 + f * 7919), b = ip(0xc0a80000 + f * 104729 % 65536);
      const uint16_t pa = uint16_t(1024 + f * 31), pb = uint16_t(80 + f % 3);
      const auto fwd = PacketBuilder().ipv4(a, b).tcp(pa, pb).payload_size(100).build();
      const auto rev = PacketBuilder().ipv4(b, a).tcp(pb, pa).build();
      ASSERT_EQ(shard_of(s, fwd), shard_of(s, rev)) << "flow " << f << " n " << n;
      ASSERT_LT(shard_of(s, fwd), n);
      const auto fwd6 = PacketBuilder()
                            .ipv6("fd00::1", "fd00::" + std::to_string(f % 9999 + 2))
                            .udp(pa, pb)
                            .build();
      const auto rev6 = PacketBuilder()
                            .ipv6("fd00::" + std::to_string(f % 9999 + 2), "fd00::1")
                            .udp(pb, pa)
                            .build();
      ASSERT_EQ(shard_of(s, fwd6), shard_of(s, rev6));
      const auto echo = PacketBuilder().ipv4(a, b).icmp_echo(uint16_t(f), 1).build();
      const auto reply = PacketBuilder().ipv4(b, a).icmp_echo(uint16_t(f), 1).build();
      ASSERT_EQ(shard_of(s, echo), shard_of(s, reply));
    }
  }
}

TEST(Shard, FlowsSpreadEvenlyOverWorkers) {
  for (uint32_t n : {2u, 3u, 8u}) {
    Shard s(n);
    std::vector<uint32_t> count(n);
    const uint32_t flows = 20000;
    for (uint32_t f = 0; f < flows; ++f)
      ++count[shard_of(
          s,
          PacketBuilder().ipv4(ip(0x0a000001 + f), "192.0.2.1").udp(uint16_t(f * 13), 53).build())];
    for (uint32_t w = 0; w < n; ++w) {  // within 5% of the even share
      EXPECT_GT(count[w], flows / n * 95 / 100) << "worker " << w << " of " << n;
      EXPECT_LT(count[w], flows / n * 105 / 100) << "worker " << w << " of " << n;
    }
  }
  // The ports count: one host pair with many flows spreads too.
  Shard s(2);
  std::array<uint32_t, 2> c{};
  for (uint16_t p = 0; p < 1000; ++p)
    ++c[shard_of(s,
                 PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(uint16_t(2000 + p), 9).build())];
  EXPECT_GT(c[0], 400u);
  EXPECT_GT(c[1], 400u);
}

// With N workers and M NF servers, each worker's flows spread over every server: the shard
// must not be the server choice's hash in disguise (h % 2 for both would tie worker w to
// server w, and half the links would idle).
TEST(Shard, WorkersAndServerChoiceAreIndependent) {
  for (auto spread : {park::Spread::kFiveTuple, park::Spread::kSymmetric}) {
    Shard s(2);
    park::ServerChoice choice(2, spread, 0);
    std::array<std::array<uint32_t, 2>, 2> c{};
    for (uint32_t f = 0; f < 4000; ++f) {
      const auto fr = PacketBuilder()
                          .ipv4(ip(0x0a000001 + f * 3), ip(0xc0a80001 + f % 97))
                          .tcp(uint16_t(1024 + f), 80)
                          .build();
      ++c[shard_of(s, fr)][choice.pick(fr.data(), uint32_t(fr.size()))];
    }
    for (int w = 0; w < 2; ++w)
      for (int k = 0; k < 2; ++k) EXPECT_GT(c[w][k], 800u) << "worker " << w << " server " << k;
  }
}

TEST(Shard, FragmentsOfADatagramTogetherNonIpOnWorkerZero) {
  Shard s(4);
  auto first = PacketBuilder().ipv6("fd00::5", "fd00::9").udp(7000, 9000).payload_size(64).build();
  std::vector<uint32_t> seen;
  for (uint16_t off : {0, 9, 18}) {
    auto f = testing::with_ipv6_fragment(first, off, off != 18);
    seen.push_back(shard_of(s, f));
  }
  EXPECT_EQ(seen[0], seen[1]);
  EXPECT_EQ(seen[1], seen[2]);
  std::vector<uint8_t> arp(60, 0);
  arp[12] = 0x08, arp[13] = 0x06;
  EXPECT_EQ(shard_of(s, arp), 0u);
  EXPECT_EQ(s.of(arp.data(), 0), 0u);
  auto cut = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").tcp(1, 2).build();
  for (uint32_t len = 0; len <= cut.size(); ++len) {  // any length; never past it (ASan)
    testing::ExactBuf b(cut, len);
    EXPECT_LT(s.of(b.p.get(), len), 4u);
  }
}

TEST(Shard, NatRepliesSteeredToThePortsWorker) {
  const uint32_t ext = 0xc6336401;  // 198.51.100.1
  Shard s(3, {SteerRule{{ext}, 1024}});
  for (uint16_t port = 1024; port < 1200; ++port) {
    auto reply = PacketBuilder().ipv4("93.184.216.34", "198.51.100.1").tcp(80, port).build();
    EXPECT_EQ(shard_of(s, reply), uint32_t(port - 1024) % 3);
    auto echo = PacketBuilder().ipv4("9.9.9.9", "198.51.100.1").icmp_echo(port, 1).build();
    EXPECT_EQ(shard_of(s, echo), uint32_t(port - 1024) % 3);
  }
  // Other destinations: the symmetric hash, whatever the port.
  Shard plain(3);
  auto other = PacketBuilder().ipv4("93.184.216.34", "198.51.100.2").tcp(80, 1025).build();
  EXPECT_EQ(shard_of(s, other), shard_of(plain, other));
}

}  // namespace
}  // namespace nfpark
