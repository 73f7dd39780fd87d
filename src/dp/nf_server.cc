#include "dp/nf_server.h"

#include <algorithm>
#include <array>

namespace nfpark::dp {

NfServer::NfServer(std::unique_ptr<park::NfBurst<MbufOps>> step, const park::FaultConfig& faults,
                   park::TagShape shape, rte_mempool* dup_pool)
    : step_(std::move(step)) {
  if (faults.any()) faults_ = std::make_unique<FaultInjector>(faults, shape, dup_pool);
  out_.reserve(4 * kBurst);
}

uint16_t NfServer::poll(Port& port, Nanos now) {
  if (!port.flush()) return 0;  // back-pressure: the way back is full
  std::array<rte_mbuf*, kBurst> pkts;
  uint16_t n = box_ ? box_->take(pkts.data(), kBurst) : port.rx(pkts.data(), kBurst);
  const std::optional<Nanos> t =
      step_->clock(pkts.data(), n, now, [](rte_mbuf* m) { return MbufMeta::ts(m); });
  if (!t) return 0;  // replaying a trace and nothing seen yet (n == 0)
  now = *t;
  out_.clear();
  if (faults_) faults_->release(now, false, out_);
  if (!box_) port.count_rx(pkts.data(), n);  // the box counts what it reads
  step_->run(pkts.data(), n, now, *this);
  if (!out_.empty()) port.tx(out_.data(), uint16_t(out_.size()));
  return n;
}

std::span<rte_mbuf* const> NfServer::hand(rte_mbuf** pkts, uint16_t n, Nanos now,
                                          const uint64_t* wire_bytes) {
  out_.clear();
  handed_ = pkts;
  handed_kept_ = 0;
  const std::optional<Nanos> t =
      step_->clock(pkts, n, now, [](rte_mbuf* m) { return MbufMeta::ts(m); });
  if (t) step_->run(pkts, n, *t, *this, wire_bytes);  // no clock: n == 0 before any packet
  const bool in_place = handed_ != nullptr;
  handed_ = nullptr;
  if (in_place) return {pkts, handed_kept_};
  return out_;
}

void NfServer::flush(Port& port, Nanos now) {
  out_.clear();
  // What the box released and the chain has not seen yet goes through it first.
  std::array<rte_mbuf*, kBurst> pkts;
  for (uint16_t n; box_ && (n = box_->take(pkts.data(), kBurst)) > 0;) {
    const std::optional<Nanos> t =
        step_->clock(pkts.data(), n, now, [](rte_mbuf* m) { return MbufMeta::ts(m); });
    step_->run(pkts.data(), n, t ? *t : now, *this);
  }
  now = step_->flush_time(now);
  step_->flush(now, *this);
  if (faults_) faults_->release(now, true, out_);
  for (size_t i = 0; i < out_.size(); i += 1u << 15)  // tx() takes up to 65535 at a time
    port.tx(out_.data() + i, uint16_t(std::min<size_t>(1u << 15, out_.size() - i)));
}

}  // namespace nfpark::dp
