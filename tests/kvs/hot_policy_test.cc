// The count-min sketch never underestimates, decays by halving, and ranks skewed keys.
#include "kvs/hot_policy.h"

#include <gtest/gtest.h>

#include <map>

#include "core/flow_key.h"

namespace nfpark::kvs {
namespace {

TEST(HotPolicy, NeverUnderestimatesBeforeADecay) {
  HotPolicyConfig c;
  c.width = 256;
  c.decay_every = 1u << 30;
  HotPolicy p(c);
  std::map<uint64_t, uint32_t> truth;
  for (uint64_t i = 0; i < 20000; ++i) {
    const uint64_t h = mix64(i % 997 + (i % 7 == 0 ? 0 : 5000));
    p.touch(h);
    ++truth[h];
  }
  for (auto& [h, n] : truth) EXPECT_GE(p.estimate(h), n);
}

TEST(HotPolicy, DecayHalvesEveryCount) {
  HotPolicyConfig c;
  c.width = 64;
  c.decay_every = 100;
  HotPolicy p(c);
  for (int i = 0; i < 99; ++i) p.touch(42);
  EXPECT_EQ(p.estimate(42), 99u);
  p.touch(42);  // the 100th access triggers the halving
  EXPECT_EQ(p.estimate(42), 50u);
  EXPECT_EQ(p.decays(), 1u);
}

TEST(HotPolicy, TouchReturnsTheNewEstimate) {
  HotPolicy p(HotPolicyConfig{});
  EXPECT_EQ(p.touch(7), 1u);
  EXPECT_EQ(p.touch(7), 2u);
  EXPECT_EQ(p.estimate(8), 0u);
}

}  // namespace
}  // namespace nfpark::kvs
