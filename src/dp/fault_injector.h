// FaultInjector on mbufs: the DPDK engine's adapter for park::FaultInjector (the decisions, the
// tag shapes and the counters live there, DPDK-free). This only supplies the copies a duplicate
// needs (rte_pktmbuf_copy from `dup_pool`).
#pragma once
#include <rte_mbuf.h>

#include <cstdint>
#include <vector>

#include "core/time.h"
#include "dp/mbuf_ops.h"
#include "park/fault_injector.h"

namespace nfpark::dp {

using FaultCounters = park::FaultCounters;

class FaultInjector {
 public:
  FaultInjector(const park::FaultConfig& f, park::TagShape shape, rte_mempool* dup_pool)
      : fi_(f, shape), pool_(dup_pool) {}
  // Applies faults to a burst on its way back to the switch. `tag_at[i]` is the tag offset
  // (0: untagged). Packets to send now are appended to `out`; delayed ones come out of release().
  void apply(rte_mbuf** pkts, const uint32_t* tag_at, uint16_t n, Nanos now,
             std::vector<rte_mbuf*>& out) {
    fi_.apply(pkts, tag_at, n, now, out,
              [this](rte_mbuf* m) { return rte_pktmbuf_copy(m, pool_, 0, UINT32_MAX); });
  }
  // Moves delayed packets whose time has come (all of them when `all`) to `out`.
  void release(Nanos now, bool all, std::vector<rte_mbuf*>& out) { fi_.release(now, all, out); }
  size_t held() const { return fi_.held(); }
  const FaultCounters& counters() const { return fi_.counters(); }

 private:
  park::FaultInjector<MbufOps> fi_;
  rte_mempool* pool_;
};

}  // namespace nfpark::dp
