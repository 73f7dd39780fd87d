// Cache: hot-set selection (pinned and by frequency), the stable/pending race through the whole
// request path with replies held in flight, and hot items lost to deletes, expiry and eviction.
#include "kvs/cache.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <random>

#include "core/flow_key.h"
#include "kvs_fixtures.h"

namespace nfpark::kvs::testing {
namespace {

using V = std::vector<Datagram>;

ServerConfig hot_config(bool auto_hot) {
  ServerConfig c = ServerBox::defaults();
  c.cache.auto_hot = auto_hot;
  c.cache.policy.promote_min = 3;
  c.cache.hot_items = 64;
  return c;
}

TEST(Cache, PinnedKeysAreHotFromTheirFirstSet) {
  ServerConfig c = hot_config(false);
  c.cache.pinned = {"p"};
  ServerBox b(c);
  b.run("set p 1 0 5\r\nhello\r\nset q 1 0 5\r\nworld\r\n");
  EXPECT_EQ(b.server.cache().hot().live(), 1u);
  b.run("get p q\r\n");
  EXPECT_EQ(b.server.cache().counters().hot_hits, 1u);
  EXPECT_EQ(b.server.cache().hot().counters().promotions, 1u);
}

TEST(Cache, ValuesBelowZcMinAreAlwaysCopied) {
  ServerConfig c = hot_config(true);
  c.cache.zc_min = 100;
  c.cache.pinned = {"small"};
  ServerBox b(c);
  b.run("set small 0 0 99\r\n" + std::string(99, 's') + "\r\nset big 0 0 100\r\n" +
        std::string(100, 'b') + "\r\n");
  for (int i = 0; i < 5; ++i) b.run("get small big\r\n");
  EXPECT_EQ(b.server.cache().hot().live(), 1u) << "only big, even though small is pinned";
  EXPECT_EQ(b.server.cache().counters().hot_hits, 3u) << "big: promoted at its third get";
}

TEST(Cache, FrequentKeysArePromotedAndReplaceColderOnes) {
  ServerConfig c = hot_config(true);
  c.cache.hot_items = 2;
  ServerBox b(c);
  for (const char* k : {"a", "b", "c"}) b.run(std::string("set ") + k + " 0 0 1\r\nx\r\n");
  for (int i = 0; i < 2; ++i) b.run("get a b\r\n");
  EXPECT_EQ(b.server.cache().hot().live(), 0u) << "below promote_min";
  b.run("get a b\r\n");
  EXPECT_EQ(b.server.cache().hot().live(), 2u);
  for (int i = 0; i < 3; ++i) b.run("get c\r\n");
  EXPECT_EQ(b.server.cache().hot().live(), 2u) << "c (3) does not beat a or b (3)";
  for (int i = 0; i < 3; ++i) b.run("get c\r\n");
  EXPECT_EQ(b.server.cache().hot().counters().demotions, 1u) << "c (6) displaced one of them";
  EXPECT_EQ(b.server.cache().hot().live(), 2u);
  EXPECT_EQ(b.run("get a b c\r\n"), (V{D("VALUE a 0 1\r\nx\r\n"), D("VALUE b 0 1\r\nx\r\n"),
                                       D("VALUE c 0 1\r\nx\r\nEND\r\n")}));
}

TEST(Cache, ZipfTrafficMakesTheHeadHot) {
  ServerConfig c = hot_config(true);
  c.cache.hot_items = 50;
  ServerBox b(c);
  const int keys = 1000;
  for (int i = 0; i < keys; ++i) b.run("set k" + std::to_string(i) + " 0 0 3\r\nabc\r\n");
  std::vector<double> cdf(keys);
  double sum = 0;
  for (int i = 0; i < keys; ++i) cdf[size_t(i)] = sum += 1.0 / std::pow(i + 1, 0.99);
  std::mt19937_64 rng(3);
  for (int n = 0; n < 20000; ++n) {
    const double u = std::uniform_real_distribution<double>(0, sum)(rng);
    const auto k = std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
    b.run("get k" + std::to_string(k) + "\r\n");
  }
  int top_hot = 0;
  for (int i = 0; i < 20; ++i) {
    const std::string k = "k" + std::to_string(i);
    const uint32_t pos = b.server.cache().store().find(k, hash_bytes(k.data(), k.size()));
    top_hot += b.server.cache().store().hot(pos) != HotSet::kNone;
  }
  EXPECT_GE(top_hot, 18) << "the 20 most popular keys are (almost all) hot";
  const CacheCounters& cc = b.server.cache().counters();
  EXPECT_GT(double(cc.hot_hits) / double(cc.get_hits), 0.4);
}

TEST(Cache, SetsDuringInFlightZeroCopyRepliesNeverChangeTheirBytes) {
  ServerConfig c = hot_config(false);
  c.cache.pinned = {"k"};
  ServerBox b(c);
  b.run("set k 0 0 4\r\nAAAA\r\n");
  ByteSink held(&b.server.cache(), /*hold=*/true);  // replies still in the NIC's queue
  auto get = [&](ByteSink& sink) {
    std::vector<uint8_t> f = frame(9, "get k\r\n");
    b.server.datagram(f.data(), uint32_t(f.size()), 1, 0, true, sink);
  };
  get(held);
  ASSERT_EQ(held.zero_copy_bytes, 11u) << "AAAA\\r\\nEND\\r\\n from the stable buffer";
  b.run("set k 0 0 4\r\nBBBB\r\n");
  EXPECT_EQ(b.run("get k\r\n"), V{D("VALUE k 0 4\r\nBBBB\r\nEND\r\n")}) << "a pending copy";
  EXPECT_EQ(b.server.cache().hot().counters().pending_copies, 1u);
  b.run("set k 0 0 6\r\nCCCCCC\r\n");
  get(held);  // still in flight: another copy, now of CCCCCC
  EXPECT_EQ(held.got[0].body, "VALUE k 0 4\r\nAAAA\r\nEND\r\n");
  EXPECT_EQ(held.got[1].body, "VALUE k 0 6\r\nCCCCCC\r\nEND\r\n");
  EXPECT_EQ(b.server.cache().hot().refs_in_flight(), 1u);
  held.release_all();  // the NIC is done: refs back to 0
  EXPECT_EQ(b.server.cache().hot().refs_in_flight(), 0u);
  ByteSink later(&b.server.cache(), true);
  get(later);  // swap, then zero-copy again
  EXPECT_EQ(later.got[0].body, "VALUE k 0 6\r\nCCCCCC\r\nEND\r\n");
  EXPECT_EQ(later.zero_copy_bytes, 13u);
  EXPECT_EQ(b.server.cache().hot().counters().swaps, 1u);
  later.release_all();
}

TEST(Cache, RandomSetsAndHeldRepliesKeepEveryReplyExact) {
  // Many keys, replies held for a random while, values rewritten underneath: every reply
  // must carry the value current when it was built, and all references come back.
  ServerConfig c = hot_config(true);
  c.cache.policy.promote_min = 1;
  c.cache.hot_items = 8;
  ServerBox b(c, 64 << 10);
  std::mt19937_64 rng(17);
  std::map<std::string, std::string> now_value;
  std::vector<std::unique_ptr<ByteSink>> in_flight;
  std::vector<std::string> expect;
  for (int it = 0; it < 4000; ++it) {
    const std::string k = "k" + std::to_string(rng() % 12);
    if (rng() % 3 == 0) {
      std::string v(1 + rng() % 3000, char('a' + rng() % 26));
      b.run("set " + k + " 0 0 " + std::to_string(v.size()) + "\r\n" + v + "\r\n");
      now_value[k] = v;
    } else if (now_value.count(k)) {
      auto sink = std::make_unique<ByteSink>(&b.server.cache(), true);
      std::vector<uint8_t> f = frame(1, "get " + k + "\r\n");
      b.server.datagram(f.data(), uint32_t(f.size()), 1, 0, true, *sink);
      in_flight.push_back(std::move(sink));
      const std::string& v = now_value[k];
      expect.push_back("VALUE " + k + " 0 " + std::to_string(v.size()) + "\r\n" + v +
                       "\r\nEND\r\n");
    }
    if (!in_flight.empty() && rng() % 4 == 0) {  // the NIC finishes a random reply
      const size_t i = rng() % in_flight.size();
      std::string body;
      for (const Datagram& d : in_flight[i]->got) body += d.body;
      ASSERT_EQ(body, expect[i]) << "iteration " << it;
      in_flight.erase(in_flight.begin() + ptrdiff_t(i));
      expect.erase(expect.begin() + ptrdiff_t(i));
    }
  }
  for (size_t i = 0; i < in_flight.size(); ++i) {
    std::string body;
    for (const Datagram& d : in_flight[i]->got) body += d.body;
    EXPECT_EQ(body, expect[i]);
  }
  in_flight.clear();
  const HotSet& hot = b.server.cache().hot();
  EXPECT_EQ(hot.refs_in_flight(), 0u);
  EXPECT_EQ(hot.zombies(), 0u);
  EXPECT_EQ(hot.counters().stale_releases, 0u);
  EXPECT_GT(hot.counters().pending_copies, 0u);
  EXPECT_GT(hot.counters().swaps, 0u);
  EXPECT_GT(b.server.cache().counters().hot_hits, 0u);
}

TEST(Cache, DeleteExpiryAndEvictionDemoteHotItems) {
  ServerConfig c = hot_config(false);
  c.cache.pinned = {"d", "e", "v"};
  c.cache.log_bytes = 64 << 10;
  c.protocol.max_value = 8 << 10;
  ServerBox b(c);
  const Nanos t0 = 1'700'000'000 * kSecond;
  b.run("set d 0 0 1\r\nx\r\nset e 0 5 1\r\nx\r\nset v 0 0 1\r\nx\r\n", true, 7, t0);
  EXPECT_EQ(b.server.cache().hot().live(), 3u);
  b.run("delete d\r\n", true, 7, t0);
  EXPECT_EQ(b.run("get e\r\n", true, 7, t0 + 6 * kSecond), V{D("END\r\n")});
  for (int i = 0; i < 200; ++i)
    b.run("set f" + std::to_string(i) + " 0 0 1000\r\n" + std::string(1000, 'f') + "\r\n", true, 7,
          t0);
  EXPECT_EQ(b.server.cache().hot().live(), 0u) << "v's record was evicted from the log";
  EXPECT_EQ(b.server.cache().hot().counters().demotions, 3u);
  EXPECT_EQ(b.server.cache().hot().region().used(), 0u);
}

}  // namespace
}  // namespace nfpark::kvs::testing
