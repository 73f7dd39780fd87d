// Steer (dp/steer.h): live traffic over two workers. Everything arrives on worker 0's queue (the
// worst spread a port's own hash could make); each worker ends up with exactly the frames the
// shard gives it, each flow in its order, none lost. While worker 1 does not read, worker 0
// fills the steering ring, then stops reading its queue (back-pressure, nothing dropped), and
// what is left on the ring and staged is handed back by take_rest().
#include "dp/steer.h"

#include <gtest/gtest.h>

#include <map>
#include <unordered_map>
#include <vector>

#include "core/packet_builder.h"
#include "mbuf_env.h"

namespace nfpark::dp {
namespace {

class SteerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { fixture::setup_mbuf_env(); }
  void SetUp() override {
    static int n = 0;
    const std::string tag = std::to_string(n++);
    pool_ = mbuf_pool_create(("t_steer" + tag).c_str(), 4095, 0, 512);
    ASSERT_NE(pool_, nullptr);
    std::string err;
    ASSERT_TRUE(Port::ring_ends("steerq" + tag, pool_, port_, rx_, tx_, err, 4096, 2)) << err;
    // 40 flows, 75 frames each, interleaved as on a wire.
    for (uint32_t i = 0; i < kFrames; ++i) {
      const uint32_t flow = i % 40;
      const auto f = PacketBuilder()
                         .ipv4("10.0.0." + std::to_string(flow + 1), "192.0.2.9")
                         .udp(uint16_t(1000 + flow), 53)
                         .payload_size(64)
                         .packet_id(i)
                         .build();
      rte_mbuf* m = rte_pktmbuf_alloc(pool_);
      ASSERT_NE(m, nullptr);
      std::memcpy(rte_pktmbuf_append(m, uint16_t(f.size())), f.data(), f.size());
      seq_[m] = {flow, i};
      owner_[m] = shard_.of(f.data(), uint32_t(f.size()));
      ASSERT_EQ(rte_ring_enqueue(rx_[0], m), 0);
    }
  }
  void TearDown() override {
    for (auto& [m, s] : seq_) rte_pktmbuf_free(m);
    port_.stop();
    rte_mempool_free(pool_);
  }
  // Reads worker q until it returns nothing; appends what it got.
  void drain(Steer& s, uint16_t q, std::vector<rte_mbuf*>& got) {
    Port view = port_.queue(q);
    rte_mbuf* b[kBurst];
    for (uint16_t n; (n = s.rx(0, view, b, kBurst)) > 0;) got.insert(got.end(), b, b + n);
  }

  static constexpr uint32_t kFrames = 3000;
  Shard shard_{2};
  rte_mempool* pool_ = nullptr;
  Port port_;
  std::vector<rte_ring*> rx_, tx_;
  std::unordered_map<rte_mbuf*, std::pair<uint32_t, uint32_t>> seq_;  // flow, index
  std::unordered_map<rte_mbuf*, uint32_t> owner_;                     // the shard's worker
};

TEST_F(SteerTest, EachWorkerGetsItsFlowsInOrderNoneLost) {
  SteerRings rings;
  std::string err;
  ASSERT_TRUE(rings.create(2, 1, err)) << err;
  Steer s0(shard_, rings, 0), s1(shard_, rings, 1);
  std::vector<rte_mbuf*> got[2];
  // Worker 1 asleep: worker 0 passes its frames over until the ring is full, then stops.
  drain(s0, 0, got[0]);
  EXPECT_EQ(rte_ring_count(rings.ring(0, 0, 1)), kSteerRing - 1);
  EXPECT_TRUE(s0.staged());
  EXPECT_GT(rte_ring_count(rx_[0]), 0u) << "worker 0 read on although it could not pass over";
  // Both awake.
  for (int i = 0; i < 200; ++i) {
    drain(s1, 1, got[1]);
    drain(s0, 0, got[0]);
  }
  EXPECT_EQ(got[0].size() + got[1].size(), kFrames);
  EXPECT_EQ(s0.steered, got[1].size());
  EXPECT_EQ(s0.read.load(), kFrames);
  std::map<uint32_t, uint32_t> last;  // flow -> last index seen
  for (uint16_t q = 0; q < 2; ++q) {
    EXPECT_GT(got[q].size(), kFrames / 4);
    for (rte_mbuf* m : got[q]) {
      ASSERT_EQ(owner_.at(m), q);
      const auto [flow, idx] = seq_.at(m);
      if (last.count(flow)) {
        EXPECT_GT(idx, last[flow]) << "flow " << flow << " out of order";
      }
      last[flow] = idx;
    }
  }
  uint32_t rest = 0;
  for (Steer* s : {&s0, &s1}) s->take_rest([&](int, rte_mbuf* const*, uint16_t n) { rest += n; });
  EXPECT_EQ(rest, 0u);
}

TEST_F(SteerTest, TakeRestHandsBackWhatNeverReachedItsWorker) {
  SteerRings rings;
  std::string err;
  ASSERT_TRUE(rings.create(2, 1, err)) << err;
  Steer s0(shard_, rings, 0), s1(shard_, rings, 1);
  std::vector<rte_mbuf*> got;
  drain(s0, 0, got);  // worker 1 never reads
  uint32_t to1 = 0;
  for (rte_mbuf* m : got) ASSERT_EQ(owner_.at(m), 0u);
  for (auto& [m, w] : owner_) to1 += w == 1;
  uint32_t rest0 = 0, rest1 = 0;
  s0.take_rest([&](int t, rte_mbuf* const*, uint16_t n) {
    rest0 += n;
    EXPECT_EQ(t, 0);
  });
  s1.take_rest([&](int t, rte_mbuf* const*, uint16_t n) {
    rest1 += n;
    EXPECT_EQ(t, 0);
  });
  EXPECT_EQ(rest1, kSteerRing - 1);  // on the ring into worker 1
  EXPECT_GT(rest0, 0u);              // staged by worker 0
  EXPECT_FALSE(s0.staged());
  EXPECT_EQ(got.size() + rest0 + rest1 + rte_ring_count(rx_[0]), kFrames);
  EXPECT_EQ(s0.steered, kSteerRing - 1);
  EXPECT_LE(rest0 + rest1, to1);
}

}  // namespace
}  // namespace nfpark::dp
