// The dp tests' DPDK set-up, done once per process whichever suite runs first: EAL without
// hugepages, the mbuf dynamic fields, and MbufOps' three pools (1024 mbufs each). Every suite in
// dp_test calls it from SetUpTestSuite (running the binary whole initialises EAL only once).
#pragma once
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <string>

#include "dp/eal.h"
#include "dp/mbuf_ops.h"

namespace nfpark::dp::fixture {

inline void setup_mbuf_env() {
  static bool done = false;
  if (done) return;
  std::string err;
  EalOptions o;
  o.mem_mb = 256;
  ASSERT_TRUE(eal_init(o, err)) << err;
  ASSERT_TRUE(MbufMeta::register_meta());
  MbufOps::pools.packets =
      rte_pktmbuf_pool_create("t_pkts", 1024, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
  MbufOps::pools.headers = rte_pktmbuf_pool_create("t_hdrs", 1024, 0, 0, 384, 0);
  MbufOps::pools.indirect = rte_pktmbuf_pool_create("t_ind", 1024, 0, 0, 0, 0);
  ASSERT_NE(MbufOps::pools.packets, nullptr);
  ASSERT_NE(MbufOps::pools.headers, nullptr);
  ASSERT_NE(MbufOps::pools.indirect, nullptr);
  done = true;
}

// Every mbuf is back in its pool.
inline bool pools_full() {
  return rte_mempool_full(MbufOps::pools.packets) && rte_mempool_full(MbufOps::pools.headers) &&
         rte_mempool_full(MbufOps::pools.indirect);
}

}  // namespace nfpark::dp::fixture
