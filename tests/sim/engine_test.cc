// The event kernel: time order, FIFO order of ties, run(until), stop(), advance_to_if_first (never
// past a run's limit), and independence of two engines in one process.
#include "sim/engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>
#include <vector>

#include "trace/rng.h"

namespace nfpark::sim {
namespace {

struct Recorder final : EventHandler {
  Engine* e = nullptr;
  std::vector<std::pair<Picos, uint64_t>> seen;
  void on_event(uint64_t arg) override { seen.emplace_back(e->now(), arg); }
};

TEST(Engine, RunsEventsInTimeOrderAndTiesInScheduleOrder) {
  Engine e;
  Recorder r;
  r.e = &e;
  e.schedule(30, &r, 1);
  e.schedule(10, &r, 2);
  e.schedule(20, &r, 3);
  e.schedule(10, &r, 4);  // same time as arg 2, scheduled later: runs after it
  e.schedule(10, &r, 5);
  EXPECT_EQ(e.run(), 5u);
  const std::vector<std::pair<Picos, uint64_t>> want = {
      {10, 2}, {10, 4}, {10, 5}, {20, 3}, {30, 1}};
  EXPECT_EQ(r.seen, want);
  EXPECT_EQ(e.now(), 30);
}

TEST(Engine, RandomScheduleComesOutSortedAndStable) {
  Engine e;
  Recorder r;
  r.e = &e;
  trace::Rng rng(7);
  std::vector<std::pair<Picos, uint64_t>> want;
  for (uint64_t i = 0; i < 5000; ++i) {
    const Picos t = Picos(rng.below(300));
    e.schedule(t, &r, i);
    want.emplace_back(t, i);
  }
  std::stable_sort(want.begin(), want.end(), [](auto& a, auto& b) { return a.first < b.first; });
  e.run();
  EXPECT_EQ(r.seen, want) << "events must run by time, ties in the order scheduled";
}

struct Chain final : EventHandler {  // reschedules itself: time-driven behaviour as events
  Engine* e;
  int left;
  std::vector<Picos> at;
  void on_event(uint64_t) override {
    at.push_back(e->now());
    if (--left > 0) e->schedule_in(7, this);
  }
};

TEST(Engine, RunUntilStopsTheClockThereAndResumes) {
  Engine e;
  Chain c{};
  c.e = &e;
  c.left = 10;
  e.schedule(0, &c);
  e.run(20);
  EXPECT_EQ(c.at, (std::vector<Picos>{0, 7, 14}));
  EXPECT_EQ(e.now(), 20);
  EXPECT_EQ(e.pending(), 1u);
  e.run();
  EXPECT_EQ(c.at.size(), 10u);
  EXPECT_EQ(c.at.back(), 63);
}

struct Stopper final : EventHandler {
  Engine* e;
  int n = 0;
  void on_event(uint64_t) override {
    if (++n == 3) e->stop();
  }
};

TEST(Engine, StopEndsTheRunAfterTheCurrentEvent) {
  Engine e;
  Stopper s;
  s.e = &e;
  for (int i = 0; i < 10; ++i) e.schedule(i, &s);
  e.run();
  EXPECT_EQ(s.n, 3);
  EXPECT_EQ(e.pending(), 7u);
}

TEST(Engine, AdvanceOnlyWhenNothingComesFirst) {
  Engine e;
  Recorder r;
  r.e = &e;
  e.schedule(100, &r);
  EXPECT_TRUE(e.advance_to_if_first(50));
  EXPECT_EQ(e.now(), 50);
  EXPECT_FALSE(e.advance_to_if_first(100)) << "an event at 100 comes first (scheduled earlier)";
  EXPECT_FALSE(e.advance_to_if_first(40)) << "time never goes back";
  EXPECT_EQ(e.now(), 50);
}

struct Advancer final : EventHandler {  // a device running ahead while nothing comes first
  Engine* e;
  Picos to;
  bool ok = false;
  void on_event(uint64_t) override { ok = e->advance_to_if_first(to); }
};

TEST(Engine, AdvanceNeverPassesTheRunsLimit) {
  Engine e;
  Recorder r;
  r.e = &e;
  Advancer a;
  a.e = &e;
  a.to = 30;
  e.schedule(10, &a);
  e.schedule(100, &r);
  e.run(20);
  EXPECT_FALSE(a.ok) << "30 is past the run's limit: the device schedules instead";
  EXPECT_EQ(e.now(), 20) << "the clock stops at the limit, and never goes back";
  a.to = 50;
  e.schedule(40, &a);
  e.run(60);
  EXPECT_TRUE(a.ok);
  EXPECT_EQ(e.now(), 60);
}

TEST(Engine, PastTimesAreClampedToNow) {
  Engine e;
  Recorder r;
  r.e = &e;
  e.schedule(10, &r, 1);
  e.run();
  e.schedule(3, &r, 2);
  e.run();
  EXPECT_EQ(r.seen.back(), (std::pair<Picos, uint64_t>{10, 2}));
}

TEST(Engine, TwoEnginesInOneProcessAreIndependent) {
  Engine a, b;
  Chain ca{}, cb{};
  ca.e = &a;
  ca.left = 5;
  cb.e = &b;
  cb.left = 3;
  a.schedule(1, &ca);
  b.schedule(2, &cb);
  a.run(8);  // interleave: part of a, all of b, the rest of a
  b.run();
  a.run();
  EXPECT_EQ(ca.at, (std::vector<Picos>{1, 8, 15, 22, 29}));
  EXPECT_EQ(cb.at, (std::vector<Picos>{2, 9, 16}));
  EXPECT_EQ(a.events_run(), 5u);
  EXPECT_EQ(b.events_run(), 3u);
}

// Events near (in the calendar) and far (beyond its 16.8 us horizon) interleave in time order,
// ties in schedule order, also when handlers schedule more events as the clock moves.
struct Spawner final : EventHandler {
  Engine* e = nullptr;
  trace::Rng* rng = nullptr;
  uint64_t next_id = 0;
  int budget = 0;
  std::vector<std::pair<Picos, uint64_t>> seen;  // (time, id in schedule order)
  void add(Picos at) { e->schedule(at, this, next_id++); }
  void on_event(uint64_t id) override {
    seen.emplace_back(e->now(), id);
    if (budget-- <= 0) return;
    const uint64_t kind = rng->below(4);
    const Picos d = kind == 0   ? 0                            // a tie with now
                    : kind == 1 ? Picos(rng->below(2000))      // the same few buckets
                    : kind == 2 ? Picos(rng->below(20 * kUs))  // across the horizon
                                : Picos(rng->below(5 * kMs));  // far
    add(e->now() + d);
    if (rng->below(3) == 0) add(e->now() + d);  // and a tie with it
  }
};

TEST(Engine, NearAndFarEventsComeOutInTimeAndScheduleOrder) {
  Engine e;
  trace::Rng rng(11);
  Spawner s;
  s.e = &e;
  s.rng = &rng;
  s.budget = 200000;
  for (int i = 0; i < 300; ++i) s.add(Picos(rng.below(100 * kUs)));
  e.run();
  ASSERT_GT(s.seen.size(), 200000u);
  for (size_t i = 1; i < s.seen.size(); ++i) {
    ASSERT_LE(s.seen[i - 1].first, s.seen[i].first) << "time order at event " << i;
    if (s.seen[i - 1].first == s.seen[i].first) {
      ASSERT_LT(s.seen[i - 1].second, s.seen[i].second) << "ties in schedule order at " << i;
    }
  }
  EXPECT_EQ(e.pending(), 0u);
}

TEST(Engine, AReservedSequenceNumberOrdersTiesAsIfScheduledWhenTaken) {
  Engine e;
  Recorder r;
  r.e = &e;
  e.schedule(10, &r, 1);
  const uint64_t s = e.take_seq();  // between 1 and 3
  e.schedule(10, &r, 3);
  e.schedule(5, &r, 0);
  e.schedule_seq(10, s, &r, 2);  // scheduled last, runs as if scheduled second
  e.run();
  const std::vector<std::pair<Picos, uint64_t>> want = {{5, 0}, {10, 1}, {10, 2}, {10, 3}};
  EXPECT_EQ(r.seen, want);
}

TEST(Engine, ReservedAndFreshEventsNearAndFarComeOutInTimeAndReservationOrder) {
  Engine e;
  Recorder r;
  r.e = &e;
  trace::Rng rng(11);
  struct Later {
    Picos at;
    uint64_t seq, id;
  };
  std::vector<Later> later;
  std::vector<std::tuple<Picos, uint64_t, uint64_t>> want;  // (time, order taken, id)
  for (uint64_t i = 0; i < 4000; ++i) {
    // a few ticks apart (ties in one bucket) or beyond the calendar's horizon (the heap)
    const Picos t = rng.below(4) == 0 ? Picos(rng.below(40)) << 24 : Picos(rng.below(3000));
    if (rng.below(2)) {
      later.push_back({t, e.take_seq(), i});
    } else {
      e.schedule(t, &r, i);
    }
    want.emplace_back(t, i, i);
  }
  for (size_t i = later.size(); i-- > 0;)
    e.schedule_seq(later[i].at, later[i].seq, &r, later[i].id);
  std::sort(want.begin(), want.end());
  e.run();
  ASSERT_EQ(r.seen.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_EQ(r.seen[i], (std::pair<Picos, uint64_t>{std::get<0>(want[i]), std::get<2>(want[i])}))
        << "event " << i;
}

struct InlineProbe final : EventHandler {  // asks whether (at, seq) may run now, from an event
  Engine* e = nullptr;
  Picos at = 0;
  uint64_t seq = 0;
  std::vector<std::pair<bool, Picos>> got;  // the answer and the clock after it
  void on_event(uint64_t) override {
    const bool ok = e->run_inline(at, seq);
    got.emplace_back(ok, e->now());
  }
};

TEST(Engine, RunInlineOnlyWhenNothingComesFirstAndWithinTheRun) {
  {  // (20, s) comes before the event at 20 scheduled after s was taken
    Engine e;
    Recorder r;
    r.e = &e;
    InlineProbe p;
    p.e = &e;
    e.schedule(10, &p);
    p.at = 20;
    p.seq = e.take_seq();
    e.schedule(20, &r, 7);
    e.run();
    EXPECT_EQ(p.got, (std::vector<std::pair<bool, Picos>>{{true, 20}}));
    EXPECT_EQ(r.seen, (std::vector<std::pair<Picos, uint64_t>>{{20, 7}}));
  }
  {  // taken after it: the pending event comes first
    Engine e;
    Recorder r;
    r.e = &e;
    InlineProbe p;
    p.e = &e;
    e.schedule(10, &p);
    e.schedule(20, &r, 7);
    p.at = 20;
    p.seq = e.take_seq();
    e.run();
    EXPECT_EQ(p.got, (std::vector<std::pair<bool, Picos>>{{false, 10}}));
  }
  {  // nothing pending, but past the run's limit
    Engine e;
    InlineProbe p;
    p.e = &e;
    e.schedule(10, &p);
    p.at = 20;
    p.seq = e.take_seq();
    e.run(15);
    EXPECT_EQ(p.got, (std::vector<std::pair<bool, Picos>>{{false, 10}}));
    EXPECT_EQ(e.now(), 15);
  }
}

}  // namespace
}  // namespace nfpark::sim
