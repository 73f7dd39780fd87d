// EgressPort: one switch port's transmit side — its egress queues, strict priority between
// priority levels and round robin within one, advanced-flow-control pause state per queue, and
// the MAC sending one frame at a time at line rate (switch.h owns the buffer accounting).
//
// State machine: the MAC is busy until `free_at` (the last frame's wire time has passed). When it
// is free and a queue is eligible (non-empty, not paused), the highest-priority eligible queue is
// dequeued: the frame runs the egress pipeline (the program may drop it), holds the MAC for
// (len + 24) * 8 / rate, and reaches the peer egress latency + serialisation + link delay after
// the dequeue. A paused queue keeps its packets; resuming it lets the port pick it at its next
// decision. The port keeps an engine event only while a decision is due at `free_at` (a queue is
// eligible then); a port that is not backlogged costs no event per frame.
// Trains (set_train; docs/sim.md §9): when the program's egress pass on this port has no effect
// and sends every frame, one queue is used and never paused (SwitchProgram::egress_train), and
// the peer takes a frame ahead of its arrival (PortPeer::takes_early), a decision sends every
// frame queued now, back to back (frame i at t_i = t_{i-1} + its predecessor's wire time, what
// one decision each at t_i would do: nothing enqueued later goes before them), hands each to the
// peer at once, and defers what others read — the queue's bytes and packets, the buffer's cells,
// the tx counters — to t_i at Rank::kPortMac: settle() applies those that have happened by the
// running event's (time, tie) (Engine::has_happened); the switch settles before every admission
// and every read of the buffer, and the sampler before it reads. One event per train instead of
// one per frame.
#pragma once
#include <cstdint>
#include <vector>

#include "sim/engine.h"
#include "sim/packet.h"

namespace nfpark::sim {

class Switch;

// What is on the other end of a link: it receives a packet whose last bit arrives at `at`
// (calls come in non-decreasing `at` for one link).
class PortPeer {
 public:
  virtual void arrive(Packet* p, Picos at, uint16_t link) = 0;
  // True when arrive() may be called before the frame's dequeue instant (it only reads `at`, and
  // nothing it changes is read before then): a train may hand frames over ahead.
  virtual bool takes_early() const { return false; }

 protected:
  ~PortPeer() = default;
};

struct PortCounters {
  uint64_t tx_packets = 0, tx_bytes = 0;    // frames sent (bytes without wire overhead)
  uint64_t win_packets = 0, win_bytes = 0;  // the same within the measurement window
  uint64_t rx_packets = 0, rx_bytes = 0;
};

class EgressPort final : public EventHandler {
 public:
  EgressPort(Switch& s, uint16_t index, double gbps, uint16_t queues,
             const std::vector<uint8_t>& priority);
  void connect(PortPeer* peer, uint16_t link) {
    peer_ = peer;
    link_ = link;
  }
  double gbps() const { return gbps_; }
  // Queues p (the switch has admitted it to the buffer) and starts sending if idle.
  void enqueue(Packet* p, uint16_t queue);
  void set_paused(uint16_t queue, bool paused);
  // Trains on this port (above); the switch's program and the peer must allow it.
  void set_train(bool on) { train_ = on; }
  // Applies the deferred dequeues that have happened by now: false when none waits any more.
  // `until`: also every dequeue up to then (Switch::settle_all: the engine is idle).
  bool settle(Picos until = -1);
  bool unsettled() const { return def_head_ < def_.size(); }
  bool paused(uint16_t queue) const { return q_[queue].paused; }
  uint32_t queued_packets(uint16_t queue) const { return q_[queue].pkts; }
  uint64_t queued_bytes(uint16_t queue) const { return q_[queue].bytes; }
  uint16_t queues() const { return uint16_t(q_.size()); }
  const PortCounters& counters() const { return ctr_; }
  PortCounters& counters() { return ctr_; }

  void on_event(uint64_t arg) override;  // arg 0: the MAC is free; else a delayed AFC command

 private:
  struct Queue {
    Packet* head = nullptr;
    Packet* tail = nullptr;
    uint32_t pkts = 0;
    uint64_t bytes = 0;
    bool paused = false;
  };
  void update_eligible(uint16_t q) {
    const uint64_t bit = 1ull << q;
    if (q_[q].head && !q_[q].paused)
      eligible_ |= bit;
    else
      eligible_ &= ~bit;
  }
  int pick();
  void send_next();
  void send_train();
  struct Deferred {  // a train's frame: its dequeue's accounting, due at `at`
    Picos at;
    uint32_t len;
    uint16_t queue;
  };
  bool train_ = false;
  std::vector<Deferred> def_;
  size_t def_head_ = 0;

  Switch& sw_;
  uint16_t index_;
  double gbps_;
  std::vector<Queue> q_;
  std::vector<uint64_t> levels_;  // queue masks by priority, highest first
  std::vector<uint16_t> rr_;      // round-robin cursor per level
  uint64_t eligible_ = 0;
  Picos free_at_ = 0;           // the MAC is free from then on
  bool event_pending_ = false;  // a decision is scheduled at free_at_
  bool sending_ = false;        // inside send_next (an egress pass may queue more)
  void wake();                  // decide now if the MAC is free, else make sure one is scheduled
  PortPeer* peer_ = nullptr;
  uint16_t link_ = 0;
  PortCounters ctr_;
};

}  // namespace nfpark::sim
