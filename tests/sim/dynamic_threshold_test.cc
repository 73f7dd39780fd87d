// DynamicThreshold (sim/dynamic_threshold.h): the integer form equals the double form
// `double(x) > alpha * double(free)` on every input, swept over the model's range.
#include "sim/dynamic_threshold.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace nfpark::sim {
namespace {

bool reference(double alpha, uint64_t x, uint64_t free) {
  return double(x) > alpha * double(free);
}

// Alphas a scenario may give: dyadic, decimal, thirds, tiny, huge, near powers of two.
std::vector<double> alphas() {
  std::vector<double> a = {1.0,  2.0,  0.5,    0.25, 8.0,     64.0,    0.1,    0.2,
                           0.3,  0.7,  1.5,    3.0,  1.0 / 3, 2.0 / 3, 0.9,    1.1,
                           1e-3, 4e-4, 1e3,    1e6,  12.5,    0.125,   7.0,    1e-6,
                           1e12, 1e17, 9.5e15, 3e19, 1e30,    5e-324,  1e-300, 0.999999};
  for (int e = -12; e <= 70; e += 3) {
    a.push_back(std::ldexp(1.0, e));
    a.push_back(std::nextafter(std::ldexp(1.0, e), 0.0));
    a.push_back(std::nextafter(std::ldexp(1.0, e), INFINITY));
  }
  std::mt19937_64 rng(15);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int i = 0; i < 200; ++i) a.push_back(std::ldexp(u(rng), int(rng() % 20) - 10));
  return a;
}

TEST(DynamicThreshold, EqualsTheDoubleFormOverASweep) {
  std::mt19937_64 rng(1);
  uint64_t checked = 0, above = 0, integer = 0;
  for (double alpha : alphas()) {
    for (uint64_t buffer :
         {uint64_t(1) << 20, uint64_t(20) << 20, uint64_t(64) << 20, (uint64_t(1) << 53) - 1}) {
      const DynamicThreshold dt(alpha, buffer);
      integer += dt.integer();
      auto check = [&](uint64_t x, uint64_t free) {
        if (x > buffer || free > buffer) return;
        const bool want = reference(alpha, x, free);
        ASSERT_EQ(dt.above(x, free), want)
            << "alpha " << alpha << " x " << x << " free " << free << " buffer " << buffer;
        ++checked;
        above += want;
      };
      for (int i = 0; i < 250; ++i) {
        const uint64_t free = rng() % (buffer + 1);
        // around the threshold, where rounding decides
        const double p = alpha * double(free);
        if (p < double(buffer)) {
          const uint64_t t = uint64_t(p);
          for (uint64_t d = 0; d < 3; ++d) {
            check(t + d, free);
            if (t >= d) check(t - d, free);
          }
        }
        check(rng() % (buffer + 1), free);
        check(rng() % 4096, free);
      }
      for (uint64_t free : {uint64_t(0), uint64_t(1), uint64_t(2), buffer / 2, buffer})
        for (uint64_t x : {uint64_t(0), uint64_t(1), uint64_t(2), buffer / 3, buffer})
          check(x, free);
    }
  }
  EXPECT_GT(checked, 500000u);
  EXPECT_GT(above, checked / 10);  // both answers are exercised
  EXPECT_GT(integer, 300u);        // and the integer form covers the usual alphas
}

// The cases where p = alpha * free rounds onto the integer x (the double form then says "not
// above" although x > p exactly): found by search, every one must agree.
TEST(DynamicThreshold, RoundingOntoTheQueueLengthAgrees) {
  uint64_t rounded = 0;
  const uint64_t top = (uint64_t(1) << 53) - 1;
  for (double alpha : {0.1, 0.3, 0.7, 1.0 / 3, 2.0 / 3, 1.1, 0.9, 1.25, 1.5, 1.75}) {
    const DynamicThreshold dt(alpha, top);
    ASSERT_TRUE(dt.integer());
    // free around where p crosses 2^52 (doubles 1 apart above it: ties at .5)
    const uint64_t center = uint64_t(std::ldexp(1.0, 52) / alpha);
    for (uint64_t free = center - 30000; free < center + 30000 && free < top; ++free) {
      const double p = alpha * double(free);
      if (p >= double(top)) break;
      const uint64_t x = uint64_t(p);
      for (uint64_t y : {x - 1, x, x + 1})
        ASSERT_EQ(dt.above(y, free), reference(alpha, y, free)) << alpha << " " << free;
      rounded += double(x) == p;
    }
  }
  EXPECT_GT(rounded, 50000u);
}

TEST(DynamicThreshold, ParametersOutsideTheIntegerRangeKeepTheDoubleForm) {
  EXPECT_FALSE(DynamicThreshold(INFINITY, 1 << 20).integer());
  EXPECT_FALSE(DynamicThreshold(1e-300, 1 << 20).integer());
  EXPECT_FALSE(DynamicThreshold(1.0, uint64_t(1) << 53).integer());
  EXPECT_TRUE(DynamicThreshold(1.0, 64u << 20).integer());
  EXPECT_TRUE(DynamicThreshold(0.1, 64u << 20).integer());
  EXPECT_TRUE(DynamicThreshold(0.0, 64u << 20).enabled() == false);
  const DynamicThreshold inf(INFINITY, 1 << 20);
  EXPECT_FALSE(inf.above(1000, 0));  // inf * 0 is NaN: never above, as the double form
  EXPECT_FALSE(inf.above(1000, 1));
}

}  // namespace
}  // namespace nfpark::sim
