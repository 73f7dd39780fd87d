// Multi-datagram requests (FrameAssembler) and IPv4 fragments (Ipv4Reassembler): any order,
// duplicates, overlaps, timeouts and full tables, always bounded.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>

#include "core/bytes.h"
#include "core/checksum.h"
#include "core/packet_builder.h"
#include "kvs/frame_assembler.h"
#include "kvs/ipv4_reassembler.h"
#include "kvs_fixtures.h"

namespace nfpark::kvs {
namespace {

const uint8_t* B(const std::string& s) {
  return reinterpret_cast<const uint8_t*>(s.data());
}

TEST(FrameAssembler, AnyOrderMakesTheRequestOnce) {
  FrameAssembler a(2, 1 << 16, 64, kSecond);
  const std::vector<std::string> parts = {"set k 0 0 10\r\n", "0123", "456789", "\r\n"};
  std::vector<uint16_t> order = {2, 0, 3, 1};
  FrameAssembler::Request r;
  for (size_t i = 0; i < order.size(); ++i) {
    const uint16_t s = order[i];
    if (i == 1) {
      EXPECT_FALSE(a.add(1, 5, 2, 4, B(parts[2]), 6, 0).data) << "duplicate ignored";
    }
    r = a.add(1, 5, s, 4, B(parts[s]), uint32_t(parts[s].size()), 0);
    if (i + 1 < order.size()) {
      EXPECT_EQ(r.data, nullptr);
    }
  }
  ASSERT_NE(r.data, nullptr);
  EXPECT_EQ(std::string(r.data, r.len), "set k 0 0 10\r\n0123456789\r\n");
  EXPECT_EQ(a.counters().duplicates, 1u);
  EXPECT_EQ(a.pending(), 0u);
}

TEST(FrameAssembler, TimeoutsFullTablesAndInconsistencyDropRequests) {
  FrameAssembler a(2, 100, 8, kSecond);
  a.add(1, 1, 0, 2, B("x"), 1, 0);
  a.add(2, 1, 0, 2, B("x"), 1, 0);
  a.add(3, 1, 0, 2, B("x"), 1, kMilli);  // evicts the oldest
  EXPECT_EQ(a.counters().dropped_full, 1u);
  a.add(9, 9, 0, 2, B("x"), 1, 3 * kSecond);  // both others time out
  EXPECT_EQ(a.counters().dropped_timeout, 2u);
  a.add(9, 9, 1, 3, B("x"), 1, 3 * kSecond);  // count changed
  EXPECT_EQ(a.counters().dropped_inconsistent, 1u);
  a.add(8, 8, 0, 9, B("x"), 1, 3 * kSecond);  // more datagrams than allowed
  const std::string big(60, 'b');
  a.add(7, 7, 0, 2, B(big), 60, 3 * kSecond);
  a.add(7, 7, 1, 2, B(big), 60, 3 * kSecond);  // over max_bytes
  EXPECT_EQ(a.counters().dropped_too_large, 2u);
  EXPECT_EQ(a.counters().assembled, 0u);
}

TEST(FrameAssembler, ServerSetsAOneMegabyteValueInPartsAndGetsItBack) {
  testing::ServerBox b;
  const std::string v(1 << 20, 'v');
  const std::string req = "set big 3 0 " + std::to_string(v.size()) + "\r\n" + v + "\r\n";
  testing::ByteSink sink(&b.server.cache());
  const size_t part = 1392;
  const auto n = uint16_t((req.size() + part - 1) / part);
  for (uint16_t s = n; s-- > 0;) {  // backwards, for good measure
    std::vector<uint8_t> f = testing::frame(42, std::string_view(req).substr(s * part, part), s, n);
    b.server.datagram(f.data(), uint32_t(f.size()), 77, 0, true, sink);
  }
  ASSERT_EQ(sink.got.size(), 1u);
  EXPECT_EQ(sink.got[0].body, "STORED\r\n");
  const std::vector<testing::Datagram> got = b.run("get big\r\n");
  std::string stream;
  for (const auto& d : got) stream += d.body;
  EXPECT_EQ(stream, "VALUE big 3 1048576\r\n" + v + "\r\nEND\r\n");
  EXPECT_EQ(got.size(), (stream.size() + 1391) / 1392);
  EXPECT_EQ(got.back().total, got.size());
}

std::vector<uint8_t> udp_packet(size_t payload) {  // an IPv4 packet (no Ethernet)
  auto f = PacketBuilder()
               .ipv4("10.0.0.1", "10.0.0.2")
               .udp(5000, 11211)
               .payload_size(uint32_t(payload))
               .build();
  return {f.begin() + 14, f.end()};
}
std::vector<uint8_t> fragment(const std::vector<uint8_t>& pkt, uint32_t off, uint32_t len,
                              bool more) {
  std::vector<uint8_t> f(20 + size_t(len));
  std::memcpy(f.data(), pkt.data(), 20);
  std::memcpy(f.data() + 20, pkt.data() + 20 + off, len);
  store_be16(f.data() + 2, uint16_t(f.size()));
  store_be16(f.data() + 6, uint16_t((more ? 0x2000 : 0) | off / 8));
  store_be16(f.data() + 10, ipv4_header_checksum(f.data(), 20));
  return f;
}

TEST(Ipv4Reassembler, ShuffledFragmentsRebuildThePacket) {
  Ipv4Reassembler r(4, kSecond);
  const std::vector<uint8_t> pkt = udp_packet(5000);
  std::vector<std::vector<uint8_t>> frags;
  const uint32_t body = uint32_t(pkt.size() - 20);
  for (uint32_t off = 0; off < body; off += 1480)
    frags.push_back(fragment(pkt, off, std::min(1480u, body - off), off + 1480 < body));
  std::mt19937 rng(1);
  std::shuffle(frags.begin(), frags.end(), rng);
  Ipv4Reassembler::Packet out;
  for (size_t i = 0; i < frags.size(); ++i) {
    out = r.add(frags[i].data(), uint32_t(frags[i].size()), 0);
    if (i + 1 < frags.size()) {
      EXPECT_EQ(out.data, nullptr);
    }
  }
  ASSERT_NE(out.data, nullptr);
  std::vector<uint8_t> want = pkt;
  store_be16(want.data() + 6, 0);
  store_be16(want.data() + 10, ipv4_header_checksum(want.data(), 20));
  EXPECT_EQ(std::vector<uint8_t>(out.data, out.data + out.len), want);
  EXPECT_EQ(r.counters().reassembled, 1u);
}

TEST(Ipv4Reassembler, OverlapsBadLengthsAndTimeoutsDrop) {
  Ipv4Reassembler r(1, kSecond);
  const std::vector<uint8_t> pkt = udp_packet(4000);
  auto a = fragment(pkt, 0, 1480, true), overlap = fragment(pkt, 1472, 1480, true);
  r.add(a.data(), uint32_t(a.size()), 0);
  EXPECT_EQ(r.add(overlap.data(), uint32_t(overlap.size()), 0).data, nullptr);
  EXPECT_EQ(r.counters().dropped_overlap, 1u);
  auto odd = fragment(pkt, 0, 1001, true);  // not a multiple of 8 and not the last
  r.add(odd.data(), uint32_t(odd.size()), 0);
  EXPECT_EQ(r.counters().dropped_bad, 1u);
  r.add(a.data(), uint32_t(a.size()), 0);
  auto b = fragment(pkt, 1480, 1480, true);
  r.add(b.data(), uint32_t(b.size()), 2 * kSecond);  // the first one timed out meanwhile
  EXPECT_EQ(r.counters().dropped_timeout, 1u);
  EXPECT_EQ(r.pending(), 1u);
}

}  // namespace
}  // namespace nfpark::kvs
