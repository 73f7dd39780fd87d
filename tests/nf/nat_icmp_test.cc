// NAT and ICMP: queries translated by identifier, errors translated through the datagram they
// quote (RFC 5508), both directions, on whole packets and on header-only views (the Twin), with
// every checksum recomputed from scratch afterwards.
#include <gtest/gtest.h>

#include "core/bytes.h"
#include "nat_packets.h"
#include "nf/nat.h"
#include "nf_harness.h"

namespace nfpark::nf {
namespace {
using testing::Bytes;
using testing::counter;
using testing::ip4;
using testing::kL3;

const uint32_t kExt = ip4(198, 18, 0, 1);
const uint32_t kIn = ip4(10, 0, 0, 5), kRemote = ip4(8, 8, 8, 8), kRouter = ip4(192, 0, 2, 1);

NatConfig one_address() {
  NatConfig c;
  c.external = {kExt};
  return c;
}

uint32_t src_ip(const Bytes& b, uint32_t l3 = kL3) {
  return load_be32(b.data() + l3 + 12);
}
uint32_t dst_ip(const Bytes& b, uint32_t l3 = kL3) {
  return load_be32(b.data() + l3 + 16);
}
// The quoted IPv4 packet of an ICMP error frame (outer header without options).
Bytes quote_of(const Bytes& err) {
  return Bytes(err.begin() + kL3 + 20 + 8, err.end());
}
// The IPv4 packet of a frame, cut to `n` bytes.
Bytes ip_bytes(const Bytes& f, size_t n) {
  return Bytes(f.begin() + kL3, f.begin() + kL3 + std::min(n, f.size() - kL3));
}

enum class Kind { kUdp, kTcp, kEcho };
// A datagram of `kind` from src:sp to dst:dp (echo: request with identifier sp; reply when
// `reply`), small enough to be quoted whole.
Bytes datagram(Kind kind, uint32_t src, uint32_t dst, uint16_t sp, uint16_t dp, bool reply) {
  switch (kind) {
    case Kind::kUdp:
      return PacketBuilder().ipv4(src, dst).udp(sp, dp).payload_size(20).build();
    case Kind::kTcp:
      return PacketBuilder().ipv4(src, dst).tcp(sp, dp, 0x12, 77, 1).payload_size(0).build();
    case Kind::kEcho: {
      Bytes b = PacketBuilder().ipv4(src, dst).icmp_echo(sp, 9).payload_size(24).build();
      if (reply) {
        b[kL3 + 20] = 0;
        fill_checksums(b.data(), parse_packet(b.data(), uint32_t(b.size())));
      }
      return b;
    }
  }
  return {};
}
uint16_t port_at(const Bytes& f, Kind kind, bool source) {
  const uint32_t l4 = kL3 + testing::ihl_of(f);
  if (kind == Kind::kEcho) return load_be16(f.data() + l4 + 4);
  return load_be16(f.data() + l4 + (source ? 0 : 2));
}

struct Case {
  Kind kind;
  uint32_t quote;  // bytes of the datagram quoted; 0 = all
};

std::string case_name(const Case& c) {
  const char* kind = c.kind == Kind::kUdp ? "Udp" : c.kind == Kind::kTcp ? "Tcp" : "Echo";
  return std::string(kind) + "Quote" + std::to_string(c.quote);
}

class NatIcmpError : public ::testing::TestWithParam<Case> {};

// An inside host's flow; a router on the way sends back an error about its outbound packet.
// The NAT reverts the quote to the packet the inside host sent and sends the error to it.
TEST_P(NatIcmpError, InboundErrorQuotesThePacketTheInsideHostSent) {
  const Case c = GetParam();
  auto twin = testing::make_twin<Nat>(one_address());
  const Bytes sent = datagram(c.kind, kIn, kRemote, 5555, 53, false);
  Bytes out = sent;
  ASSERT_EQ(twin.run1(out, 0), Verdict::kPass);
  ASSERT_EQ(src_ip(out), kExt);
  const uint16_t ext_port = port_at(out, c.kind, true);
  ASSERT_NE(ext_port, 5555);

  Bytes err = testing::icmp_error(kRouter, kExt, 11, 0, out, c.quote);
  ASSERT_EQ(twin.run1(err, kSecond), Verdict::kPass);
  EXPECT_EQ(src_ip(err), kRouter);
  EXPECT_EQ(dst_ip(err), kIn);  // RFC 5508 REQ-4 c)
  EXPECT_EQ(err[kL3 + 20], 11);
  const Bytes q = quote_of(err);
  EXPECT_EQ(q, ip_bytes(sent, q.size())) << "the quote is not the packet the inside host sent";
  EXPECT_TRUE(testing::icmp_error_checksums_ok(err));
  EXPECT_EQ(counter(twin.whole(), "icmp_errors_in"), 1u);
}

// The reverse: a remote host's packet reached the inside host through the NAT, and the inside
// host answers with an error. The NAT makes the quote the packet the remote host sent.
TEST_P(NatIcmpError, OutboundErrorQuotesThePacketTheRemoteHostSent) {
  const Case c = GetParam();
  auto twin = testing::make_twin<Nat>(one_address());
  Bytes out = datagram(c.kind, kIn, kRemote, 5555, 53, false);
  ASSERT_EQ(twin.run1(out, 0), Verdict::kPass);
  const uint16_t ext_port = port_at(out, c.kind, true);
  const uint16_t answer_sp = c.kind == Kind::kEcho ? ext_port : 53;  // echo: the identifier
  const Bytes answer = datagram(c.kind, kRemote, kExt, answer_sp, ext_port, true);
  Bytes in = answer;
  if (c.kind == Kind::kEcho) {
    ASSERT_EQ(port_at(in, c.kind, true), ext_port);
  }
  ASSERT_EQ(twin.run1(in, kSecond), Verdict::kPass);
  ASSERT_EQ(dst_ip(in), kIn);

  Bytes err = testing::icmp_error(kIn, kRemote, 3, 3, in, c.quote);
  ASSERT_EQ(twin.run1(err, 2 * kSecond), Verdict::kPass);
  EXPECT_EQ(src_ip(err), kExt);  // RFC 5508 REQ-5 c)
  EXPECT_EQ(dst_ip(err), kRemote);
  const Bytes q = quote_of(err);
  EXPECT_EQ(q, ip_bytes(answer, q.size())) << "the quote is not the packet the remote sent";
  EXPECT_TRUE(testing::icmp_error_checksums_ok(err));
  EXPECT_EQ(counter(twin.whole(), "icmp_errors_out"), 1u);
}

INSTANTIATE_TEST_SUITE_P(Quotes, NatIcmpError,
                         ::testing::Values(Case{Kind::kUdp, 0}, Case{Kind::kUdp, 28},
                                           Case{Kind::kTcp, 0}, Case{Kind::kTcp, 28},
                                           Case{Kind::kTcp, 38}, Case{Kind::kEcho, 0},
                                           Case{Kind::kEcho, 28}),
                         [](const auto& info) { return case_name(info.param); });

TEST(NatIcmp, ErrorsWithoutAMappingAreDropped) {
  auto twin = testing::make_twin<Nat>(one_address());
  Bytes out = datagram(Kind::kUdp, kIn, kRemote, 5555, 53, false);
  ASSERT_EQ(twin.run1(out, 0), Verdict::kPass);
  const uint16_t p = port_at(out, Kind::kUdp, true);
  // Inbound, quoting an external port nobody holds.
  Bytes unmapped = datagram(Kind::kUdp, kExt, kRemote, uint16_t(p + 7), 53, false);
  Bytes e1 = testing::icmp_error(kRouter, kExt, 3, 1, unmapped);
  // Inbound, quoting the flow's port but another remote (endpoint-dependent filtering).
  Bytes other_remote = datagram(Kind::kUdp, kExt, ip4(8, 8, 4, 4), p, 53, false);
  Bytes e2 = testing::icmp_error(kRouter, kExt, 3, 1, other_remote);
  // Outbound, quoting a packet no flow delivered.
  Bytes stray = datagram(Kind::kUdp, ip4(1, 2, 3, 4), kIn, 53, 4444, false);
  Bytes e3 = testing::icmp_error(kIn, ip4(1, 2, 3, 4), 3, 3, stray);
  // Inbound, quoting an ICMP error (no error is ever sent about an error: RFC 1122 3.2.2).
  Bytes e4 =
      testing::icmp_error(kRouter, kExt, 3, 1, testing::icmp_error(kExt, kRemote, 3, 3, out));
  for (Bytes* b : {&e1, &e2, &e3, &e4}) EXPECT_EQ(twin.run1(*b, 1), Verdict::kDrop);
  EXPECT_EQ(counter(twin.whole(), "drop.icmp_error_no_mapping"), 4u);
}

TEST(NatIcmp, ErrorsWithAnUnusableQuoteAreDropped) {
  auto twin = testing::make_twin<Nat>(one_address());
  Bytes out = datagram(Kind::kUdp, kIn, kRemote, 5555, 53, false);
  ASSERT_EQ(twin.run1(out, 0), Verdict::kPass);
  Bytes bad_sum = out;
  bad_sum[kL3 + 10] ^= 0x40;  // RFC 5508 REQ-3 a): the quoted IP header's checksum is wrong
  Bytes e1 = testing::icmp_error(kRouter, kExt, 11, 0, bad_sum);
  Bytes e2 = testing::icmp_error(kRouter, kExt, 11, 0, out, 22);  // ports cut off
  Bytes e3 = testing::icmp_error(kRouter, kExt, 11, 0, out, 12);  // IP header cut
  for (Bytes* b : {&e1, &e2, &e3}) EXPECT_EQ(twin.run1(*b, 1), Verdict::kDrop);
  EXPECT_EQ(counter(twin.whole(), "drop.icmp_error_bad_quote"), 3u);
}

// RFC 5508 REQ-6: an error neither refreshes nor ends the session it quotes.
TEST(NatIcmp, ErrorsDoNotRefreshTheMapping) {
  NatConfig c = one_address();
  c.idle_timeout = 10 * kSecond;
  auto twin = testing::make_twin<Nat>(c);
  Bytes out = datagram(Kind::kUdp, kIn, kRemote, 5555, 53, false);
  ASSERT_EQ(twin.run1(out, 0), Verdict::kPass);
  const uint16_t p = port_at(out, Kind::kUdp, true);
  for (Nanos t : {4 * kSecond, 8 * kSecond}) {
    Bytes err = testing::icmp_error(kRouter, kExt, 11, 0, out);
    EXPECT_EQ(twin.run1(err, t), Verdict::kPass);
  }
  Bytes late = datagram(Kind::kUdp, kRemote, kExt, 53, p, false);
  EXPECT_EQ(twin.run1(late, 11 * kSecond), Verdict::kDrop) << "an error kept the flow alive";
  EXPECT_EQ(counter(twin.whole(), "drop.no_mapping"), 1u);
}

// With `inside` prefixes, an error between two outside hosts is transit traffic: untouched.
TEST(NatIcmp, TransitErrorsPassUnchanged) {
  NatConfig c = one_address();
  c.inside = {{ip4(10, 0, 0, 0), 8}};
  auto twin = testing::make_twin<Nat>(c);
  Bytes dg = datagram(Kind::kUdp, ip4(172, 16, 0, 1), kRemote, 1, 2, false);
  Bytes err = testing::icmp_error(kRouter, ip4(172, 16, 0, 1), 3, 1, dg);
  const Bytes copy = err;
  EXPECT_EQ(twin.run1(err, 0), Verdict::kPass);
  EXPECT_EQ(err, copy);
  EXPECT_EQ(counter(twin.whole(), "passthrough"), 1u);
}

// Echo is one of four query/reply pairs (RFC 792) translated by identifier; timestamp is
// another (Linux's conntrack tracks the same four).
TEST(NatIcmp, TimestampQueryTranslatedByIdentifierBothWays) {
  auto twin = testing::make_twin<Nat>(one_address());
  Bytes req = datagram(Kind::kEcho, kIn, kRemote, 0x0707, 0, false);
  req[kL3 + 20] = 13;  // timestamp request
  fill_checksums(req.data(), parse_packet(req.data(), uint32_t(req.size())));
  ASSERT_EQ(twin.run1(req, 0), Verdict::kPass);
  EXPECT_EQ(src_ip(req), kExt);
  const uint16_t id = port_at(req, Kind::kEcho, true);
  EXPECT_NE(id, 0x0707);
  Bytes rep = datagram(Kind::kEcho, kRemote, kExt, id, 0, false);
  rep[kL3 + 20] = 14;  // timestamp reply
  fill_checksums(rep.data(), parse_packet(rep.data(), uint32_t(rep.size())));
  ASSERT_EQ(twin.run1(rep, 1), Verdict::kPass);
  EXPECT_EQ(dst_ip(rep), kIn);
  EXPECT_EQ(port_at(rep, Kind::kEcho, true), 0x0707);
}

// Echo both ways from a real capture's shape: requests leave with the pool's identifier and
// the replies come back to it (tcpreplay's test.pcap pings 192.168.1.2 with identifier 1).
TEST(NatIcmp, EchoExchangeTranslatedBothWays) {
  auto twin = testing::make_twin<Nat>(one_address());
  for (uint16_t seq = 0; seq < 3; ++seq) {
    Bytes req = PacketBuilder()
                    .ipv4("192.168.1.1", "192.168.1.2")
                    .icmp_echo(1, seq)
                    .payload_size(56)
                    .build();
    ASSERT_EQ(twin.run1(req, seq), Verdict::kPass);
    EXPECT_EQ(src_ip(req), kExt);
    const uint16_t id = port_at(req, Kind::kEcho, true);
    Bytes rep = datagram(Kind::kEcho, ip4(192, 168, 1, 2), kExt, id, 0, true);
    ASSERT_EQ(twin.run1(rep, seq), Verdict::kPass);
    EXPECT_EQ(dst_ip(rep), ip4(192, 168, 1, 1));
    EXPECT_EQ(port_at(rep, Kind::kEcho, true), 1);
  }
  EXPECT_EQ(counter(twin.whole(), "flows_created"), 1u);
  EXPECT_EQ(counter(twin.whole(), "outbound"), 3u);
  EXPECT_EQ(counter(twin.whole(), "inbound"), 3u);
}

}  // namespace
}  // namespace nfpark::nf
