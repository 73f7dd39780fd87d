// Element:  FlowReorder — Reframer: delays packets per flow for up to t_buff and emits each
//           flow's batch contiguously, raising spatial locality (SLF) for the NFs behind it.
// Ports:    push(burst) -> emitter (emit / coalesced)   diagram: in0 --> [FlowReorder] --> out0
//           An emitter with emit_run(h, flow, run_start) gets instead each packet's flow id and
//           whether it starts an output run (the flow changed; every flow-0 packet): a chain
//           behind finds its runs without comparing keys (emitters.h).
// Config:   ReorderConfig: t_buff (64 us) · max_burst (32 pkts) · max_held_packets (16384) ·
//           max_held_flows (4096) · max_flows (2^20) · flow_timeout (10 s) · priority
//           (oldest_in_queue) · bypass_first_packet (true) · coalesce_acks (false) · prefetch
//           (true) · self_bypass {enabled true, min_gain 1.1, probe 16384, bypass 262144 pkts}.
//           Bypass classes (SYN, DSCP, header match) come from classify() in PacketMeta.
// Time:     `now` passed to push/poll/flush_all, non-decreasing; never reads a clock; no timers
//           of its own: call poll() at next_deadline() (or every loop iteration).
// State:    FlowSlots (16 B hot + 16 B cold per slot, 4 per flow), BatchRing (64 B per batch, in
//           cache), a node pool of max_held_packets + 256 (handle, next, flags: 16 B with
//           32-bit handles, 32 B in ReframeStage; ACK numbers beside it with coalesce_acks only).
// Counters: ReorderStats (rx, tx, coalesced, bypassed, held, flush.*, flows.*, runs_in/out,
//           useless_wait_ns, slf_*_milli, self_bypass.*) + held_now, held_flows_now, flows_now.
// Cost:     push+poll, bursts of 32, uniform random flows at 10 Mpps virtual, t_buff 64 us
//           (reframe_bench, thread CPU time, shared 2-core VM, 2026-11-24): ~21 ns/pkt at 1k
//           flows, ~25 at 1M (one DRAM line per packet, prefetched 16 packets ahead; the batch
//           ring's line too); see docs/reframer.md §7. Call prefault() at set-up. Counters are
//           added once per round (rx, runs_in, held) and per batch (tx, runs_out), not per
//           packet.
// Refs:     Ghasemirahni et al., "Packet Order Matters!", NSDI'22; FastClick SFMaker.
//           See also: classify(), Stage, Sharded, docs/reframer.md.
//
// Theory of operation
// - A round is one push() (per chunk of <= kMaxChunk packets), poll() or flush_all() call. Every
//   packet pushed in a round is either appended to its flow's buffering batch or put, with its
//   flow's buffered packets, into a ready batch; the round's ready batches are emitted before the
//   call returns, sorted by priority with ties in readiness order (a stable sort), one batch
//   after another. A flow's batches become ready in creation order and their keys never
//   decrease (batch start, flow age, packets seen), and a slot is never taken over while its
//   flow has a live (buffering or ready) batch — so per-flow order holds for every policy, and
//   every packet leaves exactly once (emitted, or released as coalesced).
// - A flow's batch starts with its first buffered packet and is flushed when it reaches
//   max_burst, when now >= start + t_buff (checked at the start and end of each round), when a
//   bypass packet of the flow arrives (the batch goes first, then the bypass packet, in the same
//   contiguous run), when a cap forces the oldest batch out, or at the end.
// - A barrier packet (a later IP fragment, an ICMP error: PacketMeta::kBarrier) keeps its place:
//   every batch is flushed and the ready set emitted before it, and it is emitted alone, so a
//   stateful NF behind sees it after the packets it depends on (a NAT: the first fragment's
//   mapping, the flow an error is about). Rare in real traffic; each costs one flush of all.
// - Batches live in a ring in creation order (batch_ring.h), which is the flush list: expiry
//   walks it from the oldest and never touches a flow slot, so a packet costs one flow-slot line
//   (prefetched kPrefetchAhead packets ahead) and the ring and node pool, which stay in cache.
// - Self-bypass (self_bypass.h): when a probe window's SLF gain is below min_gain, the round ends
//   by flushing everything, and the next bypass_packets packets go straight through (pass()).
#pragma once
#include <algorithm>
#include <bit>
#include <span>
#include <vector>

#include "reframe/batch_ring.h"
#include "reframe/flow_slots.h"
#include "reframe/packet_meta.h"
#include "reframe/reorder_config.h"
#include "reframe/reorder_stats.h"
#include "reframe/self_bypass.h"

namespace nfpark::reframe {

constexpr Nanos kNever = INT64_MAX;

template <class Handle>
class FlowReorder {
 public:
  static constexpr uint32_t kMaxChunk = 256;  // packets per round; longer pushes are split
  // Flow slots (and ring lines) prefetched this far ahead: 16 measured best at 1M flows on
  // this VM (8: 47 ns, 12: 43, 16: 39-42, 20: 47, 24: 59-65 — a burst's first prefetches stall).
  static constexpr uint32_t kPrefetchAhead = 16;

  // `cfg` must pass cfg.validate().
  explicit FlowReorder(const ReorderConfig& cfg);

  // Enqueues a burst (pkts.size() == meta.size()) that arrived at `now`, then emits what is due.
  // While passing() the packets go straight through (meta unused).
  template <class Out>
  void push(std::span<const Handle> pkts, std::span<const PacketMeta> meta, Nanos now, Out& out);
  // While self-bypassed: emits the burst as it came (no meta needed; engines skip classify()).
  template <class Out>
  void pass(std::span<const Handle> pkts, Out& out);
  // Emits every batch whose t_buff has elapsed at `now`.
  template <class Out>
  void poll(Nanos now, Out& out) {
    expire(now);
    emit_ready(out);
    advance_head();
  }
  // Emits everything buffered (end of input), oldest batch first.
  template <class Out>
  void flush_all(Nanos now, Out& out) {
    flush_everything(now, stats_.flush_end);
    emit_ready(out);
  }

  // True while Reframer has bypassed itself: push() = pass(), nothing is held.
  bool passing() const { return monitor_.passing(); }
  // Ends self-bypass (if on) and starts a fresh probe window, e.g. when the traffic is known to
  // have changed (a new trace, a warm-up behind).
  void probe_now() { monitor_.restart(); }
  // When the oldest buffered batch falls due; kNever when nothing is buffered.
  Nanos next_deadline() const {
    return ring_.empty_from_head() ? kNever : ring_.at(ring_.head).start + cfg_.t_buff;
  }
  uint32_t held_packets() const { return held_pkts_; }
  uint32_t held_flows() const { return held_flows_; }
  const ReorderStats& stats() const { return stats_; }
  const ReorderConfig& config() const { return cfg_; }
  void counters(const CounterSink& sink) const {
    stats_.counters(sink);
    sink("held_now", held_pkts_);
    sink("held_flows_now", held_flows_);
    sink("flows_now", flows_now_);
  }
  // Maps every page of the flow slots now (set-up), not on a packet's first use of it.
  void prefault() { slots_.prefault(); }
  // Memory of the flow slots, the ring and the node pool.
  size_t memory_bytes() const {
    return slots_.bytes() + size_t(ring_.capacity()) * sizeof(Batch) +
           nodes_.size() * sizeof(Node) + acks_.size() * sizeof(uint32_t);
  }

 private:
  static constexpr uint8_t kDropMark = 0x80;  // node flag: removed by ACK coalescing
  // A held packet: one node pool entry. Its ACK number, read only by ACK coalescing, lives in
  // acks_ (same index, written only with coalesce_acks), so ReframeStage's 24-byte handle makes
  // a 32-byte node, two a line, none across two lines (with the ACK inside: 40 B, half of them
  // across two lines); a 32-bit handle makes 16 B.
  struct alignas(sizeof(Handle) <= 4 ? 16 : alignof(Handle)) Node {
    Handle h;
    uint32_t next;
    uint8_t flags;
  };
  static_assert(sizeof(Handle) != 24 || sizeof(Node) == 32, "ReframeStage's nodes: two a line");
  struct ReadyRef {
    int64_t key;
    uint32_t seq;
  };

  // The per-packet helpers are forced inline: at -O2 GCC kept them out of line (a call, spills).
  [[gnu::always_inline]] inline uint32_t alloc_node(Handle h, const PacketMeta& m);
  [[gnu::always_inline]] inline Batch* buffering(const FlowSlot& e, uint32_t slot);
  [[gnu::always_inline]] inline uint32_t find_slot(uint64_t flow, uint32_t now_t);
  uint32_t find_victim(uint32_t base, uint32_t now_t);
  template <class Out>
  [[gnu::always_inline]] inline void on_packet(Handle h, const PacketMeta& m, Nanos now, Out& out);
  template <class Out>
  [[gnu::always_inline]] inline Batch& new_batch(uint32_t slot, Batch::State st, Nanos now,
                                                 uint64_t flow, Out& out);
  [[gnu::always_inline]] inline void append(Batch& b, Handle h, const PacketMeta& m, Nanos now);
  [[gnu::always_inline]] inline void make_ready(Batch& b, uint64_t& reason, Nanos now);
  // ready_ holds at most one entry per ring position (each names a distinct live batch): sized
  // once, filled by index (a push_back was an out-of-line call per batch).
  void ready_now(Batch& b) { ready_[ready_n_++] = {b.key, b.seq}; }
  int64_t key_for(uint32_t slot, Nanos now);
  void expire(Nanos now);
  bool force_oldest(Nanos now);
  void flush_everything(Nanos now, uint64_t& reason);
  void advance_head();
  bool coalesce(const Batch& b);
  template <class Out>
  void emit_ready(Out& out);
  template <class Out>
  [[gnu::always_inline]] static inline void emit_one(Out& out, Handle h, uint64_t flow,
                                                     bool run_start) {
    if constexpr (requires { out.emit_run(h, flow, run_start); })
      out.emit_run(h, flow, run_start);
    else
      out.emit(h);
  }

  ReorderConfig cfg_;
  FlowSlots slots_;
  BatchRing ring_;
  bool prefetch_;
  bool need_cold_;              // the cold slot half is read (oldest_flow priority, ACK coalescing)
  uint32_t timeout_t_;          // flow_timeout in FlowSlots::ticks
  std::vector<Node> nodes_;     // node pool: a held packet's handle, FIFO link and flags
  std::vector<uint32_t> acks_;  // its ACK number, by node index (empty without coalesce_acks)
  uint32_t free_head_ = kNone;
  uint32_t held_pkts_ = 0, held_flows_ = 0, flows_now_ = 0;
  std::vector<ReadyRef> ready_;  // [0, ready_n_): batches ready in this round
  uint32_t ready_n_ = 0;
  std::vector<uint32_t> scratch_;  // pure-ACK nodes of one batch
  uint64_t last_in_flow_ = 0, last_out_flow_ = 0;
  bool any_in_ = false, any_out_ = false;  // a packet was pushed / emitted (not passed) yet
  SelfBypass monitor_;
  ReorderStats stats_;
};

}  // namespace nfpark::reframe

#include "reframe/flow_reorder_impl.h"
