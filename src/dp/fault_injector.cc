#include "dp/fault_injector.h"

namespace nfpark::dp {

void FaultInjector::apply(rte_mbuf** pkts, const uint32_t* tag_at, uint16_t n, Nanos now,
                          std::vector<rte_mbuf*>& out) {
  const size_t first = out.size();
  for (uint16_t i = 0; i < n; ++i) {
    rte_mbuf* m = pkts[i];
    if (chance(f_.drop)) {
      ++c_.dropped;
      rte_pktmbuf_free(m);
      continue;
    }
    if (tag_at[i] && chance(f_.corrupt_tag)) {
      // Flip one bit in tag bytes 2..6 (never the flags byte, so a corruption is never read as
      // a legitimate "drop" notification); both tag formats must detect it.
      uint8_t* t = rte_pktmbuf_mtod(m, uint8_t*) + tag_at[i];
      unsigned bit = unsigned(rng_ % 40);
      t[2 + bit / 8] ^= uint8_t(1u << (bit % 8));
      ++c_.corrupted;
    }
    if (chance(f_.dup)) {
      if (rte_mbuf* d = rte_pktmbuf_copy(m, pool_, 0, UINT32_MAX)) {
        ++c_.duplicated;
        out.push_back(d);
      }
    }
    if (f_.delay_us > 0) {
      ++c_.delayed;
      delayed_.emplace_back(now + Nanos(f_.delay_us * 1000), m);
      continue;
    }
    out.push_back(m);
  }
  for (size_t i = first; i + 1 < out.size(); ++i) {
    if (chance(f_.reorder)) {
      std::swap(out[i], out[i + 1]);
      ++c_.reordered;
      ++i;
    }
  }
}

void FaultInjector::release(Nanos now, bool all, std::vector<rte_mbuf*>& out) {
  while (!delayed_.empty() && (all || delayed_.front().first <= now)) {
    out.push_back(delayed_.front().second);
    delayed_.pop_front();
  }
}

}  // namespace nfpark::dp
