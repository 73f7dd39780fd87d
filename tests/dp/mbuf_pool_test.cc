// mbuf_pool_create (dp/mbuf_pool.h): without hugepages the mbufs of a burst spread over the L1
// cache's sets (DPDK's own pool puts every mbuf header at the same offset of a 4 KiB page: one
// set), and every mbuf is an ordinary packet mbuf — its whole data room usable, its IOVA its
// address, the pool full again once freed.
#include "dp/mbuf_pool.h"

#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <cstdint>
#include <cstring>
#include <set>

#include "dp/mbuf_env.h"

namespace nfpark::dp {
namespace {

class MbufPool : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { fixture::setup_mbuf_env(); }
};

// The L1 set of an address: 64-byte lines, 64 sets (4 KiB a way; 48 KiB 12-way or 32 KiB 8-way).
uint32_t l1_set(const void* p) {
  return uint32_t(reinterpret_cast<uintptr_t>(p) >> 6) & 63;
}

TEST_F(MbufPool, ABurstsMbufsSpreadOverTheCacheSets) {
  ASSERT_TRUE(mbuf_pool_packed_ok());  // the fixture's EAL: no hugepages, IOVA as VA
  rte_mempool* p = mbuf_pool_create("t_spread", 4096, 256, RTE_MBUF_DEFAULT_BUF_SIZE);
  ASSERT_NE(p, nullptr);
  rte_mbuf* m[32];
  ASSERT_EQ(rte_pktmbuf_alloc_bulk(p, m, 32), 0);
  std::set<uint32_t> hdr, data;
  for (rte_mbuf* b : m) {
    hdr.insert(l1_set(b));
    data.insert(l1_set(rte_pktmbuf_mtod(b, void*)));
  }
  // 32 mbufs 37 lines apart fill 32 different sets; one mbuf a page would fill one.
  EXPECT_GE(hdr.size(), 24u);
  EXPECT_GE(data.size(), 24u);
  rte_pktmbuf_free_bulk(m, 32);
  EXPECT_TRUE(rte_mempool_full(p));
  rte_mempool_free(p);
}

TEST_F(MbufPool, EveryMbufIsAPacketMbufOfTheWholeDataRoom) {
  constexpr uint16_t kRoom = RTE_MBUF_DEFAULT_BUF_SIZE;
  constexpr uint32_t kN = 512;
  rte_mempool* p = mbuf_pool_create("t_whole", kN, 0, kRoom);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(rte_pktmbuf_data_room_size(p), kRoom);
  EXPECT_EQ(rte_pktmbuf_priv_size(p), 0);
  rte_mbuf* m[kN];
  ASSERT_EQ(rte_pktmbuf_alloc_bulk(p, m, kN), 0);
  // Objects may cross a page boundary: each still owns all its bytes (written whole, then each
  // checked, so an overlap with another mbuf would show).
  for (uint32_t i = 0; i < kN; ++i) {
    EXPECT_EQ(m[i]->buf_len, kRoom);
    EXPECT_EQ(m[i]->pool, p);
    EXPECT_EQ(m[i]->buf_iova, rte_mem_virt2iova(m[i]->buf_addr));
    char* d = rte_pktmbuf_append(m[i], kRoom - RTE_PKTMBUF_HEADROOM);
    ASSERT_NE(d, nullptr);
    std::memset(static_cast<char*>(m[i]->buf_addr), int(i & 0xff), kRoom);
  }
  for (uint32_t i = 0; i < kN; ++i) {
    const auto* b = static_cast<const uint8_t*>(m[i]->buf_addr);
    bool same = true;
    for (uint32_t j = 0; j < kRoom; ++j) same = same && b[j] == uint8_t(i & 0xff);
    EXPECT_TRUE(same) << "mbuf " << i;
  }
  rte_pktmbuf_free_bulk(m, kN);
  EXPECT_TRUE(rte_mempool_full(p));
  rte_mempool_free(p);
}

}  // namespace
}  // namespace nfpark::dp
