#include "sim/traffic_mux.h"

namespace nfpark::sim {

void TrafficMux::add(std::unique_ptr<TrafficSource> s) {
  src_.push_back(std::move(s));
  due_.push_back(kDone);
  seq_.push_back(0);
}

void TrafficMux::start(Picos start, Picos stop) {
  for (size_t i = 0; i < src_.size(); ++i)
    if (src_[i]->start(start, stop)) {
      due_[i] = src_[i]->due();
      seq_[i] = e_.take_seq();  // as if each source scheduled its own first event, in port order
    }
  if (const int k = earliest(); k >= 0) e_.schedule_seq(due_[k], seq_[k], this, uint64_t(k));
}

int TrafficMux::earliest() const {
  int best = -1;
  for (size_t i = 0; i < due_.size(); ++i)
    if (due_[i] != kDone &&
        (best < 0 || due_[i] < due_[best] || (due_[i] == due_[best] && seq_[i] < seq_[best])))
      best = int(i);
  return best;
}

void TrafficMux::on_event(uint64_t port) {
  size_t k = port;
  for (;;) {
    // the earliest of the other sources (one scan): source k keeps going while it is strictly
    // before it, and then the earlier of the two is next
    int other = -1;
    for (size_t i = 0; i < due_.size(); ++i)
      if (i != k && due_[i] != kDone &&
          (other < 0 || due_[i] < due_[other] || (due_[i] == due_[other] && seq_[i] < seq_[other])))
        other = int(i);
    const Picos others = other < 0 ? kNever : due_[other];
    TrafficSource& s = *src_[k];
    bool more;
    do {
      more = s.emit();
    } while (more && s.due() < others && e_.advance_to_if_first(s.due()));
    int next = other;
    if (more) {
      due_[k] = s.due();
      seq_[k] = e_.take_seq();  // the largest yet: k is next only when strictly earlier
      if (other < 0 || due_[k] < due_[other]) next = int(k);
    } else {
      due_[k] = kDone;
    }
    if (next < 0) return;
    if (!e_.run_inline(due_[next], seq_[next])) {
      e_.schedule_seq(due_[next], seq_[next], this, uint64_t(next));
      return;
    }
    k = size_t(next);
  }
}

}  // namespace nfpark::sim
