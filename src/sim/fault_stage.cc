#include "sim/fault_stage.h"

namespace nfpark::sim {

void FaultStage::apply(Packet** pkts, const uint32_t* tag_at, uint16_t n,
                       std::vector<Packet*>& out) {
  fi_.apply(
      pkts, tag_at, n, to_nanos(e_.now()), out, [](Packet* p) { return SimBuffer::copy(p); },
      [this](Packet* p) { host_.fault_lose(p); });
  arm();
}

void FaultStage::arm() {
  const Nanos due = fi_.next_due();
  if (due == INT64_MAX) return;
  const Picos at = std::max(from_nanos(due), e_.now());
  if (armed_ <= at) return;  // an event comes first; it re-arms
  armed_ = at;
  e_.schedule(at, this);
}

void FaultStage::on_event(uint64_t) {
  if (e_.now() < armed_) return;  // superseded by an earlier event that already ran
  armed_ = kNever;
  rel_.clear();
  fi_.release(to_nanos(e_.now()), false, rel_);
  for (Packet* p : rel_) host_.fault_send(p);
  arm();
}

void FaultStage::report(const CounterSink& s) const {
  const park::FaultCounters& c = fi_.counters();
  s("faults.dropped", c.dropped);
  s("faults.duplicated", c.duplicated);
  s("faults.reordered", c.reordered);
  s("faults.corrupted", c.corrupted);
  s("faults.forged", c.forged);
  s("faults.delayed", c.delayed);
}

}  // namespace nfpark::sim
