// WorkerConfig and ResultSum: a worker's share of the stores, its keys, and the sum of parts.
#include "run/worker_config.h"

#include <gtest/gtest.h>

#include "park/secret.h"
#include "run/result_sum.h"

namespace nfpark::run {
namespace {

RunConfig keyed(uint32_t workers) {
  RunConfig c;
  c.workers = workers;
  c.park.key = park::derive_key(park::Key128{1, 2, 3}, "park");
  c.queuemem.key = c.park.key;
  c.slicer.key = park::derive_key(park::Key128{1, 2, 3}, "slicer");
  return c;
}

TEST(WorkerConfig, OneWorkerRunsTheRunsConfig) {
  const RunConfig c = keyed(1);
  const RunConfig w = worker_config(c, 0);
  EXPECT_EQ(w.park.slots, c.park.slots);
  EXPECT_EQ(w.queuemem.queues, c.queuemem.queues);
  EXPECT_EQ(w.slicer.cores, c.slicer.cores);
  EXPECT_EQ(*w.park.key, *c.park.key);
  EXPECT_EQ(w.faults.seed, c.faults.seed);
}

TEST(WorkerConfig, EachWorkerOwnsItsShareAndItsKeys) {
  RunConfig c = keyed(2);
  c.park.slots = 65536;
  c.queuemem.queues = 1600;
  c.queuemem.slices = 6;
  c.queuemem.header_array = 94000;
  const RunConfig w0 = worker_config(c, 0), w1 = worker_config(c, 1);
  for (const RunConfig* w : {&w0, &w1}) {
    EXPECT_EQ(w->park.slots, 32768u);
    EXPECT_EQ(w->queuemem.queues, 800);
    EXPECT_EQ(w->queuemem.slices, 3);
    EXPECT_EQ(w->queuemem.header_array, 47000u);
    EXPECT_EQ(w->slicer.cores, 2);  // the token's core id is the worker
    EXPECT_TRUE(w->queuemem.validate().empty()) << w->queuemem.validate();
  }
  EXPECT_EQ(w0.worker, 0u);
  EXPECT_EQ(w1.worker, 1u);
  EXPECT_EQ(*w0.park.key, *c.park.key);  // worker 0 keeps the run's keys
  EXPECT_NE(*w1.park.key, *c.park.key);  // the others: derived, so tags do not cross
  EXPECT_NE(*w1.queuemem.key, *c.queuemem.key);
  EXPECT_NE(w1.slicer.key, c.slicer.key);
  EXPECT_NE(w1.faults.seed, w0.faults.seed);
  // Small stores never share out to nothing; slices never exceed queues.
  c.workers = 64;
  c.park.slots = 10;
  c.queuemem.queues = 3;
  const RunConfig tiny = worker_config(c, 63);
  EXPECT_EQ(tiny.park.slots, 1u);
  EXPECT_EQ(tiny.queuemem.queues, 1);
  EXPECT_EQ(tiny.queuemem.slices, 1);
}

TEST(ResultSum, PartsAddUp) {
  RunResult a, b, t;
  a.packets_in = 10, a.packets_out = 9, a.switch_drops = 1;
  a.drops.values["bad_tag"] = 1;
  a.nf.values["counter.packets"] = 10;
  a.warnings = {"nat: pool ran out"};
  a.servers.resize(1);
  a.servers[0].packets_to = 10;
  b.packets_in = 5, b.packets_out = 5;
  b.nf.values["counter.packets"] = 5;
  b.warnings = {"nat: pool ran out"};
  b.servers.resize(1);
  b.servers[0].packets_to = 5;
  add_part(t, a);
  add_part(t, b);
  EXPECT_EQ(t.packets_in, 15u);
  EXPECT_EQ(t.packets_out, 14u);
  EXPECT_EQ(t.switch_drops, 1u);
  EXPECT_EQ(t.drops.get("bad_tag"), 1u);
  EXPECT_EQ(t.nf.get("counter.packets"), 15u);
  EXPECT_EQ(t.warnings.size(), 1u);
  ASSERT_EQ(t.servers.size(), 1u);
  EXPECT_EQ(t.servers[0].packets_to, 15u);
  t.nf_drops_ended = 0;
  EXPECT_TRUE(t.balanced());
}

}  // namespace
}  // namespace nfpark::run
