// The pause/resume timing rule of the switch model (QUEUE-MEM §3.2): AFC acts at the deparsers,
// once per pipeline pass, so a queue resumed by one packet keeps sending until a later pass
// pauses it again. Two programs store payloads in paused egress queues while their headers visit
// an NF:
//  - naive: one queue; every header resumes it at ingress and pauses it again from its own egress
//    pass. Between the two, payloads whose headers are still at the NF leave: they leak.
//  - QUEUE-MEM's own code (park::QueueMem, the dataplane's) through QueueMemProgram: payloads
//    fill several queues in batches; a batch's first payload pauses its queue; the queue is
//    resumed only when every header of its batch is back (from the last header's egress pass),
//    and reused only once drained. Nothing leaks, at any NF delay, and lost headers cost only
//    their own payloads.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "sim/queue_mem_program.h"
#include "sim/run_config.h"
#include "sim_fixtures.h"

namespace nfpark::sim {
namespace {

using testing::make_packet;
using testing::RecordingPeer;

constexpr uint16_t kIn = 0, kOut = 1, kNf = 2;
constexpr uint16_t kHeaderQueue = 31;

// The NF: every header comes back on the NF port `delay` after it arrived.
struct LoopbackNf final : PortPeer {
  Switch* sw = nullptr;
  Picos delay = 0;
  void arrive(Packet* p, Picos at, uint16_t) override { sw->arrive(p, at + delay, kNf); }
};

// What both programs share: headers are mirrored to the NF, come back to the output port's
// header queue, and mark their payload "header back" in their egress pass (then are dropped, as
// QUEUE-MEM stores them in registers). A payload dequeued before its header is back leaks.
struct StoreProgram : SwitchProgram {
  std::vector<bool> back;
  uint64_t leaked = 0, merged = 0;
  bool egress(Pass& pass, Packet* p) override {
    if (pass.port() != kOut) return true;  // headers on their way to the NF
    if (p->queue == kHeaderQueue) {
      back[p->seq] = true;
      on_header_egress(pass, p);
      p->pool()->free(p);
      return false;
    }
    if (!back[p->seq]) {
      ++leaked;
      p->pool()->free(p);
      return false;
    }
    ++merged;
    return true;
  }
  virtual void on_header_egress(Pass& pass, Packet* p) = 0;
};

struct NaiveProgram final : StoreProgram {
  void ingress(Pass& pass, Packet* p) override {
    if (pass.port() == kNf) {  // a header back: resume the payload queue, forward the header
      pass.afc(kOut, 0, false);
      return pass.enqueue(p, kOut, kHeaderQueue);
    }
    pass.afc(kOut, 0, true);  // hold the payload
    pass.mirror(p, kNf, 0, 64);
    pass.enqueue(p, kOut, 0);
  }
  void on_header_egress(Pass& pass, Packet*) override { pass.afc(kOut, 0, true); }
};

struct Outcome {
  uint64_t delivered = 0, leaked = 0, merged = 0, stuck = 0;
  Picos min_latency = kNever;
};

Outcome run(StoreProgram& prog, uint64_t packets) {
  Engine e;
  PacketPool pool(256);
  SwitchConfig c;
  c.port_gbps = {100, 100, 100};
  c.queues = 32;
  c.priority.assign(32, 0);
  c.priority[kHeaderQueue] = 7;  // headers first (QUEUE-MEM: queue 31 at the highest priority)
  c.ingress_latency = c.egress_latency = 400 * kNs;
  c.buffer_bytes = 64 << 20;
  Switch sw(e, c);
  sw.set_program(&prog);
  RecordingPeer out;
  LoopbackNf nf;
  nf.sw = &sw;
  nf.delay = 2 * kUs;
  sw.connect(kOut, &out, kOut);
  sw.connect(kNf, &nf, kNf);
  sw.connect(kIn, &out, kIn);
  prog.back.assign(packets, false);
  const Picos gap = serialization(1500 + kWireOverhead, 100);  // line rate, 100 Gbps
  for (uint64_t i = 0; i < packets; ++i) {
    Packet* p = make_packet(pool, 1500, i);
    p->t_in = Picos(i) * gap;
    sw.arrive(p, p->t_in, kIn);
  }
  e.run();
  Outcome r;
  // payloads still paused at the end (the naive program's last command may be a pause)
  for (uint16_t q = 0; q < c.queues; ++q) {
    r.stuck += sw.port(kOut).queued_packets(q);
    sw.port(kOut).set_paused(q, false);
  }
  e.run();
  r.delivered = out.got.size();
  r.leaked = prog.leaked;
  r.merged = prog.merged;
  for (auto& a : out.got) r.min_latency = std::min(r.min_latency, a.at - Picos(a.seq) * gap);
  EXPECT_EQ(pool.live(), 0u) << "every record back in the pool";
  return r;
}

TEST(AfcTiming, NaivePerPacketPauseResumeLeaksPayloads) {
  NaiveProgram naive;
  const Outcome r = run(naive, 400);
  EXPECT_GT(r.leaked, 100u) << "payloads leave between a resume and the next pause";
  RecordProperty("leaked", int(r.leaked));
  EXPECT_EQ(r.leaked + r.merged, 400u);
  EXPECT_EQ(r.delivered, r.merged);
}

// The NF for QUEUE-MEM: returns each header `delay` after it arrived, except every
// `drop_every`-th one (0: none), which it loses silently (the header-drop fault of Fig. 7).
struct DelayNf final : PortPeer {
  Switch* sw = nullptr;
  Picos delay = 0;
  uint64_t drop_every = 0, seen = 0, dropped = 0;
  void arrive(Packet* p, Picos at, uint16_t) override {
    if (drop_every && ++seen % drop_every == 0) {
      ++dropped;
      p->pool()->free(p);
      return;
    }
    sw->arrive(p, at + delay, kNf);
  }
};

struct QmOutcome {
  uint64_t delivered = 0, intact = 0, leaked = 0, stuck = 0, released = 0, header_lost = 0;
  uint64_t afc_refused = 0, nf_dropped = 0, peak_buffer = 0;
  Picos min_latency = kNever;
  bool pools_full = false, in_order = true;
};

QmOutcome run_queuemem(uint64_t packets, Picos delay, uint64_t drop_every, uint16_t batch,
                       Nanos lost_after = 100 * kMicro) {
  Engine e;
  PacketPool pool(256);
  SwitchConfig c;
  c.port_gbps = {100, 100, 100};
  c.queues = 32;
  c.priority.assign(32, 0);
  c.priority[kHeaderQueue] = 7;
  c.ingress_latency = c.egress_latency = 400 * kNs;
  c.buffer_bytes = 64 << 20;
  c.register_bytes = 24 << 20;
  Switch sw(e, c);
  park::QueueMemConfig qc = SimRunConfig::sim_queuemem();
  qc.batch = batch;
  qc.lost_after = lost_after;
  QueueMemProgram prog(sw, Topology{2, 1}, qc);
  std::string err;
  EXPECT_TRUE(prog.reserve(err)) << err;
  EXPECT_EQ(prog.header_queue(), kHeaderQueue);
  sw.set_program(&prog);
  RecordingPeer out;
  DelayNf nf;
  nf.sw = &sw;
  nf.delay = delay;
  nf.drop_every = drop_every;
  sw.connect(kOut, &out, kOut);
  sw.connect(kNf, &nf, kNf);
  sw.connect(kIn, &out, kIn);
  const Picos gap = serialization(1500 + kWireOverhead, 100);
  std::vector<std::vector<uint8_t>> sent;
  for (uint64_t i = 0; i < packets; ++i) {
    Packet* p = make_packet(pool, 1500, i);
    p->in_port = kIn;
    p->out_port = kOut;
    p->t_in = Picos(i) * gap;
    sw.arrive(p, p->t_in, kIn);
  }
  e.run();
  QmOutcome r;
  for (uint16_t q = 0; q < c.queues; ++q) r.stuck += sw.port(kOut).queued_packets(q);
  prog.drain();
  r.delivered = out.got.size();
  r.leaked = prog.leaked();
  r.released = prog.counters().released;
  r.header_lost = prog.counters().drop_header_lost;
  r.afc_refused = sw.counters().afc_refused;
  r.nf_dropped = nf.dropped;
  r.peak_buffer = sw.buffer_peak();
  std::map<uint64_t, uint64_t> last_of_flow;  // make_packet: flow = sport = seq % 1000
  for (auto& a : out.got) {
    r.min_latency = std::min(r.min_latency, a.at - Picos(a.seq) * gap);
    if (a.len == 1500) ++r.intact;
    const uint64_t f = a.seq % 1000;
    if (last_of_flow.count(f) && last_of_flow[f] > a.seq) r.in_order = false;
    last_of_flow[f] = a.seq;
  }
  r.pools_full = pool.live() == 0;
  return r;
}

TEST(AfcTiming, QueueMemOverTheSwitchQueuesNeverLeaks) {
  // Batches of 4 reuse each queue every ~15 us at 100 Gbps; at 7 us of NF delay batches of 4
  // would fill the port's 31 queues (then packets go whole), so that case uses the P4's 20.
  for (const auto& [delay, batch] : {std::pair{500 * kNs, 4}, {2 * kUs, 4}, {7 * kUs, 20}}) {
    SCOPED_TRACE(delay);
    const QmOutcome r = run_queuemem(400, delay, 0, uint16_t(batch));
    EXPECT_EQ(r.leaked, 0u);
    EXPECT_EQ(r.stuck, 0u) << "every batch was released by its own headers";
    EXPECT_EQ(r.afc_refused, 0u);
    EXPECT_EQ(r.released, 400u);
    EXPECT_EQ(r.delivered, 400u);
    EXPECT_EQ(r.intact, 400u) << "each payload rebuilt with its header: the original length";
    EXPECT_TRUE(r.in_order);
    EXPECT_GE(r.min_latency, delay) << "every payload waited for its header's NF round trip";
    EXPECT_GT(r.peak_buffer, 0u);
    EXPECT_TRUE(r.pools_full);
  }
}

TEST(AfcTiming, QueueMemLosesOnlyThePayloadsOfLostHeaders) {
  const QmOutcome r = run_queuemem(2000, 2 * kUs, 10, 20, 10 * kMicro);
  EXPECT_EQ(r.nf_dropped, 200u);
  EXPECT_EQ(r.header_lost, 200u) << "output = (1 - drop rate) x input";
  EXPECT_EQ(r.delivered, 1800u);
  EXPECT_EQ(r.leaked, 0u);
  EXPECT_TRUE(r.in_order);
  EXPECT_TRUE(r.pools_full);
}

}  // namespace
}  // namespace nfpark::sim
