#include "sim/reframe_box_stage.h"

#include <algorithm>
#include <array>

#include "nf/nf.h"

namespace nfpark::sim {

ReframeBoxStage::ReframeBoxStage(Engine& e, std::unique_ptr<park::ReframeStage<SimBuffer>> stage,
                                 Host& host)
    : e_(e), stage_(std::move(stage)), host_(host) {
  out_.reserve(stage_->reserve_hint());
}

void ReframeBoxStage::arrive(Packet* p) {
  waiting_.push(p);
  arm();
}

void ReframeBoxStage::arm() {
  Picos at = waiting_.head ? waiting_.head->due : kNever;
  const Nanos d = stage_->reframer().next_deadline();
  if (d != reframe::kNever) at = std::min(at, from_nanos(d));
  if (at == kNever) return;
  at = std::max(at, e_.now());
  if (armed_ <= at) return;  // an event comes first; it re-arms
  armed_ = at;
  e_.schedule(at, this);
}

void ReframeBoxStage::on_event(uint64_t) {
  if (e_.now() < armed_) return;  // superseded by an earlier event that already ran
  armed_ = kNever;
  const Picos now = e_.now();
  std::array<Packet*, nf::kBurst> pkts;
  do {  // bursts of what has completed by now; at least one poll (due batches leave)
    uint16_t n = 0;
    while (waiting_.head && waiting_.head->due <= now && n < nf::kBurst) pkts[n++] = waiting_.pop();
    out_.clear();
    stage_->run(pkts.data(), n, to_nanos(now), out_);
    for (Packet* p : out_) host_.box_release(p);
  } while (waiting_.head && waiting_.head->due <= now);
  arm();
}

}  // namespace nfpark::sim
