// Engine: the discrete-event kernel — virtual time in picoseconds and one ordered list of events.
//
// Theory of operation
//  An event is (time, handler, argument). Events run in time order; events at the same time run
//  in the order they were scheduled (a sequence number breaks ties), so a run is a pure function
//  of its inputs and seed: no wall clock, no addresses, no globals. Two engines in one process are
//  independent (tests run them side by side).
//  Devices keep their own FIFOs and schedule one event for the head of each (a link, a port, a
//  core), not one per packet, so the list stays as small as the number of busy devices and a
//  push/pop costs O(log devices). A handler that knows nothing else can happen before time t
//  (t < next_time()) may move the clock there itself with advance_to_if_first(t) and keep going
//  without a round trip through the list — the same order of effects, fewer events.
//  Time-driven behaviour is only ever "schedule an event": nothing polls or sleeps.
// Cost: ~10–20 ns per event (binary heap of 32-byte entries, see bench/sim_bench.cc).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/time.h"

namespace nfpark::sim {

// Anything that receives events. `arg` is the handler's own (a port index, a token, ...).
class EventHandler {
 public:
  virtual void on_event(uint64_t arg) = 0;

 protected:
  ~EventHandler() = default;
};

class Engine {
 public:
  Engine() { heap_.reserve(256); }
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  Picos now() const { return now_; }
  // Schedules h->on_event(arg) at `at` (>= now(); earlier times are clamped to now()).
  void schedule(Picos at, EventHandler* h, uint64_t arg = 0);
  void schedule_in(Picos delay, EventHandler* h, uint64_t arg = 0) {
    schedule(now_ + delay, h, arg);
  }
  // Time of the earliest pending event, kNever when there is none.
  Picos next_time() const {
    if (!top_running_) return heap_.empty() ? kNever : heap_[0].at;
    const size_t n = heap_.size();  // the top is the event running: look below it
    if (n < 2) return kNever;
    return n == 2 ? heap_[1].at : std::min(heap_[1].at, heap_[2].at);
  }
  // Moves the clock to `t` if no pending event comes first (t < next_time()) and t >= now().
  bool advance_to_if_first(Picos t) {
    if (t < now_ || t >= next_time()) return false;
    now_ = t;
    return true;
  }

  // Runs events until none is left, stop() is called, or the next one is later than `until`
  // (then the clock stops at `until`). Returns the number of events run.
  uint64_t run(Picos until = kNever);
  void stop() { stopped_ = true; }
  bool stopped() const { return stopped_; }
  size_t pending() const { return heap_.size() - (top_running_ ? 1 : 0); }
  uint64_t events_run() const { return events_; }

 private:
  struct Event {
    Picos at;
    uint64_t seq;
    EventHandler* h;
    uint64_t arg;
    bool before(const Event& o) const { return at < o.at || (at == o.at && seq < o.seq); }
  };
  void sift_up(size_t i);
  void sift_down(size_t i);

  std::vector<Event> heap_;
  Picos now_ = 0;
  uint64_t seq_ = 0;
  uint64_t events_ = 0;
  bool stopped_ = false;
  // While a handler runs, its event stays at the top of the heap: the first event the handler
  // schedules replaces it (one sift instead of a pop and a push — a device rescheduling itself).
  bool top_running_ = false;
};

// The engine's time as a core Clock (nanoseconds), for code written against nfpark::Clock.
class EngineClock final : public Clock {
 public:
  explicit EngineClock(const Engine& e) : e_(e) {}
  Nanos now() const override { return to_nanos(e_.now()); }

 private:
  const Engine& e_;
};

}  // namespace nfpark::sim
