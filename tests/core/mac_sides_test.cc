#include "core/mac_sides.h"

#include <gtest/gtest.h>

#include <array>

namespace nfpark {
namespace {

using Frame = std::array<uint8_t, 14>;

Frame frame(uint8_t dst, uint8_t src) {
  Frame f{};
  f[0] = 0x02, f[5] = dst;  // locally administered unicast addresses ..:dst and ..:src
  f[6] = 0x02, f[11] = src;
  return f;
}

TEST(MacSides, FrameLeavesAwayFromWhereItsSourceWasSeen) {
  MacSides t;
  t.learn(frame(0xff, 1).data(), 0);  // host 1 behind side 0
  t.learn(frame(1, 2).data(), 1);     // host 2 behind side 1
  EXPECT_EQ(t.egress(frame(2, 1).data()), 1);
  EXPECT_EQ(t.egress(frame(1, 2).data()), 0);
}

TEST(MacSides, UnknownSourceGoesTowardsItsDestination) {
  MacSides t;
  t.learn(frame(9, 1).data(), 1);
  EXPECT_EQ(t.egress(frame(1, 7).data()), 1);
  EXPECT_EQ(t.egress(frame(8, 7).data()), MacSides::kUnknown);
}

TEST(MacSides, BroadcastFromAKnownHostCrosses) {
  MacSides t;
  t.learn(frame(0xff, 1).data(), 0);
  Frame bcast = frame(0xff, 1);
  for (int i = 0; i < 6; ++i) bcast[size_t(i)] = 0xff;
  EXPECT_EQ(t.egress(bcast.data()), 1);
}

TEST(MacSides, MulticastSourceIsNotLearnedAndAMoveIsRelearned) {
  MacSides t;
  Frame mc = frame(1, 5);
  mc[6] = 0x01;  // group bit in the source: never an address to send to
  t.learn(mc.data(), 0);
  EXPECT_EQ(t.side_of(mc.data() + 6), MacSides::kUnknown);
  t.learn(frame(0, 3).data(), 0);
  t.learn(frame(0, 3).data(), 1);  // the host moved
  EXPECT_EQ(t.egress(frame(0, 3).data()), 0);
}

}  // namespace
}  // namespace nfpark
