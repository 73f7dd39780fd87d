// The switch model: line-rate timing, pipeline latencies, strict priority and round robin, shared
// buffer tail drop in cells, queue limits, the truncating mirror, resubmit and recirculation
// costs, the register budget, AFC pause/resume timing and the one-command-per-pass rule.
#include "sim/switch.h"

#include <gtest/gtest.h>

#include <array>
#include <deque>
#include <map>
#include <random>

#include "sim_fixtures.h"

namespace nfpark::sim {
namespace {

using testing::LambdaProgram;
using testing::make_packet;
using testing::RecordingPeer;

struct Bench {
  Engine e;
  PacketPool pool{256};
  SwitchConfig cfg;
  std::unique_ptr<Switch> sw;
  LambdaProgram prog;
  RecordingPeer peer;
  explicit Bench(std::vector<double> gbps = {100, 100}, uint16_t queues = 4) {
    cfg.port_gbps = gbps;
    cfg.queues = queues;
    cfg.ingress_latency = 300 * kNs;
    cfg.egress_latency = 200 * kNs;
    cfg.buffer_bytes = 1 << 20;
    cfg.cell_bytes = 80;
    cfg.dt_alpha = 0;  // plain shared buffer unless a test says otherwise
  }
  void build() {
    sw = std::make_unique<Switch>(e, cfg);
    sw->set_program(&prog);
    for (uint16_t i = 0; i < cfg.port_gbps.size(); ++i) sw->connect(i, &peer, i);
    // default program: everything from port 0 to port 1, queue 0
    if (!prog.in) prog.in = [](Pass& pass, Packet* p) { pass.enqueue(p, 1, 0); };
  }
};

TEST(SwitchModel, OneFrameTakesPipelinesPlusSerialisation) {
  Bench b;
  b.build();
  b.sw->arrive(make_packet(b.pool, 60, 1), 1000, 0);
  b.e.run();
  ASSERT_EQ(b.peer.got.size(), 1u);
  // 60 B + 24 B of preamble, FCS and gap at 100 Gbps = 6.72 ns
  EXPECT_EQ(b.peer.got[0].at, 1000 + 300 * kNs + 200 * kNs + 6720);
  EXPECT_EQ(b.pool.live(), 0u);
}

TEST(SwitchModel, BackToBackFramesLeaveAtLineRate) {
  Bench b({100, 25});
  b.build();
  for (uint64_t i = 0; i < 10; ++i) b.sw->arrive(make_packet(b.pool, 1000, i), 0, 0);
  b.e.run();
  ASSERT_EQ(b.peer.got.size(), 10u);
  const Picos wire = serialization(1024, 25);  // 327.68 ns at 25 Gbps
  for (size_t i = 1; i < 10; ++i) {
    EXPECT_EQ(b.peer.got[i].seq, i) << "one queue is FIFO";
    EXPECT_EQ(b.peer.got[i].at - b.peer.got[i - 1].at, wire) << "frame " << i;
  }
  EXPECT_EQ(b.sw->port(1).counters().tx_packets, 10u);
  EXPECT_EQ(b.sw->port(1).counters().tx_bytes, 10000u);
}

TEST(SwitchModel, StrictPriorityThenRoundRobinWithinALevel) {
  Bench b({100, 10}, 4);
  b.cfg.priority = {0, 0, 5, 5};  // queues 2 and 3 first, then 0 and 1
  b.prog.in = [](Pass& pass, Packet* p) { pass.enqueue(p, 1, uint16_t(p->seq / 100)); };
  b.build();
  // the first packet occupies the MAC; the rest arrive together and wait
  b.sw->arrive(make_packet(b.pool, 100, 0), 0, 0);
  for (uint64_t s : {1, 2, 101, 102, 201, 202, 301, 302})
    b.sw->arrive(make_packet(b.pool, 100, s), 1, 0);
  b.e.run();
  std::vector<uint64_t> order;
  for (auto& a : b.peer.got) order.push_back(a.seq);
  // queue 0 sent first (seq 0), so round robin in the low level goes on at queue 1
  EXPECT_EQ(order, (std::vector<uint64_t>{0, 201, 301, 202, 302, 101, 1, 102, 2}));
}

// The port's pick (eligible and paused masks, levels with their cursors) against a plain model
// of strict priority and round robin: 1 to 64 queues at random priorities, queues paused and
// resumed between decisions, every decision compared.
TEST(SwitchModel, PickIsStrictPriorityThenRoundRobinOverEligibleQueues) {
  std::mt19937_64 rng(15);
  for (int round = 0; round < 40; ++round) {
    const uint16_t nq =
        uint16_t(round < 4 ? std::array<int, 4>{1, 2, 63, 64}[round] : 1 + int(rng() % 64));
    Bench b({100, 1}, nq);
    b.cfg.buffer_bytes = 1ull << 30;
    b.cfg.priority.resize(nq);
    const int levels = 1 + int(rng() % 4);
    for (auto& pr : b.cfg.priority) pr = uint8_t(rng() % levels * 3);
    // the model: queues of sequence numbers, paused flags, a cursor per priority value
    std::vector<std::deque<uint64_t>> ref(nq);
    std::vector<bool> paused(nq, false);
    std::map<uint8_t, uint64_t, std::greater<>> cursor;
    for (auto pr : b.cfg.priority) cursor[pr] = 0;
    auto model_pick = [&]() -> int {
      for (auto& [pr, cur] : cursor) {
        int first = -1, after = -1;
        for (int q = 0; q < nq; ++q) {
          if (b.cfg.priority[q] != pr || ref[q].empty() || paused[q]) continue;
          if (first < 0) first = q;
          if (after < 0 && uint64_t(q) >= cur) after = q;
        }
        const int q = after >= 0 ? after : first;
        if (q < 0) continue;
        cur = q + 1 == 64 ? 0 : uint64_t(q + 1);
        return q;
      }
      return -1;
    };
    b.prog.in = [&](Pass& pass, Packet* p) {
      const uint16_t q = uint16_t(rng() % nq);
      ref[q].push_back(p->seq);
      pass.enqueue(p, 1, q);
    };
    uint64_t decisions = 0;
    b.prog.out = [&](Pass&, Packet* p) {
      const int q = model_pick();
      EXPECT_EQ(int(p->queue), q) << "round " << round << " decision " << decisions;
      if (q >= 0 && !ref[q].empty()) {
        EXPECT_EQ(p->seq, ref[q].front());
        ref[q].pop_front();
      }
      ++decisions;
      if (rng() % 3 == 0) {  // pause or resume a queue between decisions
        const uint16_t t = uint16_t(rng() % nq);
        paused[t] = !paused[t];
        b.sw->port(1).set_paused(t, paused[t]);
      }
      return true;
    };
    b.build();
    const uint64_t n = 300;
    for (uint64_t i = 0; i < n; ++i) b.sw->arrive(make_packet(b.pool, 100, i), Picos(i), 0);
    b.e.run();
    for (bool again = true; again;) {  // what is still paused leaves once resumed
      again = false;
      for (uint16_t q = 0; q < nq; ++q)
        if (paused[q]) {
          paused[q] = false;
          b.sw->port(1).set_paused(q, false);
          b.e.run();
          again = true;
        }
    }
    EXPECT_EQ(decisions, n) << "round " << round;
    EXPECT_EQ(b.peer.got.size(), n);
    EXPECT_EQ(b.pool.live(), 0u);
  }
}

TEST(SwitchModel, SharedBufferTailDropsInCells) {
  Bench b({100, 1});  // a slow output port: everything queues
  b.cfg.buffer_bytes = 10 * 80;
  b.build();
  // 81 B takes two 80 B cells; the first packet leaves the buffer at once (dequeued)
  for (uint64_t i = 0; i < 8; ++i) b.sw->arrive(make_packet(b.pool, 81, i), Picos(i), 0);
  b.e.run();
  EXPECT_EQ(b.peer.got.size(), 6u) << "1 on the wire + 5 of 2 cells in 10 cells";
  EXPECT_EQ(b.sw->counters().drop_buffer_full, 2u);
  EXPECT_EQ(b.sw->buffer_peak(), 800u);
  EXPECT_EQ(b.sw->buffer_used(), 0u);
  EXPECT_EQ(b.pool.live(), 0u);
}

TEST(SwitchModel, QueueLimitOnTopOfTheSharedBuffer) {
  Bench b({100, 1});
  b.cfg.queue_limit_bytes = 3 * 80;
  b.build();
  for (uint64_t i = 0; i < 6; ++i) b.sw->arrive(make_packet(b.pool, 80, i), Picos(i), 0);
  b.e.run();
  EXPECT_EQ(b.peer.got.size(), 4u);
  EXPECT_EQ(b.sw->counters().drop_queue_limit, 2u);
}

TEST(SwitchModel, DynamicThresholdKeepsOneQueueFromStarvingTheOthers) {
  for (double alpha : {0.0, 1.0}) {
    Bench b({100, 1, 100});  // port 1 is slow and congests; port 2 is fast
    b.cfg.buffer_bytes = 100 * 80;
    b.cfg.dt_alpha = alpha;
    b.prog.in = [](Pass& pass, Packet* p) { pass.enqueue(p, p->seq < 1000 ? 1 : 2, 0); };
    b.build();
    for (uint64_t i = 0; i < 1000; ++i) b.sw->arrive(make_packet(b.pool, 80, i), Picos(i), 0);
    for (uint64_t i = 0; i < 10; ++i)
      b.sw->arrive(make_packet(b.pool, 80, 1000 + i), 100 * kNs + Picos(i) * kNs, 0);
    b.e.run();
    uint64_t fast = 0;
    for (auto& a : b.peer.got) fast += a.link == 2;
    if (alpha == 0) {
      EXPECT_EQ(fast, 0u) << "the congested queue took the whole buffer";
    } else {
      EXPECT_EQ(fast, 10u) << "alpha 1: the congested queue stops at half the buffer";
      EXPECT_LE(b.sw->buffer_peak(), 61u * 80) << "half the buffer + the fast queue's few";
      EXPECT_GT(b.sw->counters().drop_queue_threshold, 900u);
    }
  }
}

TEST(SwitchModel, TruncatingMirrorSendsACutCopy) {
  Bench b({100, 100, 100});
  b.prog.in = [](Pass& pass, Packet* p) {
    ASSERT_TRUE(pass.mirror(p, 2, 0, 86));
    pass.enqueue(p, 1, 0);
  };
  b.build();
  b.sw->arrive(make_packet(b.pool, 1500, 9), 0, 0);
  b.e.run();
  ASSERT_EQ(b.peer.got.size(), 2u);
  for (auto& a : b.peer.got) {
    EXPECT_EQ(a.seq, 9u);
    EXPECT_EQ(a.len, a.link == 2 ? 86u : 1500u);
  }
  EXPECT_EQ(b.sw->counters().mirrored, 1u);
}

TEST(SwitchModel, ResubmitCostsOneMoreIngressPass) {
  Bench b;
  int passes = 0;
  b.prog.in = [&](Pass& pass, Packet* p) {
    if (++passes == 1) return pass.resubmit(p);
    EXPECT_EQ(pass.port(), 0) << "a resubmitted packet keeps its ingress port";
    pass.enqueue(p, 1, 0);
  };
  b.build();
  b.sw->arrive(make_packet(b.pool, 60, 1), 0, 0);
  b.e.run();
  ASSERT_EQ(b.peer.got.size(), 1u);
  EXPECT_EQ(b.peer.got[0].at, 2 * 300 * kNs + 200 * kNs + 6720);
  EXPECT_EQ(b.sw->counters().resubmitted, 1u);
}

TEST(SwitchModel, RecirculationCostsLatencyAndItsPortsBandwidth) {
  Bench b({100, 100});
  b.cfg.recirc_gbps = 10;
  b.prog.in = [](Pass& pass, Packet* p) {
    if (pass.port() == 0) return pass.recirculate(p);
    EXPECT_EQ(pass.port(), 2) << "back in on the recirculation port";
    pass.enqueue(p, 1, 0);
  };
  b.build();
  b.sw->arrive(make_packet(b.pool, 1000, 1), 0, 0);
  b.sw->arrive(make_packet(b.pool, 1000, 2), 0, 0);
  b.e.run();
  ASSERT_EQ(b.peer.got.size(), 2u);
  const Picos recirc_wire = serialization(1024, 10), out_wire = serialization(1024, 100);
  // ingress, egress + wire at 10 Gbps on the recirculation port, ingress again, egress + wire
  EXPECT_EQ(b.peer.got[0].at,
            300 * kNs + 200 * kNs + recirc_wire + 300 * kNs + 200 * kNs + out_wire);
  EXPECT_EQ(b.peer.got[1].at - b.peer.got[0].at, recirc_wire)
      << "the second waits for the recirculation port";
  EXPECT_EQ(b.sw->counters().recirculated, 2u);
}

TEST(SwitchModel, RegisterBudget) {
  Bench b;
  b.cfg.register_bytes = 1000;
  b.build();
  std::string err;
  EXPECT_TRUE(b.sw->reserve_registers(600, "A", err));
  EXPECT_FALSE(b.sw->reserve_registers(600, "B", err));
  EXPECT_NE(err.find("register_mb"), std::string::npos) << err;
  EXPECT_EQ(b.sw->registers_used(), 600u);
}

// AFC from the ingress deparser acts at once; from the egress deparser after the egress latency.
TEST(SwitchModel, AfcPauseAtIngressResumeAtEgressAfterItsLatency) {
  Bench b({100, 100, 100}, 4);
  b.cfg.priority = {0, 0, 0, 7};
  // port 0 traffic: pause queue 1 of port 1 with the first packet, queue everything there;
  // port 2 (a "header" back from somewhere): goes to port 1 queue 3 (high) and resumes queue 1
  // from its egress pass
  b.prog.in = [](Pass& pass, Packet* p) {
    if (pass.port() == 0) {
      if (p->seq == 0) {
        EXPECT_TRUE(pass.afc(1, 1, true));
      }
      pass.enqueue(p, 1, 1);
    } else {
      pass.enqueue(p, 1, 3);
    }
  };
  Picos resumed_at = -1;
  b.prog.out = [&](Pass& pass, Packet* p) {
    if (p->queue == 3) {
      EXPECT_TRUE(pass.afc(1, 1, false));
      resumed_at = pass.now() + 200 * kNs;
    }
    return true;
  };
  b.build();
  for (uint64_t i = 0; i < 3; ++i) b.sw->arrive(make_packet(b.pool, 60, i), Picos(i) * 10000, 0);
  b.sw->arrive(make_packet(b.pool, 60, 100), 5 * kUs, 2);
  b.e.run();
  ASSERT_EQ(b.peer.got.size(), 4u);
  EXPECT_EQ(b.peer.got[0].seq, 100u) << "queue 1 was paused from the first packet on";
  // the header left queue 3 at 5 us + ingress; queue 1 resumes egress latency later
  EXPECT_EQ(resumed_at, 5 * kUs + 300 * kNs + 200 * kNs);
  EXPECT_EQ(b.peer.got[1].at, resumed_at + 200 * kNs + 6720);
  EXPECT_EQ(b.peer.got[2].at - b.peer.got[1].at, 6720);
}

TEST(SwitchModel, OneAfcCommandPerPass) {
  Bench b;
  b.prog.in = [](Pass& pass, Packet* p) {
    EXPECT_TRUE(pass.afc(1, 0, true));
    EXPECT_FALSE(pass.afc(1, 0, false)) << "a second command in one pass is refused";
    pass.enqueue(p, 1, 0);
  };
  b.build();
  b.sw->arrive(make_packet(b.pool, 60, 1), 0, 0);
  b.e.run();
  EXPECT_EQ(b.peer.got.size(), 0u) << "the refused resume never happened: still paused";
  EXPECT_EQ(b.sw->counters().afc_refused, 1u);
  EXPECT_EQ(b.sw->port(1).queued_packets(0), 1u);
  b.sw->port(1).set_paused(0, false);
  b.e.run();
  EXPECT_EQ(b.peer.got.size(), 1u);
}

// The buffer's cells without a division: exactly ceil(len / cell) * cell for every length a
// frame can have, at the presets' cell sizes and the edges of the fast path.
TEST(CellSize, RoundsUpExactlyAsADivisionDoes) {
  for (uint32_t cell : {1u, 2u, 3u, 64u, 80u, 176u, 4095u, 32767u, 32768u, 65535u}) {
    const CellSize c(cell);
    for (uint32_t len = 0; len <= 140000; ++len)
      ASSERT_EQ(c.round_up(len), (uint64_t(len) + cell - 1) / cell * cell)
          << "cell " << cell << " len " << len;
    for (uint32_t len : {1u << 20, 0xFFFFFFFFu})
      ASSERT_EQ(c.round_up(len), (uint64_t(len) + cell - 1) / cell * cell) << "cell " << cell;
  }
}

}  // namespace
}  // namespace nfpark::sim
