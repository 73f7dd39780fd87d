#include "dp/nf_server.h"

#include <array>

namespace nfpark::dp {

NfServer::NfServer(std::unique_ptr<nf::Chain> chain, std::optional<park::TagFormat> format,
                   bool notify, const Faults& faults, rte_mempool* dup_pool)
    : chain_(std::move(chain)), ep_(format, notify) {
  if (faults.any()) faults_ = std::make_unique<FaultInjector>(faults, dup_pool);
  out_.reserve(4 * kBurst);
}

uint16_t NfServer::poll(Port& port, Nanos now) {
  if (!port.flush()) return 0;  // back-pressure: the way back is full
  std::array<rte_mbuf*, kBurst> pkts;
  uint16_t n = port.rx(pkts.data(), kBurst);
  out_.clear();
  if (faults_) faults_->release(now, false, out_);
  if (n) {
    rx += n;
    std::array<PacketView, kBurst> views;
    std::array<nf::Verdict, kBurst> verdicts;
    std::array<uint32_t, kBurst> tag_at;
    for (uint16_t i = 0; i < n; ++i) {
      if (i + 1 < n) rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void*));
      ep_.view(pkts[i], views[i], tag_at[i]);
      verdicts[i] = nf::Verdict::kPass;
    }
    chain_->process({views.data(), n}, {verdicts.data(), n}, now);
    uint16_t keep = 0;
    for (uint16_t i = 0; i < n; ++i) {
      rte_mbuf* m = pkts[i];
      if (verdicts[i] == nf::Verdict::kDrop) {
        ++nf_drops;
        m = ep_.on_drop(m, tag_at[i]);
        if (!m) continue;
      }
      pkts[keep] = m;
      tag_at[keep] = tag_at[i];
      ++keep;
    }
    if (faults_) {
      faults_->apply(pkts.data(), tag_at.data(), keep, now, out_);
    } else {
      out_.insert(out_.end(), pkts.begin(), pkts.begin() + keep);
    }
  }
  if (!out_.empty()) port.tx(out_.data(), uint16_t(out_.size()));
  return n;
}

void NfServer::flush(Port& port, Nanos now) {
  if (!faults_) return;
  out_.clear();
  faults_->release(now, true, out_);
  if (!out_.empty()) port.tx(out_.data(), uint16_t(out_.size()));
}

}  // namespace nfpark::dp
