// Pools: the mempools of a switch run (one process or --role switch), sized by
// run::plan_memory, and the check that they are full again at the end (no mbuf leaked).
#pragma once
#include <rte_mbuf.h>

#include <cstdint>
#include <string>

#include "dp/mbuf_ops.h"
#include "dp/mbuf_pool.h"
#include "dp/run_config.h"
#include "run/budget.h"

namespace nfpark::dp {

// Mirrors of the run module's sizes (run/budget.h), which plans memory without DPDK.
constexpr uint32_t kRing = run::kRingSize;
constexpr uint32_t kDataRoom = RTE_MBUF_DEFAULT_BUF_SIZE;
constexpr uint32_t kHeaderRoom = 256 + RTE_PKTMBUF_HEADROOM;
static_assert(kDataRoom == run::kDataRoom && kHeaderRoom == run::kHeaderRoom);

// The run's mempools, sized by run::plan_memory.
struct Pools {
  rte_mempool *pkts = nullptr, *hdrs = nullptr, *ind = nullptr;
  rte_mempool* nic = nullptr;  // nicmem: frames land in "NIC memory", host memory when it is empty
  uint32_t n = 0;

  bool create(const RunConfig& cfg, uint32_t mbufs, std::string& err) {
    n = mbufs;
    pkts = mbuf_pool_create("pkts", n, 256, kDataRoom);  // spread over the cache: mbuf_pool.h
    hdrs = mbuf_pool_create("hdrs", n, 256, kHeaderRoom);
    ind = mbuf_pool_create("ind", n, 256, 0);
    if (!pkts || !hdrs || !ind) {
      err = "cannot create mempools of " + std::to_string(n) + " mbufs (raise --mem-mb)";
      return false;
    }
    nic = cfg.mode == Mode::kNicmem ? mbuf_pool_create("nicmem", cfg.nicmem_mbufs, 0, kDataRoom)
                                    : pkts;
    if (!nic) {
      err = "cannot create the NIC-memory pool of " + std::to_string(cfg.nicmem_mbufs) +
            " mbufs ([nicmem] pool; raise --mem-mb)";
      return false;
    }
    for (rte_mempool* p : {pkts, hdrs, ind, nic}) reset_meta(p);
    return true;
  }
  // Every mbuf of `p` starts with reset metadata (MbufMeta::reset: no sequence, time 0, cut 0,
  // server 0), so a value other than these is one this process wrote: a live run, which has no
  // replay feeder, never does (Port::skip_meta_reset), nor does a run with one NF server write a
  // server other than 0 (SwitchLoop::to_nf).
  static void reset_meta(rte_mempool* p) {
    rte_mempool_obj_iter(
        p,
        [](rte_mempool*, void*, void* obj, unsigned) {
          MbufMeta::reset(static_cast<rte_mbuf*>(obj));
        },
        nullptr);
  }
  bool full() const {
    return rte_mempool_full(pkts) && rte_mempool_full(hdrs) && rte_mempool_full(ind) &&
           rte_mempool_full(nic);
  }
  std::string leak() const {
    return "mbuf leak: pools not full at exit (pkts " +
           std::to_string(rte_mempool_avail_count(pkts)) + "/" + std::to_string(n) + ", hdrs " +
           std::to_string(rte_mempool_avail_count(hdrs)) + ", indirect " +
           std::to_string(rte_mempool_avail_count(ind)) + ")";
  }
};

}  // namespace nfpark::dp
