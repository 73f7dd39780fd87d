// The pause/resume timing rule of the switch model (QUEUE-MEM §3.2): AFC acts at the deparsers,
// once per pipeline pass, so a queue resumed by one packet keeps sending until a later pass
// pauses it again. Two programs store payloads in paused egress queues while their headers visit
// an NF:
//  - naive: one queue; every header resumes it at ingress and pauses it again from its own egress
//    pass. Between the two, payloads whose headers are still at the NF leave: they leak.
//  - batch (QUEUE-MEM's idea): payloads fill several queues in batches; a batch's first payload
//    pauses its queue; the queue is resumed only when every header of its batch is back. Nothing
//    leaks.
// (QUEUE-MEM's own code, park::QueueMem, plugs into the switch model through the same Pass API in
// issue 15's second part; these two programs isolate the timing rule.)
#include <gtest/gtest.h>

#include <vector>

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
      p->pool->free(p);
      return false;
    }
    if (!back[p->seq]) {
      ++leaked;
      p->pool->free(p);
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

struct BatchProgram final : StoreProgram {
  uint16_t queues = 16, batch = 4;  // 64 payloads (7.8 us) before a queue is reused
  uint16_t cur = 0, filled = 0;
  std::vector<uint16_t> queue_of;      // per seq
  std::vector<uint16_t> headers_back;  // per queue
  void ingress(Pass& pass, Packet* p) override {
    if (pass.port() == kNf) {
      p->user = ++headers_back[queue_of[p->seq]] == batch ? 1 : 0;  // the batch's last header
      return pass.enqueue(p, kOut, kHeaderQueue);
    }
    if (filled == batch) {
      filled = 0;
      cur = uint16_t((cur + 1) % queues);
    }
    if (filled++ == 0) {  // a batch's first payload pauses its queue
      pass.afc(kOut, cur, true);
      headers_back[cur] = 0;
    }
    queue_of[p->seq] = cur;
    pass.mirror(p, kNf, 0, 64);
    pass.enqueue(p, kOut, cur);
  }
  void on_header_egress(Pass& pass, Packet* p) override {
    if (p->user) pass.afc(kOut, queue_of[p->seq], false);  // whole batch back: release it
  }
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

TEST(AfcTiming, BatchesReleasedWhenAllTheirHeadersAreBackNeverLeak) {
  BatchProgram batch;
  batch.queue_of.assign(400, 0);
  batch.headers_back.assign(batch.queues, 0);
  const Outcome r = run(batch, 400);
  EXPECT_EQ(r.leaked, 0u);
  EXPECT_EQ(r.stuck, 0u) << "every batch was released by its own headers";
  EXPECT_EQ(r.merged, 400u);
  EXPECT_EQ(r.delivered, 400u);
  EXPECT_GE(r.min_latency, 2 * kUs) << "every payload waited for its header's NF round trip";
}

}  // namespace
}  // namespace nfpark::sim
