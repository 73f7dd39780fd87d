// The event kernel: time order, the canonical tie order (sim/tie.h; unranked handlers' ties in
// scheduling order), run(until), stop(), advance_to_if_first and run_inline (never past a run's
// limit), and independence of two engines in one process.
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

// A device of the canonical tie order (sim/tie.h): a rank and an index.
struct Device final : EventHandler {
  Engine* e = nullptr;
  std::vector<std::tuple<Picos, uint32_t, uint64_t>>* log = nullptr;  // (time, device, arg)
  uint32_t id = 0;
  void on_event(uint64_t arg) override { log->emplace_back(e->now(), id, arg); }
};

TEST(Engine, TiesRunInRankAndIndexOrderNotInSchedulingOrder) {
  Engine e;
  std::vector<std::tuple<Picos, uint32_t, uint64_t>> log;
  Device ingress3, ingress1, mac2, afc2, sampler;
  int id = 0;
  for (Device* d : {&ingress3, &ingress1, &mac2, &afc2, &sampler}) {
    d->e = &e;
    d->log = &log;
    d->id = uint32_t(id++);
  }
  ingress3.set_tie(Rank::kIngress, 3);
  ingress1.set_tie(Rank::kIngress, 1);
  mac2.set_tie(Rank::kPortMac, 2);
  afc2.set_tie(Rank::kAfc, 2);
  sampler.set_tie(Rank::kSampler, 0);
  // scheduled against the canonical order: in scheduling order they would run as listed
  e.schedule(10, &sampler, 0);
  e.schedule(10, &ingress3, 1);
  e.schedule(10, &ingress1, 2);
  e.schedule(10, &mac2, 3);
  e.schedule(10, &ingress1, 4);  // the same device twice at one instant: its own order
  e.schedule(5, &sampler, 5);
  e.schedule_tie(10, tie(Rank::kAfc, 2), &mac2, 6);  // an explicit tie for a second role
  e.run();
  const std::vector<std::tuple<Picos, uint32_t, uint64_t>> want = {
      {5, 4, 5}, {10, 2, 6}, {10, 2, 3}, {10, 1, 2}, {10, 1, 4}, {10, 0, 1}, {10, 4, 0},
  };
  EXPECT_EQ(log, want) << "at one instant: AFC, MAC, ingress by port, sampler";
}

// The order at an instant is a function of which devices act then, not of the history of
// scheduling: the same events scheduled in any order (near the clock, across the calendar's
// horizon, far in the heap) run in (time, rank, index, per-device order).
TEST(Engine, CanonicalOrderIsIndependentOfSchedulingOrder) {
  constexpr int kDevices = 24;
  std::vector<std::tuple<Picos, uint32_t, uint64_t>> runs[3];
  for (int run = 0; run < 3; ++run) {
    Engine e;
    std::vector<Device> dev(kDevices);
    for (int i = 0; i < kDevices; ++i) {
      dev[i].e = &e;
      dev[i].log = &runs[run];
      dev[i].id = uint32_t(i);
      // ranks and indexes not in device-number order
      dev[i].set_tie(Rank(1 + (i * 7) % 9), uint32_t((i * 5) % 11));
    }
    trace::Rng rng(23);
    struct Ev {
      Picos at;
      uint32_t dev;
      uint64_t arg;
    };
    std::vector<Ev> evs;
    uint64_t per_dev[kDevices] = {};
    for (int i = 0; i < 6000; ++i) {
      const Picos t = rng.below(4) == 0 ? Picos(rng.below(40)) << 24 : Picos(rng.below(500));
      const uint32_t d = uint32_t(rng.below(kDevices));
      evs.push_back({t, d, 0});
    }
    // per device, events at one instant in a fixed order (arg = their rank in it)
    std::stable_sort(evs.begin(), evs.end(), [](const Ev& a, const Ev& b) {
      return std::tie(a.dev, a.at) < std::tie(b.dev, b.at);
    });
    for (auto& x : evs) x.arg = per_dev[x.dev]++;
    // schedule: run 0 in that order, runs 1 and 2 shuffled (keeping each device's own order)
    if (run > 0) {
      trace::Rng sh(uint64_t(run) * 101);
      std::vector<std::vector<Ev>> by_dev(kDevices);
      for (auto& x : evs) by_dev[x.dev].push_back(x);
      std::vector<size_t> next(kDevices, 0);
      evs.clear();
      for (size_t left = 6000; left > 0; --left) {
        uint32_t d;
        do d = uint32_t(sh.below(kDevices));
        while (next[d] == by_dev[d].size());
        evs.push_back(by_dev[d][next[d]++]);
      }
    }
    for (auto& x : evs) e.schedule(x.at, &dev[x.dev], x.arg);
    e.run();
    ASSERT_EQ(runs[run].size(), 6000u);
    for (size_t i = 1; i < runs[run].size(); ++i) {
      const auto& [ta, da, aa] = runs[run][i - 1];
      const auto& [tb, db, ab] = runs[run][i];
      const auto ka = std::tuple(ta, dev[da].tie(), aa), kb = std::tuple(tb, dev[db].tie(), ab);
      ASSERT_LT(ka, kb) << "(time, rank, index, device order) at event " << i << " of run " << run;
    }
  }
  EXPECT_EQ(runs[0], runs[1]);
  EXPECT_EQ(runs[0], runs[2]);
}

struct InlineProbe final : EventHandler {  // asks whether (at, key) may run now, from an event
  Engine* e = nullptr;
  Picos at = 0;
  uint64_t key = 0;
  std::vector<std::pair<bool, Picos>> got;  // the answer and the clock after it
  void on_event(uint64_t) override {
    const bool ok = e->run_inline(at, key);
    got.emplace_back(ok, e->now());
  }
};

TEST(Engine, RunInlineOnlyWhenNothingComesFirstInTieOrderAndWithinTheRun) {
  for (const auto& [rank, want] : {std::pair{Rank::kPortMac, true}, {Rank::kTimer, false}}) {
    // an ingress event pending at 20: a MAC decision at 20 comes before it, a timer after it
    Engine e;
    Recorder r;
    r.e = &e;
    r.set_tie(Rank::kIngress, 0);
    InlineProbe p;
    p.e = &e;
    e.schedule(10, &p);
    e.schedule(20, &r, 7);
    p.at = 20;
    p.key = tie(rank, 0) | kTieSeqMask;
    e.run();
    EXPECT_EQ(p.got, (std::vector<std::pair<bool, Picos>>{{want, want ? 20 : 10}}));
    EXPECT_EQ(r.seen, (std::vector<std::pair<Picos, uint64_t>>{{20, 7}}));
  }
  {  // nothing pending, but past the run's limit
    Engine e;
    InlineProbe p;
    p.e = &e;
    e.schedule(10, &p);
    p.at = 20;
    p.key = tie(Rank::kIngress, 0);
    e.run(15);
    EXPECT_EQ(p.got, (std::vector<std::pair<bool, Picos>>{{false, 10}}));
    EXPECT_EQ(e.now(), 15);
  }
}

// schedule_key: a device that keeps its own due list (the traffic mux) schedules with the key
// its event has by the tie order; it runs where that key says among events scheduled before and
// after it.
TEST(Engine, ScheduleKeyRunsAtItsTiePlace) {
  Engine e;
  std::vector<std::tuple<Picos, uint32_t, uint64_t>> log;
  Device mac, timer, mux;
  mac.set_tie(Rank::kPortMac, 0);
  timer.set_tie(Rank::kTimer, 0);
  for (Device* d : {&mac, &timer, &mux}) {
    d->e = &e;
    d->log = &log;
  }
  mac.id = 0;
  timer.id = 1;
  mux.id = 2;
  e.schedule(10, &timer, 0);
  e.schedule_key(10, tie(Rank::kIngress, 4), &mux, 1);
  e.schedule(10, &mac, 2);
  e.run();
  EXPECT_EQ(log, (std::vector<std::tuple<Picos, uint32_t, uint64_t>>{
                     {10, 0, 2}, {10, 2, 1}, {10, 1, 0}}));
}

}  // namespace
}  // namespace nfpark::sim
