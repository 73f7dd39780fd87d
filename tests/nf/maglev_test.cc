#include "nf/maglev.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace nfpark::nf {
namespace {

std::vector<uint32_t> counts(const MaglevTable& t, size_t n) {
  std::vector<uint32_t> c(n, 0);
  for (uint32_t e : t.entries()) ++c.at(e);
  return c;
}

TEST(Maglev, SizeIsPrime) {
  EXPECT_TRUE(MaglevTable::is_prime(65537));
  EXPECT_TRUE(MaglevTable::is_prime(251));
  EXPECT_FALSE(MaglevTable::is_prime(65536));
  EXPECT_FALSE(MaglevTable::is_prime(1));
}

TEST(Maglev, EqualWeightsBalanceWithinOneEntry) {
  for (size_t n : {1u, 3u, 4u, 10u, 37u}) {
    MaglevTable t(65537);
    std::vector<uint64_t> ids;
    for (size_t i = 0; i < n; ++i) ids.push_back(0x0A0A0000 + i);
    std::vector<uint32_t> w(n, 1);
    t.build(ids, w);
    auto c = counts(t, n);
    auto [lo, hi] = std::minmax_element(c.begin(), c.end());
    EXPECT_LE(*hi - *lo, 1u) << n << " backends";  // the paper: at most one entry apart
  }
}

TEST(Maglev, WeightsGiveProportionalShares) {
  MaglevTable t(65537);
  std::vector<uint64_t> ids = {11, 22, 33, 44};
  std::vector<uint32_t> w = {1, 2, 3, 4};
  t.build(ids, w);
  auto c = counts(t, 4);
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(double(c[i]) / 65537.0, w[i] / 10.0, 0.001) << i;
}

TEST(Maglev, ZeroWeightOrNoBackendGivesNoEntries) {
  MaglevTable t(251);
  std::vector<uint64_t> ids = {1, 2};
  std::vector<uint32_t> w = {0, 5};
  t.build(ids, w);
  for (uint32_t e : t.entries()) EXPECT_EQ(e, 1u);
  std::vector<uint32_t> none = {0, 0};
  t.build(ids, none);
  for (uint32_t e : t.entries()) EXPECT_EQ(e, MaglevTable::kNone);
}

// Removing one of N backends moves all of its entries and only a few of the others (Maglev
// trades perfect stability for balance: the paper's Fig. 12 shows a small, non-zero churn).
TEST(Maglev, RemovingOneBackendMovesAboutOneNth) {
  for (size_t n : {4u, 10u, 50u}) {
    std::vector<uint64_t> ids;
    for (size_t i = 0; i < n; ++i) ids.push_back(0xC0A80000 + 7 * i);
    std::vector<uint32_t> w(n, 1);
    MaglevTable before(65537), after(65537);
    before.build(ids, w);
    w[n / 2] = 0;
    after.build(ids, w);
    size_t moved = 0, moved_other = 0;
    for (size_t e = 0; e < 65537; ++e) {
      uint32_t b = before.entries()[e], a = after.entries()[e];
      EXPECT_NE(a, n / 2);
      if (a != b) ++moved;
      if (a != b && b != n / 2) ++moved_other;
    }
    double share = double(moved) / 65537.0;
    EXPECT_NEAR(share, 1.0 / double(n), 0.02 + 1.0 / double(n) * 0.1) << n;
    EXPECT_LT(double(moved_other) / 65537.0, 0.02) << n << " backends: " << moved_other;
  }
}

TEST(Maglev, AddingABackendBackIsTheOldTable) {
  std::vector<uint64_t> ids = {5, 6, 7, 8, 9};
  std::vector<uint32_t> w(5, 1);
  MaglevTable a(65537), b(65537);
  a.build(ids, w);
  w[2] = 0;
  b.build(ids, w);
  w[2] = 1;
  b.build(ids, w);
  EXPECT_EQ(a.entries(), b.entries());
}

}  // namespace
}  // namespace nfpark::nf
