#include "sim/engine.h"

namespace nfpark::sim {

void Engine::schedule(Picos at, EventHandler* h, uint64_t arg) {
  const Event e{at < now_ ? now_ : at, seq_++, h, arg};
  if (top_running_) {  // replaces the event that is running (it can only move down)
    top_running_ = false;
    heap_[0] = e;
    sift_down(0);
    return;
  }
  heap_.push_back(e);
  sift_up(heap_.size() - 1);
}

void Engine::sift_up(size_t i) {
  const Event e = heap_[i];
  while (i > 0) {
    const size_t parent = (i - 1) / 2;
    if (!e.before(heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

void Engine::sift_down(size_t i) {
  const size_t n = heap_.size();
  const Event e = heap_[i];
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && heap_[c + 1].before(heap_[c])) ++c;
    if (!heap_[c].before(e)) break;
    heap_[i] = heap_[c];
    i = c;
  }
  heap_[i] = e;
}

uint64_t Engine::run(Picos until) {
  stopped_ = false;
  const uint64_t start = events_;
  while (!heap_.empty() && !stopped_) {
    if (heap_[0].at > until) {
      now_ = until;
      break;
    }
    const Event e = heap_[0];
    now_ = e.at;
    ++events_;
    top_running_ = true;
    e.h->on_event(e.arg);
    if (top_running_) {  // the handler scheduled nothing: remove its event now
      top_running_ = false;
      heap_[0] = heap_.back();
      heap_.pop_back();
      if (!heap_.empty()) sift_down(0);
    }
  }
  if (heap_.empty() && until != kNever && now_ < until && !stopped_) now_ = until;
  return events_ - start;
}

}  // namespace nfpark::sim
