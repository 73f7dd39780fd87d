// FaultInjector: misbehaviour injected on the NF server's output, for tests and demos —
// drop headers silently, delay them, duplicate them, reorder them, corrupt their tags.
// Deterministic for a given seed. Every injected event is counted so that
//   packets in + duplicates = packets out + Σ drops
// can still be checked end to end.
#pragma once
#include <rte_mbuf.h>

#include <cstdint>
#include <deque>
#include <vector>

#include "core/time.h"
#include "dp/run_config.h"

namespace nfpark::dp {

struct FaultCounters {
  uint64_t dropped = 0, duplicated = 0, reordered = 0, corrupted = 0, delayed = 0;
};

class FaultInjector {
 public:
  FaultInjector(const Faults& f, rte_mempool* dup_pool) : f_(f), pool_(dup_pool), rng_(f.seed * 0x9E3779B97F4A7C15ULL + 1) {}
  // Applies faults to a burst on its way back to the switch. `tag_at[i]` is the tag offset
  // (0: untagged). Packets to send now are appended to `out`; delayed ones come out of release().
  void apply(rte_mbuf** pkts, const uint32_t* tag_at, uint16_t n, Nanos now,
             std::vector<rte_mbuf*>& out);
  // Moves delayed packets whose time has come (all of them when `all`) to `out`.
  void release(Nanos now, bool all, std::vector<rte_mbuf*>& out);
  size_t held() const { return delayed_.size(); }
  const FaultCounters& counters() const { return c_; }

 private:
  bool chance(double p) {
    if (p <= 0) return false;
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 7;
    rng_ ^= rng_ << 17;
    return double(rng_ >> 11) * 0x1.0p-53 < p;
  }
  Faults f_;
  rte_mempool* pool_;
  uint64_t rng_;
  FaultCounters c_;
  std::deque<std::pair<Nanos, rte_mbuf*>> delayed_;
};

}  // namespace nfpark::dp
