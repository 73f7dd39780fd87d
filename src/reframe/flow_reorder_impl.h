// FlowReorder<Handle> member definitions (included by flow_reorder.h only).
#pragma once

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
  handles_.resize(pool);
  next_.resize(pool);
  ack_.resize(pool);
  flags_.resize(pool);
  for (uint32_t i = 0; i < pool; ++i) next_[i] = i + 1 < pool ? i + 1 : kNone;
  free_head_ = 0;
  ready_.reserve(ring_.capacity());
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
    if (prefetch_) {  // scalar path: the same loop without these two prefetch lines
      // Issued before expire(), whose ring walk (batches due, in cache) hides part of the wait.
      for (size_t i = base; i < std::min(end, base + kPrefetchAhead); ++i)
        slots_.prefetch(meta[i].flow);
    }
    expire(now);
    for (size_t i = base; i < end; ++i) {
      if (prefetch_ && i + kPrefetchAhead < end) slots_.prefetch(meta[i + kPrefetchAhead].flow);
      if (meta[i].barrier()) [[unlikely]] {  // everything before it goes out first, then it alone
        flush_everything(now, stats_.flush_barrier);
        emit_ready(out);
        on_packet(pkts[i], meta[i], now, out);
        emit_ready(out);
        continue;
      }
      on_packet(pkts[i], meta[i], now, out);
    }
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
  free_head_ = next_[n];
  handles_[n] = h;
  next_[n] = kNone;
  ack_[n] = m.ack;
  flags_[n] = m.flags;
  return n;
}

template <class Handle>
void FlowReorder<Handle>::append(Batch& b, Handle h, const PacketMeta& m, Nanos now) {
  const uint32_t n = alloc_node(h, m);
  if (b.tail == kNone)
    b.head = n;
  else
    next_[b.tail] = n;
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
  if (prefetch_) __builtin_prefetch(&ring_.at(ring_.next_seq() + kPrefetchAhead), 1);
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
template <class Handle>
uint32_t FlowReorder<Handle>::find_slot(uint64_t flow, uint32_t now_t) {
  const uint32_t base = slots_.set(flow), tag = FlowSlots::tag(flow);
  uint32_t empty = kNone;
  for (uint32_t w = base; w < base + FlowSlots::kWays; ++w) {
    const uint32_t t = slots_.at(w).tag;
    if (t == tag) return w;
    if (t == 0 && empty == kNone) empty = w;
  }
  if (empty != kNone) return empty;
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
  const bool new_run = stats_.rx == 0 || m.flow != last_in_flow_;
  stats_.runs_in += new_run;
  last_in_flow_ = m.flow;
  ++stats_.rx;
  monitor_.on_in(new_run);
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
  ++stats_.held;
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

template <class Handle>
void FlowReorder<Handle>::coalesce(const Batch& b) {
  scratch_.clear();
  for (uint32_t n = b.head; n != kNone; n = next_[n])
    if (flags_[n] & PacketMeta::kPureAck) scratch_.push_back(n);
  const size_t k = scratch_.size();
  if (k == 0) return;
  FlowSlot& e = slots_.at(b.slot);
  FlowSlotCold& c = slots_.cold(b.slot);
  const bool mine = e.tag == FlowSlots::tag(b.flow);  // the slot may have changed hands
  const bool has_last = mine && (e.packets & FlowSlot::kHasAck);
  auto gt = [](uint32_t a, uint32_t c) { return int32_t(a - c) > 0; };  // RFC 793 seq compare
  uint32_t max_later = ack_[scratch_[k - 1]];
  for (size_t i = k - 1; i-- > 0;) {  // the last pure ACK is the highest: always kept
    const uint32_t a = ack_[scratch_[i]];
    const bool dup_prev = i > 0 ? ack_[scratch_[i - 1]] == a : (has_last && c.last_ack == a);
    const bool dup_next = ack_[scratch_[i + 1]] == a;
    if (gt(max_later, a) && !dup_prev && !dup_next) flags_[scratch_[i]] |= kDropMark;
    if (gt(a, max_later)) max_later = a;
  }
  if (!mine) return;
  c.last_ack = ack_[scratch_[k - 1]];
  e.packets |= FlowSlot::kHasAck;
}

template <class Handle>
template <class Out>
void FlowReorder<Handle>::emit_ready(Out& out) {
  if (ready_.empty()) return;
  if (cfg_.priority != Priority::kReady) {  // stable insertion sort: ties keep readiness order
    for (size_t i = 1; i < ready_.size(); ++i) {
      const ReadyRef r = ready_[i];
      size_t j = i;
      for (; j > 0 && ready_[j - 1].key > r.key; --j) ready_[j] = ready_[j - 1];
      ready_[j] = r;
    }
  }
  for (const ReadyRef& r : ready_) {
    Batch& b = ring_.at(r.seq);
    if (cfg_.coalesce_acks && b.has_ack && b.slot != kNone) coalesce(b);
    for (uint32_t n = b.head; n != kNone;) {
      const uint32_t nx = next_[n];
      if (flags_[n] & kDropMark) {
        ++stats_.coalesced;
        out.coalesced(handles_[n]);
      } else {
        const bool new_run = stats_.tx == stats_.passed || b.flow != last_out_flow_;
        stats_.runs_out += new_run;
        monitor_.on_out(new_run);
        last_out_flow_ = b.flow;
        ++stats_.tx;
        out.emit(handles_[n]);
      }
      next_[n] = free_head_;
      free_head_ = n;
      n = nx;
    }
    b.state = Batch::kDone;
  }
  ready_.clear();
}

}  // namespace nfpark::reframe
