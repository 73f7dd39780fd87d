// An egress port's trains (egress_port.h): a decision sends every frame queued now and defers
// its dequeues' accounting to each frame's instant at Rank::kPortMac. The run must be the one
// of one decision per frame: the same frames at the same times, the same drops, and every read
// of the buffer at every instant — also at a frame's own instant, where the tie order decides
// (a command at Rank::kAfc sees the buffer before that frame's release, an admission after it).
#include <gtest/gtest.h>

#include <tuple>

#include "sim/switch.h"
#include "sim_fixtures.h"
#include "trace/rng.h"

namespace nfpark::sim {
namespace {

using testing::LambdaProgram;
using testing::make_packet;

struct EarlyPeer final : PortPeer {  // takes frames ahead of their arrival (as an NF server does)
  std::vector<testing::Arrival> got;
  void arrive(Packet* p, Picos at, uint16_t link) override {
    got.push_back({p->seq, at, link, p->len});
    p->pool()->free(p);
  }
  bool takes_early() const override { return true; }
};

struct TrainProgram final : SwitchProgram {
  void ingress(Pass& pass, Packet* p) override { pass.enqueue(p, 1, 0); }
  bool egress_train(uint16_t port) const override { return port == 1; }
};

// Reads the buffer at its event: an AFC command's rank (before the instant's releases), or a
// timer's (after the instant's admissions).
struct Probe final : EventHandler {
  Switch* sw = nullptr;
  std::vector<std::pair<Picos, uint64_t>>* log = nullptr;
  void on_event(uint64_t) override { log->emplace_back(sw->engine().now(), sw->buffer_used()); }
};

// Frames into port 0's ingress at their instants (an ingress pass, Rank::kIngress).
struct Source final : EventHandler {
  Switch* sw = nullptr;
  PacketPool* pool = nullptr;
  std::vector<std::pair<Picos, uint64_t>>* log = nullptr;
  uint64_t seq = 0;
  void on_event(uint64_t len) override {
    sw->ingress(make_packet(*pool, uint32_t(len), seq++), 0);
    log->emplace_back(sw->engine().now(), sw->buffer_used());
  }
};

struct Result {
  std::vector<std::tuple<uint64_t, Picos, uint16_t, uint32_t>> out;  // seq, at, link, len
  std::vector<std::pair<Picos, uint64_t>> reads;  // (time, buffer) at every probe and admission
  uint64_t drops, peak, events, tx;
};

Result run(bool train) {
  Engine e;
  PacketPool pool(192);
  SwitchConfig c;
  c.port_gbps = {100, 100};
  c.queues = 4;
  c.buffer_bytes = 12 * 1040;  // twelve 1000 B frames (13 cells of 80 B each)
  c.cell_bytes = 80;
  c.dt_alpha = 0;
  Switch sw(e, c);
  TrainProgram prog;
  sw.set_program(&prog);
  EarlyPeer peer;
  sw.connect(0, &peer, 0);
  sw.connect(1, &peer, 1);
  sw.port(1).set_train(train);
  Result r;
  Source src;
  src.sw = &sw;
  src.pool = &pool;
  src.log = &r.reads;
  src.set_tie(Rank::kIngress, 0);
  Probe afc, timer;
  for (Probe* p : {&afc, &timer}) {
    p->sw = &sw;
    p->log = &r.reads;
  }
  afc.set_tie(Rank::kAfc, 1);
  timer.set_tie(Rank::kTimer, 0);
  // 1000 B frames take 81.92 ns at 100 Gbps: bursts that overrun the buffer, then arrivals and
  // reads exactly at frame boundaries of the trains and a picosecond either side
  const Picos wire = serialization(1000 + kWireOverhead, 100);
  trace::Rng rng(5);
  for (int k = 0; k < 400; ++k) {
    const Picos base = Picos(k) * wire;
    const int burst = k % 25 == 0 ? 10 : int(rng.below(3));  // mean ~1 a frame time
    for (int i = 0; i < burst; ++i) e.schedule(base + Picos(rng.below(3)) - 1, &src, 1000);
    e.schedule(base, &afc);
    e.schedule(base, &timer);
  }
  r.events = e.run();
  // (the peer holds no event for the frames it took ahead: the engine goes idle before the
  // train's last instants, when all have left)
  sw.settle_all();
  for (const auto& a : peer.got) r.out.emplace_back(a.seq, a.at, a.link, a.len);
  r.drops = sw.counters().drops();
  r.peak = sw.buffer_peak();
  r.tx = sw.port(1).counters().tx_packets;
  EXPECT_EQ(pool.live(), 0u);
  return r;
}

TEST(PortTrain, RunsAsOneDecisionPerFrameWithReleasesAtTheirTiePlace) {
  const Result one = run(false), train = run(true);
  ASSERT_GT(one.drops, 20u) << "the case must overrun the buffer";
  ASSERT_GT(one.out.size(), 300u);
  EXPECT_EQ(train.out, one.out);
  EXPECT_EQ(train.reads, one.reads) << "every read of the buffer, at every instant";
  EXPECT_EQ(train.drops, one.drops);
  EXPECT_EQ(train.peak, one.peak);
  EXPECT_EQ(train.tx, one.tx);
  EXPECT_LT(train.events, one.events * 9 / 10) << "trains: fewer MAC events";
  // the rank rule matters here: at some frame instants the AFC-ranked read (before the
  // instant's release) and the timer's (after it) differ; a train that released at its
  // decision, or at t_i whatever the rank, would change the first of them
  size_t split = 0;
  for (size_t i = 0; i + 1 < one.reads.size(); ++i)
    split += one.reads[i].first == one.reads[i + 1].first &&
             one.reads[i].second > one.reads[i + 1].second;
  EXPECT_GT(split, 50u);
}

}  // namespace
}  // namespace nfpark::sim
