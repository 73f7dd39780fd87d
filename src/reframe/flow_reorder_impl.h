// FlowReorder<Handle> member definitions (included by flow_reorder.h only).
#pragma once
#if defined(__AVX2__)
#include <immintrin.h>
#endif
#include <cstddef>

#include "core/hot_path.h"

namespace nfpark::reframe {

template <class Handle>
FlowReorder<Handle>::FlowReorder(const ReorderConfig& cfg)
    : cfg_(cfg),
      slots_(cfg.max_flows),
      ring_(cfg.max_held_packets + 4 * kMaxChunk),
      prefetch_(cfg.prefetch),
      need_cold_(cfg.priority == Priority::kOldestFlow || cfg.coalesce_acks),
      timeout_t_(uint32_t(std::min<Nanos>(cfg.flow_timeout >> 10, UINT32_MAX / 2))),
      monitor_(cfg.self_bypass) {
  // Nodes in use: held (<= max_held_packets, checked before each one is held) + ready, which
  // were held or arrived in the current round (<= kMaxChunk).
  const uint32_t pool = cfg.max_held_packets + kMaxChunk;
  nodes_.resize(pool);
  if (cfg.coalesce_acks) acks_.resize(pool);
  for (uint32_t i = 0; i < pool; ++i) nodes_[i].next = i + 1 < pool ? i + 1 : kNone;
  free_head_ = 0;
  ready_.resize(ring_.capacity());
  scratch_.reserve(pool);
}

template <class Handle>
template <class Out>
void FlowReorder<Handle>::push(std::span<const Handle> pkts, std::span<const PacketMeta> meta,
                               Nanos now, Out& out) {
  for (size_t base = 0; base < pkts.size(); base += kMaxChunk) {
    const size_t end = std::min(pkts.size(), base + kMaxChunk);
    if (passing()) {
      pass(pkts.subspan(base, end - base), out);
      continue;
    }
    const bool pf = prefetch_;  // a local: the loop's stores would make it a load a packet
    if (pf) {                   // scalar path: the same loop without these two prefetch lines
      // Issued before expire(), whose ring walk (batches due, in cache) hides part of the wait.
      for (size_t i = base; i < std::min(end, base + kPrefetchAhead); ++i)
        slots_.prefetch(meta[i].flow);
    }
    expire(now);
    // Input runs are counted here, per chunk, not in on_packet (rx and the monitor once a round;
    // counted in the loop below they cost as much: one more value live across on_packet).
    uint64_t runs = !any_in_ || meta[base].flow != last_in_flow_;
    for (size_t i = base + 1; i < end; ++i) runs += meta[i].flow != meta[i - 1].flow;
    any_in_ = true;
    last_in_flow_ = meta[end - 1].flow;
    stats_.rx += end - base;
    stats_.runs_in += runs;
    monitor_.on_in(end - base, runs);
    // Every packet is either held or bypassed (on_packet counts the bypassed): held per round.
    const uint64_t bypassed_before = stats_.bypassed;
    for (size_t i = base; i < end; ++i) {
      if (pf && i + kPrefetchAhead < end) slots_.prefetch(meta[i + kPrefetchAhead].flow);
      if (meta[i].barrier()) [[unlikely]] {  // everything before it goes out first, then it alone
        flush_everything(now, stats_.flush_barrier);
        emit_ready(out);
        on_packet(pkts[i], meta[i], now, out);
        emit_ready(out);
        continue;
      }
      on_packet(pkts[i], meta[i], now, out);
    }
    stats_.held += (end - base) - (stats_.bypassed - bypassed_before);
    expire(now);  // t_buff == 0: flush what this round buffered
    emit_ready(out);
    const bool bypass = monitor_.judge();
    stats_.probes = monitor_.judged();
    stats_.last_gain_milli = uint64_t(monitor_.last_gain() * 1000 + 0.5);
    if (bypass) {  // regrouping does not pay: flush everything, then pass through
      ++stats_.bypass_periods;
      flush_everything(now, stats_.flush_self_bypass);
      emit_ready(out);
    }
    advance_head();
  }
}

template <class Handle>
template <class Out>
void FlowReorder<Handle>::pass(std::span<const Handle> pkts, Out& out) {
  for (Handle h : pkts) out.emit(h);
  stats_.rx += pkts.size();
  stats_.tx += pkts.size();
  stats_.passed += pkts.size();
  monitor_.passed(pkts.size());
}

template <class Handle>
uint32_t FlowReorder<Handle>::alloc_node(Handle h, const PacketMeta& m) {
  const uint32_t n = free_head_;  // never kNone: see the pool bound in the constructor
  Node& x = nodes_[n];
  free_head_ = x.next;
  x = Node{h, kNone, m.flags};
  if (cfg_.coalesce_acks) acks_[n] = m.ack;
  return n;
}

template <class Handle>
void FlowReorder<Handle>::append(Batch& b, Handle h, const PacketMeta& m, Nanos now) {
  const uint32_t n = alloc_node(h, m);
  if (b.tail == kNone)
    b.head = n;
  else
    nodes_[b.tail].next = n;
  b.tail = n;
  ++b.count;
  b.last = now;
  b.has_ack |= m.pure_ack();
}

template <class Handle>
int64_t FlowReorder<Handle>::key_for(uint32_t slot, Nanos now) {
  switch (cfg_.priority) {
    case Priority::kOldestInQueue:
      return now;
    case Priority::kOldestFlow:
      return slots_.cold(slot).first_seen;
    case Priority::kShortestFlow:
      return slots_.at(slot).seen();
    case Priority::kReady:
      break;
  }
  return 0;
}

// The position the batch takes must be free: a batch still there is emitted first (the ring is
// sized so that this happens only when traffic outruns it within t_buff).
template <class Handle>
template <class Out>
Batch& FlowReorder<Handle>::new_batch(uint32_t slot, Batch::State st, Nanos now, uint64_t flow,
                                      Out& out) {
  Batch& old = ring_.next_slot();
  if (old.state != Batch::kDone) {
    if (old.state == Batch::kBuffering) make_ready(old, stats_.flush_forced, now);
    emit_ready(out);
  }
  if (ring_.next_seq() - ring_.head == ring_.capacity()) ++ring_.head;  // that was the head
  // The ring is written in sequence, a line per batch, long evicted since its last round:
  // fetch the line a few batches ahead, as the flow slots are.
  if (prefetch_) prefetch_line_w(&ring_.at(ring_.next_seq() + kPrefetchAhead));
  return ring_.create(slot, st, now, flow);
}

// The flow's buffering batch, or nullptr. Only batches from the ring's head on can be buffering,
// so a flow whose last batch is older costs no ring access. (A batch made ready earlier in this
// round is not joined: a new batch of the flow is keyed and readied after it, so it follows.)
template <class Handle>
Batch* FlowReorder<Handle>::buffering(const FlowSlot& e, uint32_t slot) {
  if (int32_t(e.seq - ring_.head) < 0) return nullptr;
  Batch* b = ring_.live(e.seq, slot);
  return b && b->state == Batch::kBuffering ? b : nullptr;
}

// The flow's slot, else a free way, else the idle way seen least recently; kNone when every way
// holds another flow's live batch. A flow whose batch is ready in this round keeps its slot too:
// taking it over would restart its priority key (packets seen, first seen), and a batch of its
// own later in the round could then sort before the ready one.
// The way is found without a branch per way (which way holds a flow is random: a loop that stops
// at the match mispredicted about once a packet).
template <class Handle>
uint32_t FlowReorder<Handle>::find_slot(uint64_t flow, uint32_t now_t) {
  static_assert(FlowSlots::kWays == 4);
  const uint32_t base = slots_.set(flow), tag = FlowSlots::tag(flow);
  const FlowSlot* w = &slots_.at(base);
#if defined(__AVX2__)
  // The line as two 32-byte halves (ways 0-1, 2-3), all four tags compared at once: a way's tag
  // is the first 32-bit lane of its four, so its match is mask bit 4 * way.
  static_assert(sizeof(FlowSlot) == 16 && offsetof(FlowSlot, tag) == 0);
  const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
  const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 2));
  auto ways = [&](__m256i v) {
    return (uint32_t(_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(lo, v)))) |
            uint32_t(_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(hi, v)))) << 8) &
           0x1111u;
  };
  const uint32_t hit = ways(_mm256_set1_epi32(int(tag)));
  if (hit) [[likely]]
    return base + uint32_t(std::countr_zero(hit)) / 4;
  const uint32_t empty = ways(_mm256_setzero_si256());
  if (empty) return base + uint32_t(std::countr_zero(empty)) / 4;
#else
  const uint32_t t0 = w[0].tag, t1 = w[1].tag, t2 = w[2].tag, t3 = w[3].tag;
  const uint32_t hit = uint32_t(t0 == tag) | uint32_t(t1 == tag) << 1 | uint32_t(t2 == tag) << 2 |
                       uint32_t(t3 == tag) << 3;
  if (hit) [[likely]]
    return base + uint32_t(std::countr_zero(hit));
  const uint32_t empty =
      uint32_t(t0 == 0) | uint32_t(t1 == 0) << 1 | uint32_t(t2 == 0) << 2 | uint32_t(t3 == 0) << 3;
  if (empty) return base + uint32_t(std::countr_zero(empty));
#endif
  return find_victim(base, now_t);
}

// Every way holds another flow: the idle way seen least recently, kNone when all are live.
template <class Handle>
uint32_t FlowReorder<Handle>::find_victim(uint32_t base, uint32_t now_t) {
  uint32_t victim = kNone, victim_age = 0;
  for (uint32_t w = base; w < base + FlowSlots::kWays; ++w) {
    const FlowSlot& e = slots_.at(w);
    const uint32_t age = now_t - e.last;
    if ((victim == kNone || age > victim_age) && !ring_.live(e.seq, w))
      victim = w, victim_age = age;
  }
  return victim;
}

template <class Handle>
template <class Out>
void FlowReorder<Handle>::on_packet(Handle h, const PacketMeta& m, Nanos now, Out& out) {
  uint32_t si = kNone;
  Batch* live = nullptr;
  bool is_new = false;
  const uint32_t now_t = FlowSlots::ticks(now);
  if (m.flow != 0) {
    si = find_slot(m.flow, now_t);
    if (si != kNone) {
      FlowSlot& e = slots_.at(si);
      live = buffering(e, si);
      const uint32_t tag = FlowSlots::tag(m.flow);
      if (e.tag != tag || (!live && now_t - e.last >= timeout_t_)) {
        is_new = true;
        stats_.flows_evicted += e.tag != 0 && e.tag != tag;
        stats_.flows_expired += e.tag == tag;
        flows_now_ += e.tag == 0;
        e = FlowSlot{};
        e.tag = tag;
        if (need_cold_) slots_.cold(si) = FlowSlotCold{now, 0, 0};
      }
      // Two flows with one tag in one set (a 2^-32 chance per pair) share the slot; their
      // batches are kept apart, so a batch (an emitted run) always holds one flow's packets.
      if (live && live->flow != m.flow) [[unlikely]] {
        make_ready(*live, stats_.flush_forced, now);
        live = nullptr;
      }
    }
  }
  if (si == kNone) {  // no flow id, or no room: emitted in this round, in order
    ++stats_.untracked;
    ++stats_.bypassed;
    Batch& b = new_batch(kNone, Batch::kReady, now, m.flow, out);
    b.key = cfg_.priority == Priority::kShortestFlow || cfg_.priority == Priority::kReady ? 0 : now;
    ready_now(b);
    append(b, h, m, now);
    return;
  }
  FlowSlot& e = slots_.at(si);
  stats_.flows_new += is_new;
  if (e.seen() < ~FlowSlot::kHasAck) ++e.packets;
  e.last = now_t;
  if (m.bypass() || (is_new && cfg_.bypass_first_packet)) {
    ++stats_.bypassed;
    if (live) {  // its buffered packets go first, the bypass packet right behind them
      if (cfg_.priority == Priority::kShortestFlow) live->key = e.seen();
      make_ready(*live, stats_.flush_bypass, now);
    } else {
      live = &new_batch(si, Batch::kReady, now, m.flow, out);
      live->key = key_for(si, now);
      e.seq = live->seq;
      ready_now(*live);
    }
    append(*live, h, m, now);
    return;
  }
  Batch* b = live;
  if (held_pkts_ >= cfg_.max_held_packets && force_oldest(now) && b &&
      b->state != Batch::kBuffering)
    b = nullptr;
  if (!b && held_flows_ >= cfg_.max_held_flows) force_oldest(now);
  if (!b) {
    b = &new_batch(si, Batch::kBuffering, now, m.flow, out);
    b->key = key_for(si, now);
    e.seq = b->seq;
    ++held_flows_;
  }
  append(*b, h, m, now);
  if (cfg_.priority == Priority::kShortestFlow) b->key = e.seen();
  ++held_pkts_;
  if (b->count >= cfg_.max_burst) make_ready(*b, stats_.flush_full, now);
}

template <class Handle>
void FlowReorder<Handle>::make_ready(Batch& b, uint64_t& reason, Nanos now) {
  b.state = Batch::kReady;
  ready_now(b);
  held_pkts_ -= b.count;
  --held_flows_;
  ++reason;
  ++stats_.batches;
  stats_.batched_packets += b.count;
  stats_.useless_wait_ns += uint64_t(std::max<Nanos>(0, now - b.last));
}

template <class Handle>
void FlowReorder<Handle>::expire(Nanos now) {
  for (; !ring_.empty_from_head(); ++ring_.head) {
    Batch& b = ring_.at(ring_.head);
    if (b.state == Batch::kBuffering) {
      if (b.start + cfg_.t_buff > now) return;
      make_ready(b, stats_.flush_timeout, now);
    }
  }
}

// Flushes the oldest buffering batch; false when none is buffering.
template <class Handle>
bool FlowReorder<Handle>::force_oldest(Nanos now) {
  advance_head();
  if (ring_.empty_from_head()) return false;
  make_ready(ring_.at(ring_.head), stats_.flush_forced, now);
  ++ring_.head;
  return true;
}

template <class Handle>
void FlowReorder<Handle>::flush_everything(Nanos now, uint64_t& reason) {
  for (; !ring_.empty_from_head(); ++ring_.head) {
    Batch& b = ring_.at(ring_.head);
    if (b.state == Batch::kBuffering) make_ready(b, reason, now);
  }
}

// Moves the head past batches that are no longer buffering.
template <class Handle>
void FlowReorder<Handle>::advance_head() {
  while (!ring_.empty_from_head() && ring_.at(ring_.head).state != Batch::kBuffering) ++ring_.head;
}

// Marks the pure ACKs of `b` that a later one supersedes; true when it marked any.
template <class Handle>
bool FlowReorder<Handle>::coalesce(const Batch& b) {
  scratch_.clear();
  for (uint32_t n = b.head; n != kNone; n = nodes_[n].next)
    if (nodes_[n].flags & PacketMeta::kPureAck) scratch_.push_back(n);
  const size_t k = scratch_.size();
  if (k == 0) return false;
  FlowSlot& e = slots_.at(b.slot);
  FlowSlotCold& c = slots_.cold(b.slot);
  const bool mine = e.tag == FlowSlots::tag(b.flow);  // the slot may have changed hands
  const bool has_last = mine && (e.packets & FlowSlot::kHasAck);
  auto gt = [](uint32_t a, uint32_t c) { return int32_t(a - c) > 0; };  // RFC 793 seq compare
  auto ack = [this](size_t i) { return acks_[scratch_[i]]; };
  uint32_t max_later = ack(k - 1);
  bool marked = false;
  for (size_t i = k - 1; i-- > 0;) {  // the last pure ACK is the highest: always kept
    const uint32_t a = ack(i);
    const bool dup_prev = i > 0 ? ack(i - 1) == a : (has_last && c.last_ack == a);
    const bool dup_next = ack(i + 1) == a;
    if (gt(max_later, a) && !dup_prev && !dup_next) {
      nodes_[scratch_[i]].flags |= kDropMark;
      marked = true;
    }
    if (gt(a, max_later)) max_later = a;
  }
  if (!mine) return marked;
  c.last_ack = ack(k - 1);
  e.packets |= FlowSlot::kHasAck;
  return marked;
}

template <class Handle>
template <class Out>
void FlowReorder<Handle>::emit_ready(Out& out) {
  if (ready_n_ == 0) return;
  if (cfg_.priority != Priority::kReady) {  // stable insertion sort: ties keep readiness order
    for (size_t i = 1; i < ready_n_; ++i) {
      const ReadyRef r = ready_[i];
      size_t j = i;
      for (; j > 0 && ready_[j - 1].key > r.key; --j) ready_[j] = ready_[j - 1];
      ready_[j] = r;
    }
  }
  // A batch is one flow's packets (never empty): it starts an output run unless the previous
  // emitted packet was of the same flow. Untracked packets without a flow id (flow 0) are each
  // a run of their own for the emitter (nothing says two of them belong together), though the
  // SLF count (runs_out) takes consecutive ones as one run, as before.
  uint64_t tx = 0, runs = 0;
  for (uint32_t k = 0; k < ready_n_; ++k) {
    Batch& b = ring_.at(ready_[k].seq);
    const bool marked = cfg_.coalesce_acks && b.has_ack && b.slot != kNone && coalesce(b);
    bool new_run = !any_out_ || b.flow != last_out_flow_;
    bool run_start = new_run || b.flow == 0;
    uint32_t n = b.head;
    if (!marked) [[likely]] {  // every packet goes out: the list returns to the pool whole
      runs += new_run;
      tx += b.count;
      for (; n != b.tail; n = nodes_[n].next) {
        emit_one(out, nodes_[n].h, b.flow, run_start);
        run_start = false;
      }
      emit_one(out, nodes_[n].h, b.flow, run_start);
      nodes_[n].next = free_head_;
      free_head_ = b.head;
    } else {
      while (n != kNone) {
        Node& x = nodes_[n];
        const uint32_t nx = x.next;
        if (x.flags & kDropMark) {
          ++stats_.coalesced;
          out.coalesced(x.h);
        } else {
          runs += new_run;
          ++tx;
          emit_one(out, x.h, b.flow, run_start);
          new_run = run_start = false;
        }
        x.next = free_head_;
        free_head_ = n;
        n = nx;
      }
    }
    any_out_ = true;
    last_out_flow_ = b.flow;
    b.state = Batch::kDone;
  }
  stats_.tx += tx;
  stats_.runs_out += runs;
  monitor_.on_out(tx, runs);
  ready_n_ = 0;
}

}  // namespace nfpark::reframe
