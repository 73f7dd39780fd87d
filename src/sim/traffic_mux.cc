#include "sim/traffic_mux.h"

namespace nfpark::sim {

void TrafficMux::add(std::unique_ptr<TrafficSource> s) {
  src_.push_back(std::move(s));
}

void TrafficMux::start(Picos start, Picos stop) {
  while (leaves_ < src_.size()) leaves_ *= 2;
  key_.assign(leaves_, kDone);
  win_.assign(2 * leaves_, 0);
  for (size_t i = 0; i < leaves_; ++i) win_[leaves_ + i] = uint32_t(i);
  for (size_t i = 0; i < src_.size(); ++i)
    if (src_[i]->start(start, stop)) key_[i] = key(i);
  for (size_t n = leaves_ - 1; n >= 1; --n) {
    const uint32_t l = win_[2 * n], r = win_[2 * n + 1];
    win_[n] = key_[r] < key_[l] ? r : l;
  }
  if (const uint32_t k = win_[1]; key_[k] != kDone)
    e_.schedule_key(due_of(key_[k]), tie_of(key_[k]), this, k);
}

void TrafficMux::on_event(uint64_t port) {
  size_t k = port;
  for (;;) {
    TrafficSource& s = *src_[k];
    key_[k] = s.emit() ? key(k) : kDone;
    update(k);
    const uint32_t next = win_[1];
    const Key nk = key_[next];
    if (nk == kDone) return;
    if (!e_.run_inline(due_of(nk), tie_of(nk))) {
      e_.schedule_key(due_of(nk), tie_of(nk), this, next);
      return;
    }
    k = next;
  }
}

}  // namespace nfpark::sim
