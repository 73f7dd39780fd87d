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

// Layout: an enqueue and a decision read the object's first cache line (the eligible and paused
// masks, the MAC's state, the top priority level's queues), a frame sent the second (the
// top level's round-robin cursor, the rate, the peer, the tx counters); the queues are in the
// object (no pointer to follow), two to a line. At 1.4 Tbps a port's state is evicted from L1
// between two of its packets, so every line it spreads over is a miss (docs/sim.md §9).
class alignas(64) EgressPort final : public EventHandler {
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
  bool paused(uint16_t queue) const { return (paused_ >> queue) & 1; }
  uint32_t queued_packets(uint16_t queue) const { return q_[queue].pkts; }
  uint64_t queued_bytes(uint16_t queue) const { return q_[queue].bytes; }
  uint16_t queues() const { return nq_; }
  const PortCounters& counters() const { return ctr_; }
  PortCounters& counters() { return ctr_; }

  void on_event(uint64_t arg) override;  // arg 0: the MAC is free; else a delayed AFC command

 private:
  struct Queue {
    Packet* head = nullptr;
    Packet* tail = nullptr;
    uint64_t bytes = 0;
    uint32_t pkts = 0;
  };
  struct Level {
    uint64_t mask = 0;    // its queues
    uint64_t cursor = 0;  // round robin: the next queue to look at from
  };
  // The first eligible queue of the highest level that has one (-1: none); round robin inside
  // the level. The last level's eligible queues are all that is left: its mask is not read (a
  // port of one or two levels reads only the top one's, in the first line).
  int pick() {
    const uint64_t el = eligible_;
    if (!el) return -1;
    uint64_t* cursor = &top_cursor_;
    uint64_t e = el & top_mask_;
    if (!e) {  // the levels cover every queue: one has an eligible bit
      Level* l = more_;
      for (Level* last = &more_[levels_ - 2]; l != last && !(e = el & l->mask); ++l) {
      }
      if (!e) e = el;
      cursor = &l->cursor;
    }
    const uint64_t at_or_after = e & (~0ull << *cursor);
    const int q = __builtin_ctzll(at_or_after ? at_or_after : e);
    *cursor = q + 1 == 64 ? 0 : uint64_t(q + 1);
    return q;
  }
  // Takes queue qi's head (qi is eligible).
  Packet* pop(int qi) {
    Queue& q = q_[qi];
    Packet* p = q.head;
    q.head = p->next;
    if (!q.head) {
      q.tail = nullptr;
      eligible_ &= ~(1ull << qi);
    }
    return p;
  }
  void send_next();
  void send_train();
  void wake();  // decide now if the MAC is free, else make sure one is scheduled

  // first cache line (with EventHandler's vtable and tie): what every decision and enqueue reads
  uint64_t eligible_ = 0;  // queues with a packet and not paused
  Picos free_at_ = 0;      // the MAC is free from then on
  Switch& sw_;
  uint16_t index_;
  uint16_t link_ = 0;
  uint8_t levels_ = 1;          // priority levels
  bool event_pending_ = false;  // a decision is scheduled at free_at_
  bool sending_ = false;        // inside send_next (an egress pass may queue more)
  bool train_ = false;
  uint64_t top_mask_ = 0;  // the highest priority level's queues
  uint64_t paused_ = 0;    // paused queues
  // second line: what a frame sent reads and writes
  uint64_t top_cursor_ = 0;  // the top level's round-robin cursor (Level::cursor)
  double gbps_;
  PortPeer* peer_ = nullptr;
  PortCounters ctr_;  // its tx counters in this line, rx in the next
  // the rest
  uint16_t nq_;
  struct Deferred {  // a train's frame: its dequeue's accounting, due at `at`
    Picos at;
    uint32_t len;
    uint16_t queue;
  };
  std::vector<Deferred> def_;
  size_t def_head_ = 0;
  Level more_[63];  // the levels below the top one, by priority
  alignas(64) Queue q_[64];
};

}  // namespace nfpark::sim
