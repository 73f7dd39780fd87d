#include "dp/nf_server.h"

#include <array>

namespace nfpark::dp {

NfServer::NfServer(std::unique_ptr<nf::Chain> chain, std::optional<park::TagFormat> format,
                   bool notify, const Faults& faults, rte_mempool* dup_pool, bool slicer)
    : chain_(std::move(chain)), ep_(format, notify, slicer) {
  if (faults.any()) faults_ = std::make_unique<FaultInjector>(faults, dup_pool);
  out_.reserve(4 * kBurst);
}

void NfServer::set_reframer(const reframe::ReorderConfig& cfg, const reframe::BypassRules& rules) {
  bypass_ = rules;
  reorder_ = std::make_unique<reframe::FlowReorder<rte_mbuf*>>(cfg);
  ready_.reserve(cfg.max_held_packets + 4 * kBurst);
}

void NfServer::process_burst(rte_mbuf** pkts, uint16_t n, Nanos now) {
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
  if (faults_)
    faults_->apply(pkts, tag_at.data(), keep, now, out_);
  else
    out_.insert(out_.end(), pkts, pkts + keep);
}

// Runs what Reframer released through the chain, a burst at a time, flows kept together.
void NfServer::run_ready(Nanos now) {
  for (size_t i = 0; i < ready_.size(); i += kBurst) {
    uint16_t n = uint16_t(std::min<size_t>(kBurst, ready_.size() - i));
    process_burst(ready_.data() + i, n, now);
  }
  ready_.clear();
}

uint16_t NfServer::poll(Port& port, Nanos now) {
  if (!port.flush()) return 0;  // back-pressure: the way back is full
  std::array<rte_mbuf*, kBurst> pkts;
  uint16_t n = port.rx(pkts.data(), kBurst);
  if (trace_time_) {
    for (uint16_t i = 0; i < n; ++i) trace_now_ = std::max(trace_now_, MbufMeta::ts(pkts[i]));
    if (trace_now_ == INT64_MIN) return 0;  // nothing seen yet (n == 0)
    now = trace_now_;
  }
  clock_ = now;
  out_.clear();
  if (faults_) faults_->release(now, false, out_);
  rx += n;
  port.count_rx(pkts.data(), n);
  if (reorder_) {
    Collect c{this};
    if (n && reorder_->passing()) {  // self-bypassed (reframe/self_bypass.h): no classify()
      reorder_->pass({pkts.data(), n}, c);
    } else if (n) {
      std::array<reframe::PacketMeta, kBurst> meta;
      for (uint16_t i = 0; i < n; ++i) {
        const uint8_t* d = rte_pktmbuf_mtod(pkts[i], const uint8_t*);
        meta[i] = reframe::classify(d, parse_packet(d, pkts[i]->data_len), bypass_);
      }
      reorder_->push({pkts.data(), n}, {meta.data(), n}, now, c);
    }
    reorder_->poll(now, c);
    run_ready(now);
  } else if (n) {
    process_burst(pkts.data(), n, now);
  }
  if (!out_.empty()) port.tx(out_.data(), uint16_t(out_.size()));
  return n;
}

void NfServer::flush(Port& port, Nanos now) {
  if (trace_time_) now = trace_now_ == INT64_MIN ? 0 : trace_now_;
  out_.clear();
  if (reorder_) {
    Collect c{this};
    reorder_->flush_all(now, c);
    run_ready(now);
  }
  if (faults_) faults_->release(now, true, out_);
  if (!out_.empty()) port.tx(out_.data(), uint16_t(out_.size()));
}

}  // namespace nfpark::dp
