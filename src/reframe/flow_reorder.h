// Element:  FlowReorder — Reframer: delays packets per flow for up to t_buff and emits each
//           flow's batch contiguously, raising spatial locality (SLF) for the NFs behind it.
// Ports:    push(burst) -> emitter (emit / coalesced)   diagram: in0 --> [FlowReorder] --> out0
// Config:   ReorderConfig: t_buff (64 us) · max_burst (32 pkts) · max_held_packets (16384) ·
//           max_held_flows (4096) · max_flows (2^20) · flow_timeout (10 s) · priority
//           (oldest_in_queue) · bypass_first_packet (true) · coalesce_acks (false).
//           Bypass classes (SYN, DSCP, header match) come from classify() in PacketMeta.
// Time:     `now` passed to push/poll/flush_all, non-decreasing; never reads a clock; no timers
//           of its own: call poll() at next_deadline() (or every loop iteration).
// State:    holds packets (node pool of max_held_packets + 256), one FlowEntry per flow (72 B).
// Counters: ReorderStats (rx, tx, coalesced, bypassed, held, flush.*, flows.*, runs_in/out,
//           useless_wait_ns, slf_*_milli) + held_now, held_flows_now, flows_now.
// Cost:     push+poll, bursts of 32, uniform random flows at 10 Mpps virtual, t_buff 64 us
//           (reframe_bench, thread CPU time, shared 2-core VM): 58-73 ns/pkt with 1k flows,
//           170-240 ns/pkt with 1M flows (DRAM-bound table misses; 190-280 without prefetch);
//           passthrough into the same emitter 1-2 ns/pkt.
// Refs:     Ghasemirahni et al., "Packet Order Matters!", NSDI'22; FastClick SFMaker.
//           See also: classify(), Sharded, docs/reframer.md.
//
// Theory of operation
// - A round is one push() (per chunk of <= kMaxChunk packets), poll() or flush_all() call. Every
//   packet pushed in a round is either buffered in its flow's FIFO or, together with its flow's
//   earlier packets, put in the round's ready set; the ready set is emitted before the call
//   returns, sorted by priority, one flow batch after another. A flow has at most one batch in
//   the ready set (later packets join it), and a flow entry with buffered or ready packets is
//   never evicted — so per-flow order holds for every policy, and every packet leaves exactly
//   once (emitted, or released as coalesced).
// - A flow's batch starts with its first buffered packet (batch_start) and is flushed when it
//   reaches max_burst, when now >= batch_start + t_buff (checked at the start and end of each
//   round), when a bypass packet of the flow arrives (the batch goes first, then the bypass
//   packet, in the same contiguous run), when a cap forces the oldest batch out, or at the end.
// - A barrier packet (a later IP fragment, an ICMP error: PacketMeta::kBarrier) keeps its place:
//   every batch is flushed and the ready set emitted before it, and it is emitted alone, so a
//   stateful NF behind sees it after the packets it depends on (a NAT: the first fragment's
//   mapping, the flow an error is about). Rare in real traffic; each costs one flush of all.
// - The flush list is a FIFO of buffered flows by batch_start (times are non-decreasing), so the
//   oldest batch is its head and every operation is O(1); full batches unlink from the middle.
// - Lifetimes: nodes return to the pool when emitted; flow entries live until evicted (idle and
//   least recently seen among the 16 candidates) or recycled after flow_timeout of idleness.
#pragma once
#include <algorithm>
#include <span>
#include <vector>

#include "reframe/flow_table.h"
#include "reframe/packet_meta.h"
#include "reframe/reorder_config.h"
#include "reframe/reorder_stats.h"

namespace nfpark::reframe {

constexpr Nanos kNever = INT64_MAX;

template <class Handle>
class FlowReorder {
 public:
  static constexpr uint32_t kMaxChunk = 256;  // packets per round; longer pushes are split
  // Below this table size the table stays in L2 and prefetching costs more than it saves
  // (reframe_bench: 1k flows ~+10% ns/pkt with prefetch; 1M flows -8..-37%).
  static constexpr uint32_t kPrefetchFlows = 65536;

  // `cfg` must pass cfg.validate().
  explicit FlowReorder(const ReorderConfig& cfg);

  // Enqueues a burst (pkts.size() == meta.size()) that arrived at `now`, then emits what is due.
  template <class Out>
  void push(std::span<const Handle> pkts, std::span<const PacketMeta> meta, Nanos now, Out& out);
  // Emits every batch whose t_buff has elapsed at `now`.
  template <class Out>
  void poll(Nanos now, Out& out) {
    expire(now);
    emit_ready(out);
  }
  // Emits everything buffered (end of input), oldest batch first.
  template <class Out>
  void flush_all(Nanos now, Out& out);

  // When the oldest buffered batch falls due; kNever when nothing is buffered.
  Nanos next_deadline() const {
    return flush_head_ == kNone ? kNever : table_.at(flush_head_).batch_start + cfg_.t_buff;
  }
  uint32_t held_packets() const { return held_pkts_; }
  uint32_t held_flows() const { return held_flows_; }
  const ReorderStats& stats() const { return stats_; }
  const ReorderConfig& config() const { return cfg_; }
  void counters(const CounterSink& sink) const {
    stats_.counters(sink);
    sink("held_now", held_pkts_);
    sink("held_flows_now", held_flows_);
    sink("flows_now", table_.size());
  }

 private:
  static constexpr uint8_t kDropMark = 0x80;  // node flag: removed by ACK coalescing
  struct Ready {
    int64_t key;    // priority key, ascending
    uint32_t seq;   // readiness order (tie-break: keeps sort deterministic, allocation-free)
    uint32_t slot;  // flow entry, or kNone for untracked packets
    uint32_t head, tail;
    uint64_t flow;
  };

  uint32_t alloc_node(Handle h, const PacketMeta& m);
  Ready& ready_for(uint32_t slot, uint64_t flow, Nanos now);
  void append_ready(uint32_t slot, uint64_t flow, uint32_t node, Nanos now);
  void detach(uint32_t slot, Nanos now, uint64_t& reason);
  void expire(Nanos now) {
    while (flush_head_ != kNone && table_.at(flush_head_).batch_start + cfg_.t_buff <= now)
      detach(flush_head_, now, stats_.flush_timeout);
  }
  void on_packet(Handle h, const PacketMeta& m, Nanos now);
  void unlink(uint32_t slot);
  void coalesce(const Ready& r);
  template <class Out>
  void emit_ready(Out& out);

  ReorderConfig cfg_;
  FlowTable table_;
  bool prefetch_;
  std::vector<Handle> handles_;  // node pool (structure of arrays)
  std::vector<uint32_t> next_;
  std::vector<uint32_t> ack_;
  std::vector<uint8_t> flags_;
  uint32_t free_head_ = kNone;
  uint32_t flush_head_ = kNone, flush_tail_ = kNone;
  uint32_t held_pkts_ = 0, held_flows_ = 0;
  std::vector<Ready> ready_;
  std::vector<uint32_t> scratch_;  // pure-ACK nodes of one batch
  uint64_t last_in_flow_ = 0, last_out_flow_ = 0;
  ReorderStats stats_;
};

}  // namespace nfpark::reframe

#include "reframe/flow_reorder_impl.h"
