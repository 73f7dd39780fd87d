// FlowReorder<Handle> member definitions (included by flow_reorder.h only).
#pragma once

namespace nfpark::reframe {

template <class Handle>
FlowReorder<Handle>::FlowReorder(const ReorderConfig& cfg)
    : cfg_(cfg), table_(cfg.max_flows), prefetch_(cfg.prefetch && cfg.max_flows >= kPrefetchFlows) {
  const uint32_t pool = cfg.max_held_packets + kMaxChunk;
  handles_.resize(pool);
  next_.resize(pool);
  ack_.resize(pool);
  flags_.resize(pool);
  for (uint32_t i = 0; i < pool; ++i) next_[i] = i + 1 < pool ? i + 1 : kNone;
  free_head_ = 0;
  ready_.reserve(pool);  // every ready batch holds >= 1 node
  scratch_.reserve(pool);
}

template <class Handle>
template <class Out>
void FlowReorder<Handle>::push(std::span<const Handle> pkts, std::span<const PacketMeta> meta,
                               Nanos now, Out& out) {
  for (size_t base = 0; base < pkts.size(); base += kMaxChunk) {
    const size_t end = std::min(pkts.size(), base + kMaxChunk);
    expire(now);
    if (prefetch_) {  // scalar path: the loop below alone
      for (size_t i = base; i < end; ++i)
        if (meta[i].flow) table_.prefetch_buckets(meta[i].flow);
    }
    for (size_t i = base; i < end; ++i) {
      if (meta[i].barrier()) {  // everything before it goes out first, then it alone
        while (flush_head_ != kNone) detach(flush_head_, now, stats_.flush_barrier);
        emit_ready(out);
        on_packet(pkts[i], meta[i], now);
        emit_ready(out);
        continue;
      }
      on_packet(pkts[i], meta[i], now);
    }
    expire(now);  // t_buff == 0: flush what this round buffered
    emit_ready(out);
  }
}

template <class Handle>
template <class Out>
void FlowReorder<Handle>::flush_all(Nanos now, Out& out) {
  while (flush_head_ != kNone) detach(flush_head_, now, stats_.flush_end);
  emit_ready(out);
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
void FlowReorder<Handle>::on_packet(Handle h, const PacketMeta& m, Nanos now) {
  if (stats_.rx == 0 || m.flow != last_in_flow_) ++stats_.runs_in;
  last_in_flow_ = m.flow;
  ++stats_.rx;
  FlowTable::Lookup lk;
  if (m.flow != 0) lk = table_.find_or_insert(m.flow, now, cfg_.flow_timeout);
  if (lk.slot == kNone) {  // no flow id, or every candidate entry busy
    ++stats_.untracked;
    ++stats_.bypassed;
    append_ready(kNone, m.flow, alloc_node(h, m), now);
    return;
  }
  stats_.flows_new += lk.is_new;
  stats_.flows_evicted += lk.evicted;
  stats_.flows_expired += lk.expired;
  FlowEntry& e = table_.at(lk.slot);
  ++e.packets_seen;
  e.last_arrival = now;
  if (m.bypass() || (lk.is_new && cfg_.bypass_first_packet)) {
    if (e.count) detach(lk.slot, now, stats_.flush_bypass);  // its buffered packets go first
    ++stats_.bypassed;
    append_ready(lk.slot, m.flow, alloc_node(h, m), now);
    return;
  }
  if (held_pkts_ >= cfg_.max_held_packets) detach(flush_head_, now, stats_.flush_forced);
  if (e.count == 0 && held_flows_ >= cfg_.max_held_flows)
    detach(flush_head_, now, stats_.flush_forced);
  const uint32_t n = alloc_node(h, m);
  if (e.count == 0) {
    e.head = n;
    e.batch_start = now;
    e.prev = flush_tail_;  // append to the flush list (FIFO by batch_start)
    e.next = kNone;
    if (flush_tail_ != kNone)
      table_.at(flush_tail_).next = lk.slot;
    else
      flush_head_ = lk.slot;
    flush_tail_ = lk.slot;
    ++held_flows_;
  } else {
    next_[e.tail] = n;
  }
  e.tail = n;
  ++e.count;
  ++held_pkts_;
  ++stats_.held;
  if (e.count >= cfg_.max_burst) detach(lk.slot, now, stats_.flush_full);
}

template <class Handle>
void FlowReorder<Handle>::unlink(uint32_t slot) {
  FlowEntry& e = table_.at(slot);
  if (e.prev != kNone)
    table_.at(e.prev).next = e.next;
  else
    flush_head_ = e.next;
  if (e.next != kNone)
    table_.at(e.next).prev = e.prev;
  else
    flush_tail_ = e.prev;
  e.prev = e.next = kNone;
}

template <class Handle>
auto FlowReorder<Handle>::ready_for(uint32_t slot, uint64_t flow, Nanos now) -> Ready& {
  if (slot != kNone && table_.at(slot).pending != kNone) return ready_[table_.at(slot).pending];
  Ready r{0, uint32_t(ready_.size()), slot, kNone, kNone, flow};
  if (slot == kNone) {
    r.key = cfg_.priority == Priority::kShortestFlow ? 0 : now;
  } else {
    const FlowEntry& e = table_.at(slot);
    switch (cfg_.priority) {
      case Priority::kOldestInQueue:
        r.key = e.count ? e.batch_start : now;
        break;
      case Priority::kOldestFlow:
        r.key = e.first_seen;
        break;
      case Priority::kShortestFlow:
        r.key = e.packets_seen;
        break;
      case Priority::kReady:
        r.key = 0;
        break;
    }
    table_.at(slot).pending = r.seq;
  }
  if (cfg_.priority == Priority::kReady) r.key = 0;
  ready_.push_back(r);
  return ready_.back();
}

template <class Handle>
void FlowReorder<Handle>::append_ready(uint32_t slot, uint64_t flow, uint32_t node, Nanos now) {
  Ready& r = ready_for(slot, flow, now);
  if (r.tail == kNone)
    r.head = node;
  else
    next_[r.tail] = node;
  r.tail = node;
}

template <class Handle>
void FlowReorder<Handle>::detach(uint32_t slot, Nanos now, uint64_t& reason) {
  FlowEntry& e = table_.at(slot);
  Ready& r = ready_for(slot, table_.key_at(slot), now);
  if (r.tail == kNone)
    r.head = e.head;
  else
    next_[r.tail] = e.head;
  r.tail = e.tail;
  unlink(slot);
  held_pkts_ -= e.count;
  --held_flows_;
  ++reason;
  ++stats_.batches;
  stats_.batched_packets += e.count;
  stats_.useless_wait_ns += uint64_t(std::max<Nanos>(0, now - e.last_arrival));
  e.head = e.tail = kNone;
  e.count = 0;
}

template <class Handle>
void FlowReorder<Handle>::coalesce(const Ready& r) {
  scratch_.clear();
  for (uint32_t n = r.head; n != kNone; n = next_[n])
    if (flags_[n] & PacketMeta::kPureAck) scratch_.push_back(n);
  const size_t k = scratch_.size();
  if (k == 0) return;
  FlowEntry& e = table_.at(r.slot);
  auto gt = [](uint32_t a, uint32_t b) { return int32_t(a - b) > 0; };  // RFC 793 seq compare
  uint32_t max_later = ack_[scratch_[k - 1]];
  for (size_t i = k - 1; i-- > 0;) {  // the last pure ACK is the highest: always kept
    const uint32_t a = ack_[scratch_[i]];
    const bool dup_prev = i > 0 ? ack_[scratch_[i - 1]] == a : (e.has_last_ack && e.last_ack == a);
    const bool dup_next = ack_[scratch_[i + 1]] == a;
    if (gt(max_later, a) && !dup_prev && !dup_next) flags_[scratch_[i]] |= kDropMark;
    if (gt(a, max_later)) max_later = a;
  }
  e.last_ack = ack_[scratch_[k - 1]];
  e.has_last_ack = true;
}

template <class Handle>
template <class Out>
void FlowReorder<Handle>::emit_ready(Out& out) {
  if (ready_.empty()) return;
  if (cfg_.priority != Priority::kReady && ready_.size() > 1) {
    std::sort(ready_.begin(), ready_.end(), [](const Ready& a, const Ready& b) {
      return a.key != b.key ? a.key < b.key : a.seq < b.seq;
    });
  }
  for (const Ready& r : ready_) {
    if (cfg_.coalesce_acks && r.slot != kNone) coalesce(r);
    for (uint32_t n = r.head; n != kNone;) {
      const uint32_t nx = next_[n];
      if (flags_[n] & kDropMark) {
        ++stats_.coalesced;
        out.coalesced(handles_[n]);
      } else {
        if (stats_.tx == 0 || r.flow != last_out_flow_) ++stats_.runs_out;
        last_out_flow_ = r.flow;
        ++stats_.tx;
        out.emit(handles_[n]);
      }
      next_[n] = free_head_;
      free_head_ = n;
      n = nx;
    }
    if (r.slot != kNone) table_.at(r.slot).pending = kNone;
  }
  ready_.clear();
}

}  // namespace nfpark::reframe
