#include "core/checksum.h"

#include <gtest/gtest.h>

#include <random>

#include "core/bytes.h"
#include "core/packet_builder.h"
#include "core/parse.h"

namespace nfpark {
namespace {

TEST(Checksum, Rfc1071Example) {
  // RFC 1071 §3: the sum of 0001 f203 f4f5 f6f7 is ddf2 (one's complement, folded).
  const uint8_t d[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
  EXPECT_EQ(csum_partial(d, 8), 0xddf2u);
  EXPECT_EQ(csum_finish(csum_partial(d, 8)), 0x220d);
  // Seeded sums chain: two halves give the same as the whole.
  EXPECT_EQ(csum_fold(csum_partial(d + 4, 4, csum_partial(d, 4))), 0xddf2);
}

TEST(Checksum, OddLengthPadsWithZero) {
  const uint8_t d[] = {0xab, 0xcd, 0xef};
  EXPECT_EQ(csum_partial(d, 3), 0xabcdu + 0xef00u - 0xFFFFu);  // 0x19acd folded = 0x9ace
  EXPECT_EQ(csum_partial(d, 1), 0xab00u);
}

TEST(Checksum, Ipv4HeaderKnownVector) {
  // Classic example header (checksum field ignored by the computation): checksum b861.
  const uint8_t ip[] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                        0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
  EXPECT_EQ(ipv4_header_checksum(ip, 20), 0xb861);
}

TEST(Checksum, UdpKnownVector) {
  // 10.0.0.1:1234 -> 10.0.0.2:80, payload "hi": pseudo header 0a00 0001 0a00 0002 0011 000a,
  // header 04d2 0050 000a, data 6869. Sum = 0x141e + 0x052c + 0x6869 = 0x81b3 -> ~ = 0x7e4c.
  auto f = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1234, 80).payload_size(2).build();
  f[42] = 'h';
  f[43] = 'i';
  PacketLayout L = parse_packet(f.data(), uint32_t(f.size()));
  EXPECT_EQ(l4_checksum(f.data(), L), 0x7e4c);
}

TEST(Checksum, BuilderPacketsVerifyAndCorruptionIsCaught) {
  for (auto f : {PacketBuilder().ipv4("1.2.3.4", "5.6.7.8").tcp(1, 2).payload_size(33).build(),
                 PacketBuilder().ipv6("fd00::1", "fd00::2").udp(1, 2).payload_size(33).build(),
                 PacketBuilder().ipv6("fd00::1", "fd00::2").icmp_echo(1, 2).build()}) {
    PacketLayout L = parse_packet(f.data(), uint32_t(f.size()));
    EXPECT_TRUE(verify_checksums(f.data(), L));
    f.back() ^= 0x40;
    EXPECT_FALSE(verify_checksums(f.data(), L));
  }
}

// RFC 1624 updates vs full recomputation after random rewrites of addresses and ports.
// For UDP, an update may produce 0x0000 where the full computation stores 0xFFFF (RFC 768
// reserves 0 for "no checksum"); both are the same one's-complement value, and callers that
// patch UDP checksums must map 0 to 0xFFFF. The test applies that mapping and counts it.
void rewrite_and_compare(bool v6, bool tcp, uint64_t seed) {
  std::mt19937_64 rng(seed);
  int zero_results = 0;
  for (int it = 0; it < 20000; ++it) {
    PacketBuilder b;
    std::array<uint8_t, 16> s{}, d{};
    for (auto& x : s) x = uint8_t(rng());
    for (auto& x : d) x = uint8_t(rng());
    if (v6)
      b.ipv6(s, d);
    else
      b.ipv4(uint32_t(rng()), uint32_t(rng()));
    if (tcp)
      b.tcp(uint16_t(rng()), uint16_t(rng()));
    else
      b.udp(uint16_t(rng()), uint16_t(rng()));
    auto f = b.payload_size(uint32_t(rng() % 64)).fill(uint8_t(rng())).build();
    uint8_t* p = f.data();
    PacketLayout L = parse_packet(p, uint32_t(f.size()));
    ASSERT_TRUE(L.ok());
    uint8_t* ip = p + L.l3_off;
    uint8_t* l4 = p + L.l4_off;
    uint8_t* csum = l4 + (tcp ? 16 : 6);
    uint16_t l4c = load_be16(csum);
    if (!v6) {
      uint16_t ipc = load_be16(ip + 10);
      for (uint32_t off : {12u, 16u}) {
        if (rng() % 2) continue;
        uint32_t o = load_be32(ip + off), n = uint32_t(rng());
        store_be32(ip + off, n);
        ipc = csum_update32(ipc, o, n);
        l4c = csum_update32(l4c, o, n);
      }
      store_be16(ip + 10, ipc);
      ASSERT_EQ(ipc, ipv4_header_checksum(ip, 20));
    } else {
      for (uint32_t off : {8u, 24u}) {
        if (rng() % 2) continue;
        uint8_t old[16];
        std::memcpy(old, ip + off, 16);
        for (int i = 0; i < 16; ++i) ip[off + i] = uint8_t(rng());
        l4c = csum_update_bytes(l4c, old, ip + off, 16);
      }
    }
    for (uint32_t off : {0u, 2u}) {  // ports
      uint16_t o = load_be16(l4 + off), n = uint16_t(rng());
      store_be16(l4 + off, n);
      l4c = csum_update16(l4c, o, n);
    }
    if (!tcp && l4c == 0) {
      ++zero_results;
      l4c = 0xFFFF;
    }
    store_be16(csum, l4c);
    ASSERT_EQ(l4c, l4_checksum(p, L)) << "iteration " << it;
    ASSERT_TRUE(verify_checksums(p, L));
  }
  EXPECT_LT(zero_results, 10);
}

TEST(ChecksumUpdate, Ipv4Tcp) {
  rewrite_and_compare(false, true, 1);
}
TEST(ChecksumUpdate, Ipv4Udp) {
  rewrite_and_compare(false, false, 2);
}
TEST(ChecksumUpdate, Ipv6Tcp) {
  rewrite_and_compare(true, true, 3);
}
TEST(ChecksumUpdate, Ipv6Udp) {
  rewrite_and_compare(true, false, 4);
}

TEST(ChecksumUpdate, UdpUpdateCanYieldZeroWhereFullGivesFfff) {
  auto f = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1000, 2000).payload_size(4).build();
  PacketLayout L = parse_packet(f.data(), uint32_t(f.size()));
  uint16_t c = load_be16(f.data() + 40);
  // Find a new source port for which the incremental update gives 0x0000.
  int port = -1;
  for (int n = 0; n < 65536 && port < 0; ++n)
    if (csum_update16(c, 1000, uint16_t(n)) == 0) port = n;
  ASSERT_GE(port, 0);
  store_be16(f.data() + 34, uint16_t(port));
  EXPECT_EQ(l4_checksum(f.data(), L), 0xFFFF);  // full computation maps 0 to 0xFFFF
  store_be16(f.data() + 40, 0xFFFF);
  EXPECT_TRUE(verify_checksums(f.data(), L));
}

TEST(ChecksumUpdate, ByteRangeMatchesWordUpdates) {
  const uint8_t o[6] = {1, 2, 3, 4, 5, 6}, n[6] = {9, 8, 7, 6, 5, 4};
  uint16_t a = csum_update_bytes(0x1234, o, n, 6);
  uint16_t b = 0x1234;
  for (int i = 0; i < 6; i += 2) b = csum_update16(b, load_be16(o + i), load_be16(n + i));
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace nfpark
