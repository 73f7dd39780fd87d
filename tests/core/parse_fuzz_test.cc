// Randomized parser test: ~100k mutated and random buffers, each in a heap block of exactly its
// length, so the sanitizer build reports any read outside [data, data + len).
#include <gtest/gtest.h>

#include <random>

#include "core/checksum.h"
#include "core/flow_key.h"
#include "core/packet_builder.h"
#include "core/packets.h"
#include "core/parse.h"

namespace nfpark {
namespace {

std::vector<std::vector<uint8_t>> seeds() {
  return {
      PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).payload_size(40).build(),
      PacketBuilder()
          .vlan(3)
          .ipv4("10.0.0.1", "10.0.0.2")
          .ipv4_options(2)
          .tcp(1, 2, 0x18, 1, 0, 2)
          .payload_size(40)
          .build(),
      PacketBuilder()
          .vlan(3, 0x88A8)
          .vlan(4)
          .ipv6("fd00::1", "fd00::2")
          .ipv6_ext_hop_by_hop()
          .udp(1, 2)
          .payload_size(40)
          .build(),
      testing::with_ipv6_fragment(
          PacketBuilder().ipv6("fd00::1", "fd00::2").tcp(1, 2).payload_size(40).build(), 0, true),
      PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").icmp_echo(9, 9).payload_size(20).build(),
      PacketBuilder().ipv6("fd00::1", "fd00::2").icmp_echo(9, 9).payload_size(20).build(),
  };
}

// Invariants every parse result must satisfy, whatever the input.
void check(const testing::ExactBuf& b, uint64_t iter) {
  PacketLayout L = b.parse();
  ASSERT_EQ(L.captured, b.len);
  if (L.status == ParseStatus::kOk) {
    ASSERT_NE(L.ip_version, 0) << iter;
    ASSERT_LE(L.l3_off, b.len) << iter;
    ASSERT_LE(L.payload_off, b.len) << iter;
    if (L.l4_off) {
      ASSERT_GT(L.l4_off, L.l3_off) << iter;
      ASSERT_LE(L.l4_off, L.payload_off) << iter;
      ASSERT_LE(L.payload_off, L.ip_end) << iter;
    }
    FlowKey k;
    ASSERT_TRUE(extract_flow_key(b.p.get(), L, k)) << iter;
    (void)k.symmetric_hash();
    // Checksum routines must stay inside the buffer too when the whole segment is present.
    (void)verify_checksums(b.p.get(), L);
  } else if (L.status == ParseStatus::kNotIp) {
    ASSERT_LE(L.payload_off, b.len);
  }
}

TEST(ParseFuzz, MutatedAndRandomBuffers) {
  std::mt19937_64 rng(20240611);
  const auto base = seeds();
  const uint16_t types[] = {0x0800, 0x86DD, 0x8100, 0x88A8, 0x9100, 0x0806};
  uint64_t ok = 0, trunc = 0, malformed = 0, notip = 0;
  for (uint64_t iter = 0; iter < 100000; ++iter) {
    std::vector<uint8_t> f;
    if (iter % 4 != 3) {  // mutate a valid packet: flip bytes, then maybe cut it
      f = base[rng() % base.size()];
      int flips = 1 + int(rng() % 6);
      for (int i = 0; i < flips; ++i) f[rng() % f.size()] = uint8_t(rng());
      if (rng() % 2) f.resize(rng() % (f.size() + 1));
    } else {  // random bytes behind a plausible EtherType
      f.resize(rng() % 160);
      for (auto& x : f) x = uint8_t(rng());
      if (f.size() >= 14) store_be16(f.data() + 12, types[rng() % 6]);
      if (f.size() >= 15 && rng() % 2) f[14] = uint8_t((rng() % 2 ? 0x40 : 0x60) | (rng() % 16));
    }
    testing::ExactBuf b(f, uint32_t(f.size()));
    check(b, iter);
    if (HasFatalFailure()) return;
    switch (b.parse().status) {
      case ParseStatus::kOk:
        ++ok;
        break;
      case ParseStatus::kTruncated:
        ++trunc;
        break;
      case ParseStatus::kMalformed:
        ++malformed;
        break;
      case ParseStatus::kNotIp:
        ++notip;
        break;
    }
  }
  // The corpus must exercise every outcome, or the test proves little.
  EXPECT_GT(ok, 10000u);
  EXPECT_GT(trunc, 10000u);
  EXPECT_GT(malformed, 1000u);
  EXPECT_GT(notip, 1000u);
}

}  // namespace
}  // namespace nfpark
