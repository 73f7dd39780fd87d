#include "sim/traffic_mux.h"

namespace nfpark::sim {

void TrafficMux::add(std::unique_ptr<TrafficSource> s) {
  src_.push_back(std::move(s));
  key_.push_back(kDone);
}

void TrafficMux::start(Picos start, Picos stop) {
  for (size_t i = 0; i < src_.size(); ++i)
    if (src_[i]->start(start, stop))  // as if each source scheduled its first event, in order
      key_[i] = key(src_[i]->due(), e_.take_seq());
  if (const int k = earliest(src_.size()); k >= 0)
    e_.schedule_seq(due_of(key_[k]), seq_of(key_[k]), this, uint64_t(k));
}

int TrafficMux::earliest(size_t skip) const {
  Key best = kDone;
  int at = -1;
  for (size_t i = 0; i < key_.size(); ++i)
    if (i != skip && key_[i] < best) {
      best = key_[i];
      at = int(i);
    }
  return at;
}

void TrafficMux::on_event(uint64_t port) {
  size_t k = port;
  for (;;) {
    // the earliest of the other sources (one scan): source k keeps going while it is strictly
    // before it, and then the earlier of the two is next
    const int other = earliest(k);
    const Picos others = other < 0 ? kNever : due_of(key_[other]);
    TrafficSource& s = *src_[k];
    bool more;
    do {
      more = s.emit();
    } while (more && s.due() < others && e_.advance_to_if_first(s.due()));
    int next = other;
    if (more) {
      key_[k] = key(s.due(), e_.take_seq());  // the largest number yet: next only when earlier
      if (other < 0 || key_[k] < key_[other]) next = int(k);
    } else {
      key_[k] = kDone;
    }
    if (next < 0) return;
    if (!e_.run_inline(due_of(key_[next]), seq_of(key_[next]))) {
      e_.schedule_seq(due_of(key_[next]), seq_of(key_[next]), this, uint64_t(next));
      return;
    }
    k = size_t(next);
  }
}

}  // namespace nfpark::sim
