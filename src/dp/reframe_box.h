// ReframeBox: Reframer on an lcore of its own, in front of the NF server's lcore — the paper's
// "Reframer box" (`nfpark run --reframe T --reframe-placement box`). One box lcore serves every
// NF server of the process, one lane each:
//
//   NF link (nf_side[k] RX) --box lcore: park::ReframeStage--> ring k --NF server k: chain--> NF
//   link (nf_side[k] TX)
//
// The decisions (classify, hold, release, self-bypass, ACK coalescing) are park::ReframeStage's,
// the same code the in-chain placement runs (park/nf_burst.h); the clock is the same
// park::TraceClock (trace time when replaying, else the steady clock). This file only moves
// mbufs: bursts of 32 from the port, released packets into an SP/SC rte_ring (sized to hold
// everything Reframer may release at once; what does not fit waits in the lane's backlog, and the
// port is not read again until it has drained: back-pressure, never a drop). Nothing allocates
// per packet.
//
// End of a run (the same handshake as NfThread): `epoch`/`busy` let the main lcore see that no
// packet is in the box's hands (idle()); request_flush() has the box release everything it holds
// (before the NF server's own flush); after `stop` the box releases what it holds and sets
// `done`, after which the server side takes what the ring could not hold from the backlog
// (BoxLane::take), so nothing is held at exit.
// Lcores: the box takes the lcore after the NF server's (runner.cc: main = switch [+ NF server
// inline], then --nf-lcore's, then the box; role nf: main = NF server, lcore 1 = the box;
// --workers N: one box per worker, lcores N + 1 .. 2N, dp/worker.h, nf_workers.cc). EAL floats
// lcores over the CPUs when there are more lcores than CPUs (eal.h), so every combination starts;
// on fewer CPUs than busy lcores they share them (slower, never wrong).
#pragma once
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "dp/mbuf_ops.h"
#include "dp/port.h"
#include "park/reframe_stage.h"
#include "park/trace_clock.h"

namespace nfpark::dp {

// One NF server's Reframer: its input port, its stage and clock, its ring to the server.
struct BoxLane {
  std::unique_ptr<park::ReframeStage<MbufOps>> stage;
  park::TraceClock clock;
  Port* in = nullptr;          // the NF link's receive side: read by the box lcore only
  rte_ring* ring = nullptr;    // released packets, to the NF server (single producer/consumer)
  std::vector<rte_mbuf*> out;  // released, not yet in the ring
  size_t out_at = 0;           // out[out_at..] waits
  const std::atomic<bool>* box_done = nullptr;

  // The NF server's side: up to n released packets, in order — from the ring, and once the box
  // lcore has stopped, from what the ring could not hold.
  uint16_t take(rte_mbuf** pkts, uint16_t n);
  // Box side: moves what waits into the ring; true when nothing waits.
  bool push_out();
  size_t waiting() const { return out.size() - out_at; }
};

struct ReframeBox {
  std::vector<std::unique_ptr<BoxLane>> lanes;
  std::atomic<bool> stop{false};
  std::atomic<bool> busy{false};
  std::atomic<bool> done{false};       // the box lcore has stopped (BoxLane::take)
  std::atomic<bool> flush_req{false};  // main asks the box to release what it holds
  std::atomic<uint64_t> epoch{0};
  std::atomic<uint64_t> activity{0};  // polls that moved packets
  std::atomic<uint64_t> held{0};      // packets Reframer holds (all lanes), as of the last poll
  std::atomic<uint64_t> waiting{0};   // released packets not yet in a ring
  unsigned lcore = 0;
  uint64_t busy_ns = 0;  // time in polls that moved packets; the box lcore's, read after it ends
  std::string name = "rfbox";  // its rings' names: name + lane (unique in the process)

  ReframeBox() = default;
  ReframeBox(const ReframeBox&) = delete;
  ReframeBox& operator=(const ReframeBox&) = delete;
  ~ReframeBox();
  // Adds lane k: Reframer `stage` reading `in`, with trace time when `trace_time`.
  bool add_lane(std::unique_ptr<park::ReframeStage<MbufOps>> stage, bool trace_time, Port* in,
                std::string& err);
  // Nothing in the box's hands but what Reframer holds on purpose: no packet on its input
  // rings, in its backlog or on its rings to the servers, and no poll under way.
  bool idle() const;
  // Asks the box lcore to release everything Reframer holds and waits until it has (200 ms at
  // most).
  void request_flush();
};

// The lcore function (rte_eal_remote_launch): polls until `stop`, then releases everything.
int reframe_box_main(void* box);

}  // namespace nfpark::dp
