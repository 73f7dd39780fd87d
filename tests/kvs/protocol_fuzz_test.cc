// Randomized requests, frames and fragments, each in a heap block of exactly its length so the
// sanitizer build reports any read outside it. After every request: every reference is back,
// every response's datagrams are numbered 0..total-1, and the server still works.
#include <gtest/gtest.h>

#include <memory>
#include <random>

#include "core/packet_builder.h"
#include "kvs/endpoint.h"
#include "kvs/ipv4_reassembler.h"
#include "kvs_fixtures.h"

namespace nfpark::kvs::testing {
namespace {

const std::vector<std::string> kSeeds = {
    "get a b c\r\n",
    "gets a\r\n",
    "set a 0 0 3\r\nabc\r\n",
    "set b 5 10 5 noreply\r\nhello\r\n",
    "add c 0 0 1\r\nx\r\n",
    "replace a 0 0 2\r\nzz\r\n",
    "cas a 0 0 1 1\r\nq\r\n",
    "delete a 0 noreply\r\n",
    "version\r\n",
    "quit\r\n",
    "get " + std::string(300, 'k') + "\r\n",
    "set big 0 0 4000\r\n" + std::string(4000, 'v') + "\r\nget big big\r\n",
    "GET / HTTP/1.1\r\n",
    std::string(2100, 'x'),
    "\r\n\n\r\n",
    "bget a b\r\n"};

std::string mutate(std::string s, std::mt19937_64& rng) {
  const int edits = 1 + int(rng() % 6);
  const char alphabet[] = " \r\n\t\0abc0123456789-+getsdnoreply";
  for (int i = 0; i < edits; ++i) {
    const size_t at = s.empty() ? 0 : rng() % s.size();
    switch (rng() % 4) {
      case 0:
        if (!s.empty()) s[at] = alphabet[rng() % (sizeof alphabet - 1)];
        break;
      case 1:
        s.insert(at, 1, alphabet[rng() % (sizeof alphabet - 1)]);
        break;
      case 2:
        if (!s.empty()) s.erase(at, 1 + rng() % 8);
        break;
      default:
        s += kSeeds[rng() % kSeeds.size()];
        break;
    }
  }
  return s;
}

void check_numbering(const std::vector<Datagram>& got) {
  for (size_t i = 0; i < got.size();) {
    const uint16_t total = got[i].total;
    if (total == 0) {  // the lone empty header
      ASSERT_TRUE(got[i].body.empty());
      ++i;
      continue;
    }
    for (uint16_t s = 0; s < total; ++s, ++i) {
      ASSERT_LT(i, got.size());
      ASSERT_EQ(got[i].seq, s);
      ASSERT_EQ(got[i].total, total);
      if (s + 1 < total) {
        ASSERT_EQ(got[i].body.size(), kUdpData);
      }
    }
  }
}

TEST(ProtocolFuzz, MutatedRequestsNeverBreakTheServer) {
  ServerConfig cfg = ServerBox::defaults();
  cfg.cache.auto_hot = true;
  cfg.cache.policy.promote_min = 1;
  cfg.cache.hot_items = 8;
  cfg.cache.log_bytes = 1 << 20;
  cfg.protocol.max_value = 64 << 10;
  ServerBox b(cfg, 64 << 10);
  std::mt19937_64 rng(2024);
  for (int it = 0; it < 20000; ++it) {
    std::string req = mutate(kSeeds[rng() % kSeeds.size()], rng);
    const bool raw = rng() % 8 == 0;  // sometimes a whole random datagram, header included
    const size_t len = raw ? rng() % 64 : 8 + req.size();
    std::unique_ptr<uint8_t[]> buf(new uint8_t[len ? len : 1]);
    if (raw) {
      for (size_t i = 0; i < len; ++i) buf[i] = uint8_t(rng());
    } else {
      std::vector<uint8_t> f =
          frame(uint16_t(it), req, 0, rng() % 16 == 0 ? uint16_t(rng() % 3) : 1);
      std::memcpy(buf.get(), f.data(), len);
    }
    ByteSink sink(&b.server.cache());
    b.server.datagram(buf.get(), uint32_t(len), rng() % 4, Nanos(it) * kMilli, rng() % 2, sink);
    check_numbering(sink.got);
    ASSERT_EQ(b.server.cache().hot().refs_in_flight(), 0u) << "iteration " << it;
  }
  EXPECT_EQ(b.server.cache().hot().counters().stale_releases, 0u);
  EXPECT_EQ(b.run("set ok 0 0 2\r\nok\r\nget ok\r\n"),
            (std::vector<Datagram>{D("STORED\r\n"), D("VALUE ok 0 2\r\nok\r\nEND\r\n")}));
  EXPECT_GT(b.server.protocol().counters().malformed(), 1000u);
}

TEST(ProtocolFuzz, RandomFramesAndFragmentsAreClassifiedWithinBounds) {
  Endpoint e({2, 0, 0, 0, 0, 2}, 0x0A000002, 11211);
  Ipv4Reassembler r(4, kSecond);
  std::mt19937_64 rng(99);
  const auto base =
      PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 11211).payload_size(64).build();
  for (int it = 0; it < 50000; ++it) {
    std::vector<uint8_t> f = base;
    if (rng() % 4 == 0) f.resize(rng() % 80);
    for (int k = int(rng() % 6); k > 0 && !f.empty(); --k) f[rng() % f.size()] = uint8_t(rng());
    std::unique_ptr<uint8_t[]> buf(new uint8_t[f.size() ? f.size() : 1]);
    std::memcpy(buf.get(), f.data(), f.size());
    const Classified c = e.classify(buf.get(), uint32_t(f.size()));
    if (c.kind == FrameKind::kUdp) {
      ASSERT_LE(c.payload_off + c.payload_len, f.size());
    }
    if (c.kind == FrameKind::kFragment) {
      ASSERT_LE(14 + c.ip_len, f.size());
      r.add(buf.get() + 14, c.ip_len, Nanos(it) * kMilli);
    }
  }
}

}  // namespace
}  // namespace nfpark::kvs::testing
