// The dp tests' DPDK set-up, done once per process whichever suite runs first: EAL without
// hugepages, the mbuf dynamic fields, and MbufOps' three pools (1024 mbufs each, packed as a
// run's). Every suite in dp_test calls it from SetUpTestSuite (running the binary whole
// initialises EAL only once).
// Also the helpers the suites share: a frame's bytes, and an NF's VLAN push.
#pragma once
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <cstring>
#include <string>
#include <vector>

#include "dp/eal.h"
#include "dp/mbuf_ops.h"
#include "dp/mbuf_pool.h"

namespace nfpark::dp::fixture {

inline void setup_mbuf_env() {
  static bool done = false;
  if (done) return;
  std::string err;
  EalOptions o;
  o.mem_mb = 256;
  ASSERT_TRUE(eal_init(o, err)) << err;
  ASSERT_TRUE(MbufMeta::register_meta());
  // nfpark's pools as a run makes them (dp/pools.h): packed without hugepages (mbuf_pool.h).
  MbufOps::pools.packets = mbuf_pool_create("t_pkts", 1024, 0, RTE_MBUF_DEFAULT_BUF_SIZE);
  MbufOps::pools.headers = mbuf_pool_create("t_hdrs", 1024, 0, 384);
  MbufOps::pools.indirect = mbuf_pool_create("t_ind", 1024, 0, 0);
  ASSERT_NE(MbufOps::pools.packets, nullptr);
  ASSERT_NE(MbufOps::pools.headers, nullptr);
  ASSERT_NE(MbufOps::pools.indirect, nullptr);
  done = true;
}

// A frame's bytes, whatever its segments.
inline std::vector<uint8_t> bytes(rte_mbuf* m) {
  std::vector<uint8_t> v(m->pkt_len);
  const void* p = rte_pktmbuf_read(m, 0, m->pkt_len, v.data());
  if (p != v.data()) std::memcpy(v.data(), p, m->pkt_len);
  return v;
}

// What an NF that pushes a VLAN tag does to a header packet: 4 more header bytes in front; and
// what the frame then looks like.
constexpr uint8_t kVlan[4] = {0x81, 0x00, 0x00, 0x07};
inline bool push_vlan(rte_mbuf* h) {
  if (!rte_pktmbuf_prepend(h, 4)) return false;
  uint8_t* d = rte_pktmbuf_mtod(h, uint8_t*);
  std::memmove(d, d + 4, 12);
  std::memcpy(d + 12, kVlan, 4);
  return true;
}
inline std::vector<uint8_t> with_vlan(const std::vector<uint8_t>& frame) {
  std::vector<uint8_t> v(frame.begin(), frame.begin() + 12);
  v.insert(v.end(), kVlan, kVlan + 4);
  v.insert(v.end(), frame.begin() + 12, frame.end());
  return v;
}

// Every mbuf is back in its pool.
inline bool pools_full() {
  return rte_mempool_full(MbufOps::pools.packets) && rte_mempool_full(MbufOps::pools.headers) &&
         rte_mempool_full(MbufOps::pools.indirect);
}

}  // namespace nfpark::dp::fixture
