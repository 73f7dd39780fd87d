// Engine: the discrete-event kernel — virtual time in picoseconds and one ordered set of events.
//
// Theory of operation
//  An event is (time, handler, argument). Events run in time order; events at the same time run
//  in canonical tie order (sim/tie.h): by the rank and index of the device that acts (its
//  handler's tie(), or one given with the event), then in the order that device scheduled them.
//  So a run is a pure function of its inputs and seed — no wall clock, no addresses, no globals —
//  and the order at an instant does not depend on when events were scheduled. Two engines in one
//  process are independent (tests run them side by side).
//  The events live in a calendar: a ring of 2^14 buckets of 2^10 ps (1.024 ns) covering the next
//  16.8 us, each bucket a list kept in (time, tie) order (a new event usually goes after
//  the tail, which the bucket also remembers), with a bitmap of the non-empty
//  buckets; events further ahead wait in a binary heap. Nearly every event of a packet network is
//  due within nanoseconds to microseconds, so scheduling one is a short list insert and finding
//  the next a few bit scans, whatever the number of pending events (a heap pays log2 of it, with
//  unpredictable branches).
//  Devices keep their own FIFOs and schedule one event for the head of each (a link, a port, a
//  core), not one per packet. A handler that knows nothing else can happen before time t
//  (t < next_time()) may move the clock there itself with advance_to_if_first(t) and keep going.
//  Time-driven behaviour is only ever "schedule an event": nothing polls or sleeps.
// Cost: see bench/sim_bench.cc.
#pragma once
#include <array>
#include <cassert>
#include <cstdint>
#include <vector>

#include "core/hot_path.h"
#include "sim/tie.h"
#include "sim/time.h"

namespace nfpark::sim {

class EventHandler {
 public:
  virtual void on_event(uint64_t arg) = 0;
  // Where this handler's events stand at an instant (sim/tie.h; kUnranked by default).
  uint64_t tie() const { return tie_; }
  void set_tie(Rank r, uint32_t index) { tie_ = sim::tie(r, index); }

 protected:
  ~EventHandler() = default;

 private:
  uint64_t tie_ = 0;
};

class Engine {
 public:
  Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  Picos now() const { return now_; }
  // The tie key (sim/tie.h) of the event running now (~0 outside run(), or after
  // advance_to_if_first): with now(), where "now" stands at this instant, for a device that
  // applies effects it deferred to instants of its own (EgressPort's trains).
  uint64_t now_key() const { return cur_key_; }
  // True when an effect at (at, key) comes before the event running now: it has happened.
  bool has_happened(Picos at, uint64_t key) const {
    return at < now_ || (at == now_ && key < cur_key_);
  }
  // Schedules h->on_event(arg) at `at` (>= now(); earlier times are clamped to now()), at the
  // handler's tie (or `tie`, from sim::tie(), for a handler acting as several devices).
  void schedule(Picos at, EventHandler* h, uint64_t arg = 0) { schedule_tie(at, h->tie(), h, arg); }
  void schedule_tie(Picos at, uint64_t tie, EventHandler* h, uint64_t arg = 0) {
    assert(seq_ <= kTieSeqMask);
    schedule_key(at < now_ ? now_ : at, tie | seq_++, h, arg);
  }
  void schedule_in(Picos delay, EventHandler* h, uint64_t arg = 0) {
    schedule(now_ + delay, h, arg);
  }
  // Time of the earliest pending event, kNever when there is none.
  Picos next_time() const {
    const uint32_t n = first();
    return n == kNil ? kNever : nodes_[n].at;
  }
  // Moves the clock to `t` if no pending event comes first (t < next_time()), t >= now(), and
  // the running run() would not stop before it (its `until`, stop()): the clock never passes a
  // run's limit, so it never has to go back.
  bool advance_to_if_first(Picos t) {
    if (t < now_ || t >= next_time() || t > until_ || stopped_) return false;
    now_ = t;
    cur_key_ = ~0ull;
    return true;
  }

  // For a device that keeps its own list of due events (TrafficMux, Pipe): an event's tie key
  // (sim::tie() | a sequence) is known without scheduling it, so the device either schedules it
  // with that key (schedule_key) or, when it comes before every pending event, runs it itself
  // (run_inline). The engine then runs everything in the order it would have run had each of
  // those events been scheduled on its own.
  NFPARK_HOT_INLINE void schedule_key(Picos at, uint64_t key, EventHandler* h, uint64_t arg = 0) {
    assert(at >= now_);
    uint32_t n = free_;
    if (n != kNil) [[likely]]
      free_ = nodes_[n].next;
    else
      n = grow();
    Node& x = nodes_[n];
    x = Node{at, key, h, arg, kNil};
    ++pending_;
    if (first_valid_ && (first_ == kNil || x.before(nodes_[first_]))) first_ = n;
    if (uint64_t(at >> kShift) - uint64_t(now_ >> kShift) >= kBuckets) [[unlikely]]
      return heap_push(n);
    const uint32_t b = uint32_t(at >> kShift) & (kBuckets - 1);
    Bucket& bk = bucket_[b];
    // keep the bucket in (time, tie) order: a new node usually goes after its tail (time mostly
    // grows with scheduling) or into an empty bucket
    if (bk.tail == kNil) {
      bk.head = bk.tail = n;
      uint64_t& w = bits_[b >> 6];
      if (!w) summary_[b >> 12] |= 1ull << ((b >> 6) & 63);
      w |= 1ull << (b & 63);
    } else if (nodes_[bk.tail].before(x)) [[likely]] {
      nodes_[bk.tail].next = n;
      bk.tail = n;
    } else {
      insert_sorted(bk, n);
    }
  }
  // True, with the clock moved to `at`, when the event (at, key) is next: no pending event comes
  // before it, at >= now(), the running run() would not stop before it (its `until`, stop()).
  // A device's next event of its own tie comes after every pending one of that tie: pass
  // tie | kTieSeqMask.
  bool run_inline(Picos at, uint64_t key) {
    if (stopped_ || at < now_ || at > until_) return false;
    const uint32_t n = first();
    if (n != kNil && !(at < nodes_[n].at || (at == nodes_[n].at && key < nodes_[n].key)))
      return false;
    now_ = at;
    cur_key_ = key;
    return true;
  }

  // Runs events until none is left, stop() is called, or the next one is later than `until`
  // (then the clock stops at `until`). Returns the number of events run.
  uint64_t run(Picos until = kNever);
  void stop() { stopped_ = true; }
  bool stopped() const { return stopped_; }
  size_t pending() const { return pending_; }
  uint64_t events_run() const { return events_; }

 private:
  static constexpr int kShift = 10;              // bucket width 2^10 ps
  static constexpr uint32_t kBuckets = 1 << 14;  // horizon 2^24 ps = 16.8 us
  static constexpr uint32_t kWords = kBuckets / 64;
  static constexpr uint32_t kNil = UINT32_MAX;
  struct Node {
    Picos at;
    uint64_t key;  // tie | sequence (sim/tie.h)
    EventHandler* h;
    uint64_t arg;
    uint32_t next;
    // (at, key) order as one 128-bit compare (at >= 0): no branch on equal times
    unsigned __int128 order() const { return (unsigned __int128)uint64_t(at) << 64 | key; }
    bool before(const Node& o) const { return order() < o.order(); }
  };
  struct Bucket {
    uint32_t head = kNil, tail = kNil;  // its list, in (time, tie) order
  };
  uint32_t grow();  // a fresh node at the end of nodes_ (the free list is empty)
  void insert_sorted(Bucket& bk, uint32_t n);  // n into bk's list, before its first later node
  // The earliest pending node (ring or heap), kNil when none. Cached: schedule() keeps the cache
  // (a new node replaces it only when earlier), taking the first node out finds the next in
  // the same bucket, so a handler asking next_time() after each packet does not scan the
  // calendar again.
  uint32_t first() const {
    if (!first_valid_) {
      first_ = find_first();
      first_valid_ = true;
    }
    return first_;
  }
  uint32_t find_first() const;
  uint32_t ring_first() const;  // the head of the first non-empty bucket from now on
  // Removes the earliest node `n` (ring or heap); the clock is at it. Inline in run().
  inline void unlink(uint32_t n);
  // The ring's first node `f` is the earliest pending unless the heap's comes first.
  bool before_far(uint32_t f) const { return nodes_[f].order() < far_min_; }
  void heap_push(uint32_t n);
  void heap_pop();

  std::vector<Node> nodes_;
  uint32_t free_ = kNil;
  std::vector<Bucket> bucket_;                         // head and tail node per bucket
  std::array<uint64_t, kWords> bits_{};                // non-empty buckets
  std::array<uint64_t, kWords / 64> summary_{};        // non-zero words of bits_
  std::vector<uint32_t> far_;                          // binary heap of nodes beyond the horizon
  unsigned __int128 far_min_ = ~(unsigned __int128)0;  // its first's order (all ones: empty)
  uint32_t far_top_ = kNil;                            // its first (kNil: empty)
  mutable uint32_t first_ = kNil;                      // find_first() while first_valid_
  mutable bool first_valid_ = true;
  Picos now_ = 0;
  Picos until_ = kNever;  // the running run()'s limit
  uint64_t seq_ = 0;
  uint64_t cur_key_ = ~0ull;  // now_key()
  uint64_t events_ = 0;
  size_t pending_ = 0;
  bool stopped_ = false;
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
