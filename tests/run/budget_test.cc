// Budget: pool sizes per mode, the per-mbuf cost without hugepages, and the refusal that names
// the setting behind the largest part.
#include "run/budget.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "run/output_file.h"

namespace nfpark::run {
namespace {

TEST(Budget, MbufCostKeepsObjectsInsideOnePage) {
  EXPECT_EQ(mbuf_cost(kDataRoom), 4096u);   // 64 + 128 + 2176 = 2368 B: one per page
  EXPECT_EQ(mbuf_cost(kHeaderRoom), 585u);  // 576 B: seven per page
  EXPECT_EQ(mbuf_cost(0), 195u);            // 192 B: 21 per page
}

TEST(Budget, PoolsFollowWhatTheModeHolds) {
  RunConfig c;
  c.mode = Mode::kPayloadPark;
  c.park.slots = 1000;
  c.park.slices = 2;
  Budget b = plan_memory(c, 0);
  EXPECT_EQ(b.pool_mbufs, 2000u + 6 * kRingSize + 4096);
  EXPECT_EQ(b.largest().key, "slots");
  c.mode = Mode::kQueueMem;
  b = plan_memory(c, 0);
  EXPECT_EQ(b.pool_mbufs, c.queuemem.max_held() + 6 * kRingSize + 4096);  // headers: hdrs pool
  c.pool_mbufs = 50000;
  b = plan_memory(c, 0);
  EXPECT_EQ(b.pool_mbufs, 50000u);
  EXPECT_EQ(b.largest().key, "pool_mbufs");
  c.reframe_us = 100;
  EXPECT_EQ(plan_memory(c, 0).reframe_hold, kReframeHold);
}

TEST(Budget, RefusesWhatDoesNotFitNamingTheSetting) {
  Loader l;
  std::string err;
  ASSERT_TRUE(l.set_flag(*find_flag("mode"), "payloadpark", err));
  ASSERT_TRUE(l.set_flag(*find_flag("slots"), "4194304", err));
  Budget b;
  EXPECT_TRUE(check_memory(l, 1ull << 40, b, err)) << err;
  EXPECT_GT(b.total(), 4194304ull * 4876);
  EXPECT_FALSE(check_memory(l, 16ull << 30, b, err));
  EXPECT_EQ(err.rfind("not enough memory: --slots needs 19.", 0), 0u) << err;
  EXPECT_NE(err.find("16.0 GiB is available"), std::string::npos) << err;
}

TEST(Budget, TheNfChainsTablesCount) {
  Loader l;
  std::string err;
  ASSERT_TRUE(
      l.load_string("[run]\nchain = \"nat\"\n[nf.nat]\nmax_flows = 268435456\n", "n.toml", err))
      << err;
  Budget b;
  EXPECT_FALSE(check_memory(l, 16ull << 30, b, err));
  EXPECT_EQ(err.rfind("not enough memory: n.toml: [run] chain needs 20.7 GiB", 0), 0u) << err;
}

TEST(Budget, MemMbBelowThePoolsIsNamed) {
  Loader l;
  std::string err;
  ASSERT_TRUE(l.set_flag(*find_flag("mem-mb"), "64", err));
  Budget b;
  EXPECT_FALSE(check_memory(l, 1ull << 40, b, err));
  EXPECT_EQ(err.rfind("--mem-mb: 64 MiB is less than", 0), 0u) << err;
}

TEST(OutputFile, WritesBesideAndMovesOnlyOnCommit) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / ("nfpark_out_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path out = dir / "o.pcap";
  std::ofstream(out) << "old";
  {
    OutputFile f(out.string());
    EXPECT_EQ(fs::path(f.temp_path()).parent_path(), dir);
    std::ofstream(f.temp_path()) << "new";
  }  // not committed: removed, the old file stays
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  std::string s;
  std::ifstream(out) >> s;
  EXPECT_EQ(s, "old");
  {
    OutputFile f(out.string());
    std::ofstream(f.temp_path()) << "new";
    std::string err;
    EXPECT_TRUE(f.commit(err)) << err;
  }
  std::ifstream(out) >> s;
  EXPECT_EQ(s, "new");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace nfpark::run
