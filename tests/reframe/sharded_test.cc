#include "reframe/sharded.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "reframe_test_util.h"

namespace nfpark::reframe {
namespace {

TEST(Sharded, ShardOfSpreadsAndIsStable) {
  std::vector<int> hits(4, 0);
  std::mt19937_64 rng(1);
  for (int i = 0; i < 4000; ++i) ++hits[shard_of(rng(), 4)];
  for (int h : hits) EXPECT_GT(h, 800);
  EXPECT_EQ(shard_of(0, 4), 0u);
  EXPECT_EQ(shard_of(~0ull, 4), 3u);
}

TEST(Sharded, EachFlowLivesInOneShardAndOrderHolds) {
  Sharded<uint32_t> s(3, test::small_config());
  test::Out out;
  std::mt19937_64 rng(3);
  std::vector<uint64_t> flow_of;
  Nanos now = 0;
  for (int b = 0; b < 300; ++b) {
    now += 1000;
    std::vector<uint32_t> ids;
    std::vector<PacketMeta> m;
    for (int i = 0; i < 100; ++i) {  // > 64: exercises the routing buffer refill
      uint64_t f = rng() % 64 * 0x9E3779B97F4A7C15ULL + 1;
      ids.push_back(uint32_t(flow_of.size()));
      flow_of.push_back(f);
      m.push_back(test::meta(f));
    }
    s.poll(now, out);
    s.push(std::span<const uint32_t>(ids), std::span<const PacketMeta>(m), now, out);
  }
  s.flush_all(now, out);
  ASSERT_EQ(out.out.size(), flow_of.size());
  std::map<uint64_t, uint32_t> last;
  for (uint32_t id : out.out) {
    auto it = last.find(flow_of[id]);
    if (it != last.end()) {
      ASSERT_LT(it->second, id);
    }
    last[flow_of[id]] = id;
  }
  CounterMap c;
  s.counters(c.sink());
  EXPECT_EQ(c.get("rx"), flow_of.size());
  EXPECT_EQ(c.get("tx"), flow_of.size());
  uint64_t per_shard = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    EXPECT_GT(s.at(i).stats().rx, 0u);
    per_shard += s.at(i).stats().flows_new;
  }
  EXPECT_EQ(per_shard, 64u);  // no flow was seen by two shards
}

}  // namespace
}  // namespace nfpark::reframe
