// `nfpark kvs` on real mbufs: requests into a ring port, replies out of it. Zero-copy replies
// are chains whose value segment points into the hot region; a SET while such replies are
// still queued (held here, as a slow NIC would) never changes their bytes; every stable-buffer
// reference and every mbuf comes back. Runs under ASan+UBSan in build-asan.
#include "dp/kvs_engine.h"

#include <gtest/gtest.h>
#include <rte_ring.h>

#include <map>
#include <random>

#include "core/bytes.h"
#include "core/checksum.h"
#include "dp/mbuf_env.h"

namespace nfpark::dp {
namespace {

constexpr uint32_t kServerIp = 0x0A000002, kClientIp = 0x0A000001;
constexpr Nanos kNow = 1'700'000'000 * kSecond;

class KvsEngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { fixture::setup_mbuf_env(); }
  void SetUp() override {
    static int n = 0;
    KvsEngineConfig c;
    c.ip = kServerIp;
    c.nicmem_bytes = 1 << 20;
    c.mbufs = 4096;
    c.server.cache.log_bytes = 8 << 20;
    c.server.cache.auto_hot = false;
    c.server.cache.pinned = {"hot", "big"};
    c.server.protocol.version = "1.6.18";
    std::string err;
    ASSERT_TRUE(engine.init(c, err)) << err;
    ASSERT_TRUE(engine.open_ring("kvs_t" + std::to_string(n++), rx, tx, err)) << err;
  }
  void TearDown() override {
    engine.close();
    EXPECT_TRUE(engine.pools_full()) << "an mbuf leaked";
    EXPECT_TRUE(engine.balanced());
    EXPECT_EQ(engine.server().cache().hot().refs_in_flight(), 0u);
    EXPECT_EQ(engine.server().cache().hot().counters().stale_releases, 0u);
    EXPECT_TRUE(fixture::pools_full());
  }

  std::vector<uint8_t> udp_frame(const std::string& body, uint16_t id, uint16_t port = 11211) {
    std::vector<uint8_t> f(42 + 8 + body.size());
    std::memcpy(f.data(), engine.endpoint().mac().data(), 6);
    const uint8_t client[6] = {0x02, 0xAA, 0, 0, 0, 1};
    std::memcpy(f.data() + 6, client, 6);
    store_be16(f.data() + 12, 0x0800);
    uint8_t* ip = f.data() + 14;
    ip[0] = 0x45;
    store_be16(ip + 2, uint16_t(f.size() - 14));
    ip[8] = 64;
    ip[9] = 17;
    store_be32(ip + 12, kClientIp);
    store_be32(ip + 16, kServerIp);
    store_be16(ip + 10, ipv4_header_checksum(ip, 20));
    store_be16(ip + 20, 40000);
    store_be16(ip + 22, port);
    store_be16(ip + 24, uint16_t(8 + 8 + body.size()));
    store_be16(ip + 28, id);
    store_be16(ip + 32, 1);
    std::memcpy(ip + 36, body.data(), body.size());
    return f;
  }
  void inject_one(const std::vector<uint8_t>& f) {
    rte_mbuf* m = rte_pktmbuf_alloc(MbufOps::pools.packets);
    ASSERT_NE(m, nullptr);
    char* p = rte_pktmbuf_append(m, uint16_t(f.size()));
    ASSERT_NE(p, nullptr);
    std::memcpy(p, f.data(), f.size());
    ASSERT_EQ(rte_ring_enqueue(rx, m), 0);
  }
  // A frame larger than a 1500-byte MTU goes as IPv4 fragments, as a kernel would send it.
  void inject(const std::vector<uint8_t>& f) {
    if (f.size() <= 1514) return inject_one(f);
    static uint16_t ip_id = 100;
    ++ip_id;
    const uint32_t payload = uint32_t(f.size() - 34);
    for (uint32_t off = 0; off < payload; off += 1480) {
      const uint32_t n = std::min(1480u, payload - off);
      std::vector<uint8_t> g(f.begin(), f.begin() + 34);
      g.insert(g.end(), f.begin() + 34 + off, f.begin() + 34 + off + n);
      uint8_t* ip = g.data() + 14;
      store_be16(ip + 2, uint16_t(20 + n));
      store_be16(ip + 4, ip_id);
      store_be16(ip + 6, uint16_t((off + n < payload ? 0x2000 : 0) | off / 8));
      store_be16(ip + 10, ipv4_header_checksum(ip, 20));
      inject_one(g);
    }
  }
  // Sends one request and returns the reply frames (still owned by the caller).
  std::vector<rte_mbuf*> request(const std::string& body, uint16_t id = 1) {
    inject(udp_frame(body, id));
    engine.poll(kNow);
    std::vector<rte_mbuf*> out;
    void* m;
    while (rte_ring_dequeue(tx, &m) == 0) out.push_back(static_cast<rte_mbuf*>(m));
    return out;
  }
  // The UDP payload of a reply frame: the frame header, then memcached's bytes.
  static std::string body(rte_mbuf* m) {
    const std::vector<uint8_t> b = fixture::bytes(m);
    EXPECT_GE(b.size(), 50u);
    EXPECT_EQ(load_be16(b.data() + 14 + 2), b.size() - 14) << "IPv4 total length";
    EXPECT_EQ(load_be16(b.data() + 14 + 24), b.size() - 34) << "UDP length";
    return {b.begin() + 42, b.end()};
  }
  std::string joined(const std::vector<rte_mbuf*>& ms) {
    std::string s;
    for (rte_mbuf* m : ms) s += body(m);
    return s;
  }
  static void free_all(std::vector<rte_mbuf*>& ms) {
    for (rte_mbuf* m : ms) rte_pktmbuf_free(m);
    ms.clear();
  }
  void request_and_free(const std::string& b) {
    std::vector<rte_mbuf*> r = request(b);
    free_all(r);
  }

  KvsEngine engine;
  rte_ring *rx = nullptr, *tx = nullptr;
};

TEST_F(KvsEngineTest, HotValuesLeaveAsExternalSegmentsColdOnesAreCopied) {
  auto r = request("set hot 0 0 5\r\nhello\r\nset cold 0 0 5\r\nworld\r\n");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(body(r[0]).substr(8), "STORED\r\n");
  free_all(r);
  r = request("get hot\r\n");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(body(r[0]).substr(8), "VALUE hot 0 5\r\nhello\r\nEND\r\n");
  ASSERT_EQ(r[0]->nb_segs, 2);
  EXPECT_TRUE(RTE_MBUF_HAS_EXTBUF(r[0]->next)) << "the value is the stable buffer itself";
  EXPECT_EQ(r[0]->next->data_len, 12u) << "hello\\r\\nEND\\r\\n";
  EXPECT_EQ(engine.server().cache().hot().refs_in_flight(), 1u);
  free_all(r);  // the port is done with it: the external buffer's callback returns the ref
  EXPECT_EQ(engine.server().cache().hot().refs_in_flight(), 0u);
  r = request("get cold\r\n");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0]->nb_segs, 1);
  EXPECT_EQ(body(r[0]).substr(8), "VALUE cold 0 5\r\nworld\r\nEND\r\n");
  free_all(r);
  const ReplyCounters& rc = engine.reply_counters();
  EXPECT_EQ(rc.bytes_zero_copy, 12u);
  EXPECT_EQ(rc.bytes_copied, 7u);
  // 1 KiB: the stable buffer holds the value alone; the terminator follows in a third segment.
  const std::string k(1024, 'k');
  request_and_free("set hot 0 0 1024\r\n" + k + "\r\n");
  r = request("get hot\r\n");
  ASSERT_EQ(r.size(), 1u);
  ASSERT_EQ(r[0]->nb_segs, 3);
  EXPECT_TRUE(RTE_MBUF_HAS_EXTBUF(r[0]->next));
  EXPECT_EQ(r[0]->next->data_len, 1024u);
  EXPECT_FALSE(RTE_MBUF_HAS_EXTBUF(r[0]->next->next));
  EXPECT_EQ(body(r[0]).substr(8), "VALUE hot 0 1024\r\n" + k + "\r\nEND\r\n");
  free_all(r);
}

TEST_F(KvsEngineTest, SetDuringInFlightZeroCopyRepliesNeverChangesTheirBytes) {
  const std::string v1(3000, '1'), v2(5000, '2'), v3(10, '3');
  request_and_free("set big 0 0 3000\r\n" + v1 + "\r\n");
  std::vector<rte_mbuf*> held = request("get big\r\n");  // 3 datagrams, queued "at the NIC"
  ASSERT_EQ(held.size(), 3u);
  for (rte_mbuf* m : held) EXPECT_TRUE(RTE_MBUF_HAS_EXTBUF(m->next));
  const std::string before = joined(held);
  auto r = request("set big 0 0 5000\r\n" + v2 + "\r\n");
  free_all(r);
  r = request("get big\r\n");  // the stable buffer is referenced: a copy of the pending value
  EXPECT_EQ(joined(r), [&] {
    std::string s;
    const std::string stream = "VALUE big 0 5000\r\n" + v2 + "\r\nEND\r\n";
    for (size_t i = 0, seq = 0; i < stream.size(); i += 1392, ++seq) {
      std::string h(8, '\0');
      h[1] = 1;
      h[3] = char(seq);
      h[5] = 4;
      s += h + stream.substr(i, 1392);
    }
    return s;
  }());
  for (rte_mbuf* m : r) EXPECT_EQ(m->nb_segs, 1);
  free_all(r);
  request_and_free("set big 0 0 10\r\n" + v3 + "\r\n");
  EXPECT_EQ(joined(held), before) << "in-flight replies keep their bytes";
  EXPECT_EQ(engine.server().cache().hot().counters().pending_copies, 1u);
  free_all(held);
  EXPECT_EQ(engine.server().cache().hot().refs_in_flight(), 0u);
  r = request("get big\r\n");  // swap: pending -> stable, zero-copy again
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(RTE_MBUF_HAS_EXTBUF(r[0]->next));
  EXPECT_EQ(body(r[0]).substr(8), "VALUE big 0 10\r\n" + v3 + "\r\nEND\r\n");
  EXPECT_EQ(engine.server().cache().hot().counters().swaps, 1u);
  free_all(r);
}

TEST_F(KvsEngineTest, RandomInterleavingOfSetsAndHeldRepliesUnderTheSanitizer) {
  std::mt19937_64 rng(7);
  std::map<int, std::string> value;
  struct Held {
    std::vector<rte_mbuf*> frames;
    std::string want;
  };
  std::vector<Held> held;
  for (int it = 0; it < 1500; ++it) {
    const std::string key = rng() % 2 ? "hot" : "big";
    const int k = key == "hot";
    if (rng() % 3 == 0 || !value.count(k)) {
      std::string v(1 + rng() % 4000, char('a' + rng() % 26));
      auto r = request("set " + key + " 0 0 " + std::to_string(v.size()) + "\r\n" + v + "\r\n");
      free_all(r);
      value[k] = v;
    } else {
      Held h{request("get " + key + "\r\n"), {}};
      const std::string stream = "VALUE " + key + " 0 " + std::to_string(value[k].size()) + "\r\n" +
                                 value[k] + "\r\nEND\r\n";
      for (size_t i = 0; i < stream.size(); i += 1392) h.want += stream.substr(i, 1392);
      held.push_back(std::move(h));
    }
    while (!held.empty() && rng() % 3 == 0) {  // the NIC completes some, in any order
      const size_t i = rng() % held.size();
      std::string got;
      for (rte_mbuf* m : held[i].frames) got += body(m).substr(8);
      ASSERT_EQ(got, held[i].want) << "iteration " << it;
      free_all(held[i].frames);
      held.erase(held.begin() + ptrdiff_t(i));
    }
  }
  for (Held& h : held) free_all(h.frames);
  const kvs::HotCounters& hc = engine.server().cache().hot().counters();
  EXPECT_GT(hc.pending_copies, 0u);
  EXPECT_GT(hc.swaps, 0u);
  EXPECT_GT(engine.reply_counters().bytes_zero_copy, 0u);
}

TEST_F(KvsEngineTest, AnswersArpAndPingAndCountsWhatItDrops) {
  std::vector<uint8_t> arp(42);
  std::memset(arp.data(), 0xFF, 6);
  const uint8_t client[6] = {0x02, 0xAA, 0, 0, 0, 1};
  std::memcpy(arp.data() + 6, client, 6);
  store_be16(arp.data() + 12, 0x0806);
  const uint8_t a[] = {0, 1, 8, 0, 6, 4, 0, 1};
  std::memcpy(arp.data() + 14, a, 8);
  std::memcpy(arp.data() + 22, client, 6);
  store_be32(arp.data() + 28, kClientIp);
  store_be32(arp.data() + 38, kServerIp);
  inject(arp);
  inject(udp_frame("version\r\n", 5, 53));  // wrong port: dropped, counted
  engine.poll(kNow);
  void* m = nullptr;
  ASSERT_EQ(rte_ring_dequeue(tx, &m), 0);
  auto* reply = static_cast<rte_mbuf*>(m);
  const std::vector<uint8_t> b = fixture::bytes(reply);
  EXPECT_EQ(load_be16(b.data() + 20), 2) << "an ARP reply";
  EXPECT_EQ(std::memcmp(b.data() + 22, engine.endpoint().mac().data(), 6), 0);
  rte_pktmbuf_free(reply);
  EXPECT_NE(rte_ring_dequeue(tx, &m), 0);
  EXPECT_EQ(engine.engine_counters().drops[size_t(kvs::Drop::kOtherPort)], 1u);
  EXPECT_EQ(engine.engine_counters().arp_replies, 1u);
}

}  // namespace
}  // namespace nfpark::dp
