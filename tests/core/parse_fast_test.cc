// parse_packet's fast path (untagged IPv4 UDP/TCP, core/parse.cc) gives the general path's
// layout, field for field, on every input: well-formed packets of every shape the fast path
// takes or refuses, and ~200k of them mutated in their headers and cut anywhere, each in a heap
// block of exactly its length (the sanitizer build reports any read outside it).
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "core/bytes.h"
#include "core/packet_builder.h"
#include "core/packets.h"
#include "core/parse.h"

namespace nfpark {
namespace {

void expect_same(const uint8_t* d, uint32_t len, uint64_t iter, uint64_t& fast_ok) {
  PacketLayout a, b;
  std::memset(static_cast<void*>(&a), 0xA5, sizeof a);  // a field the fast path forgot would show
  std::memset(static_cast<void*>(&b), 0x5A, sizeof b);
  parse_packet(d, len, a);
  parse_packet_general(d, len, b);
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
  const PacketLayout c = parse_packet(d, len);  // the returning form agrees too
  ASSERT_EQ(c.payload_off, b.payload_off) << iter;
  ASSERT_EQ(c.status, b.status) << iter;
  if (b.ok() && b.vlans == 0 && b.ip_version == 4 && !b.fragment && b.has_ports()) ++fast_ok;
}

std::vector<std::vector<uint8_t>> seeds() {
  return {
      PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).payload_size(40).build(),
      PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).payload_size(0).build(),
      PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").tcp(1, 2).payload_size(40).build(),
      PacketBuilder()
          .ipv4("10.0.0.1", "10.0.0.2")
          .ipv4_options(3)
          .tcp(1, 2, 0x18, 1, 0, 3)
          .payload_size(10)
          .build(),
      PacketBuilder().vlan(3).ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).payload_size(40).build(),
      PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").icmp_echo(9, 9).payload_size(20).build(),
      PacketBuilder().ipv6("fd00::1", "fd00::2").udp(1, 2).payload_size(40).build(),
  };
}

TEST(ParseFast, SameLayoutAsTheGeneralPathOnEveryInput) {
  uint64_t fast_ok = 0, iter = 0;
  for (const auto& s : seeds()) {  // whole, and cut at every length
    for (uint32_t n = 0; n <= s.size(); ++n) {
      const testing::ExactBuf b(s, n);
      expect_same(b.p.get(), b.len, iter++, fast_ok);
    }
  }
  std::mt19937_64 rng(19);
  const auto base = seeds();
  for (int i = 0; i < 200000; ++i, ++iter) {
    std::vector<uint8_t> f = base[rng() % base.size()];
    // Flip header bytes (the fields the fast path checks: EtherType, version/IHL, lengths,
    // fragment bits, protocol, UDP length, TCP data offset) or set them to edge values.
    const int flips = 1 + int(rng() % 3);
    for (int k = 0; k < flips; ++k) {
      const size_t at = rng() % std::min<size_t>(f.size(), 64);
      f[at] = rng() % 4 == 0 ? uint8_t(rng() % 2 ? 0 : 0xFF) : uint8_t(rng());
    }
    if (rng() % 3 == 0) store_be16(f.data() + 16, uint16_t(rng() % (f.size() + 8)));  // total
    if (rng() % 3 == 0) f.resize(rng() % (f.size() + 1));
    const testing::ExactBuf b(f, uint32_t(f.size()));
    expect_same(b.p.get(), b.len, iter, fast_ok);
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(fast_ok, 1000u);  // the fast path's packets were among them
}

}  // namespace
}  // namespace nfpark
