// Element:  QueueMem — QUEUE-MEM: payloads wait in per-port queues, headers go to the NF, a
//           batch leaves when every header of it is back (software switch).
// Ports:    traffic in -> split -> NF (headers, whole packets) ; NF -> merge -> traffic out
//           split(pkt, port, to_nf, to_out) -> taken? · merge(pkt, nf_link, to_out) ·
//           poll(now, to_out, settled) · nf_idle(to_out) · drain(to_out)
// Config:   QueueMemConfig: ports (1) · queues per port (1600) · slices (6) · batch (20) ·
//           header_array (94000) · min_payload (64 B) · lost_after (50 ms) · seal_after
//           (200 us) · tag key (none: CRC-32C) · no_split
// Time:     `now` (the NF side's clock) comes only from poll(), which the engine calls every
//           loop iteration; split() stamps batches with the last poll's time. No poll(), no
//           timer: the paper's behaviour (batches leave by header count only).
// State:    ports x queues batches of <= batch packets; header array of header_array slots;
//           per-slice FIFO of batches; per-flow-bucket summary (queue_mem_store.h).
//           At most config.max_held() packets wait at once.
// Counters: QueueMemCounters (queue_mem_config.h).
// Refs:     QUEUE-MEM §3.2–3.4, App. D (shared/seeds/004_...); Queue-Mem/queue-mem-p4
//           (payload_split.p4, forward_header.p4, store_header.p4, packet_reconstruct.p4);
//           shared/research/anchors_code.md §5; docs/queuemem.md (where nfpark differs, why).
//
// Theory of operation (docs/queuemem.md has the whole story and where it departs from the P4)
//  Split. A taggable packet (IPv4/IPv6 TCP/UDP, unfragmented) with payload >= min_payload that
//  no_split does not match waits, untouched, in its slice's open batch (a new batch takes a free
//  queue); the NF gets its headers + a 24-byte nfpark tag {port, idx, id, original length}.
//  Per-flow order. A flow always uses the same slice, and a slice releases its batches in
//  creation order. A packet not split whose flow has packets waiting is queued behind them: it
//  travels whole with a parked tag and waits at its entry on the way back. A packet that cannot
//  queue behind its waiting flow (untaggable, or the store is full) is refused: split() returns
//  false and the caller offers it again later, before anything after it (back-pressure). No
//  packet is dropped for lack of room.
//  Merge. A header whose tag verifies and whose (idx, id, port) still waits is stored at idx and
//  counts for its batch. A batch is complete when closed (full, or sealed after seal_after) and
//  all its headers are back; complete batches leave from the head of their slice, each original
//  rebuilt with its own header (id checked), each queued whole packet as it came back.
//  Loss. A slice's oldest batch missing a header is recovered when a header sent after it came
//  back lost_after ago on the NF's clock, at a poll where all the NF sent back is merged (a slow
//  NF that keeps order never triggers it), or at once on nf_idle(); only the originals without
//  a header are dropped (drop.header_lost). drain() ends a run: everything leaves or is freed.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/flow_key.h"
#include "core/hot_path.h"
#include "core/parse.h"
#include "core/time.h"
#include "park/buffer_ops.h"
#include "park/emitter.h"
#include "park/payload_park.h"
#include "park/queue_mem_config.h"
#include "park/queue_mem_evidence.h"
#include "park/queue_mem_fifo_store.h"
#include "park/queue_mem_store.h"
#include "park/tag.h"

namespace nfpark::park {

// S: where payloads wait (queue_mem_fifo_store.h: the storage seam). The default keeps them in
// software FIFOs; the simulator keeps them in its switch model's egress queues.
template <BufferOps B, class S = SoftwareFifoStore>
class QueueMem {
 public:
  using Handle = typename B::Handle;
  using Release = QueueMemRelease;
  using Leaving = QueueMemLeaving<Handle>;

  explicit QueueMem(const QueueMemConfig& c)
      : cfg_(usable(c)),
        codec_(TagFormat::kNfpark, c.key),
        st_(cfg_.ports, cfg_.queues, cfg_.slices, cfg_.batch, cfg_.header_array, B::null()),
        evidence_(std::max<Nanos>(1, cfg_.lost_after / 64)) {
    due_.reserve(2 * size_t(st_.slices()));
  }
  QueueMem(const QueueMem&) = delete;
  QueueMem& operator=(const QueueMem&) = delete;
  ~QueueMem() {  // frees what drain() did not (uncounted): stored headers and waiting packets
    for (uint32_t s = 0; s < st_.slices(); ++s)
      for (uint32_t q = st_.head(s); q != Store::kNone; q = st_.batch(q).next)
        for (uint32_t i = 0; i < st_.batch(q).count; ++i)
          if (st_.entry(q, i).pkt != B::null()) B::free(st_.entry(q, i).pkt);
    for (uint32_t i = 0; i < st_.slots(); ++i)
      if (st_.slot(i).hdr != B::null()) B::free(st_.slot(i).hdr);
  }

  const QueueMemConfig& config() const { return cfg_; }
  S& store() { return store_; }
  const TagCodec& codec() const { return codec_; }
  const QueueMemCounters& counters() const { return ctr_; }
  void report(const CounterSink& s) const { ctr_.report(s); }
  // Queues holding a batch (paused). Zero after drain().
  uint32_t paused_queues() const { return st_.busy_queues(); }

  // Traffic port -> NF. `port` is the output port the switch chose (its set of queues). Returns
  // true when it took `pkt`: a header or the whole packet went to `to_nf` (or it was dropped,
  // counted). Returns false when it refuses `pkt` for now (back-pressure, see above): the
  // caller still owns it and must offer it again before any packet that came after it, after
  // later merge()/poll()/nf_idle() calls. A refusal may release a batch to `to_out`.
  [[nodiscard]] bool split(Handle pkt, uint8_t port, Emitter<Handle>& to_nf,
                           Emitter<Handle>& to_out) {
    uint8_t* d = B::data(pkt);
    const uint32_t len = B::pkt_len(pkt);
    uint64_t h = 0;
    const bool hashed = take_flow_hash<B>(pkt, h);  // a source's: before the parse is taken
    PacketLayout L;
    parse_handle<B>(pkt, L);
    FlowKey k;
    uint32_t s = 0, b = 0;
    bool waits = false;
    if (port < cfg_.ports && (hashed || extract_flow_key(d, L, k))) {
      if (!hashed) h = k.hash();
      s = st_.slice_index(port, h);
      b = st_.bucket(h);
      waits = st_.waiting(s, b);
    }
    if (!taggable(L)) {
      if (waits) return refuse(s, to_out);  // it can carry no tag, so it cannot queue
      ++ctr_.rx;
      ++ctr_.not_split_untaggable;
      to_nf.push(pkt);
      return true;
    }
    const uint32_t hdr = L.payload_off;
    const uint32_t payload = std::min(L.ip_end, len) - hdr;
    uint64_t* why;
    if (port >= cfg_.ports) {
      why = &ctr_.not_split_no_queue;
    } else if (payload < cfg_.min_payload || payload == 0) {
      why = &ctr_.not_split_small;
    } else if (len > kMaxTaggedFrame) {
      why = &ctr_.not_split_large;
    } else if (!cfg_.no_split.empty() && cfg_.no_split.match(d, L)) {
      why = &ctr_.not_split_filtered;
    } else if (!st_.room(s, port)) {
      why = &ctr_.not_split_store_full;
    } else {
      // Never lent: a batch leaves once every header is back, copies included, and a payload
      // lent to a header still out could not leave then.
      Handle h = B::make_header(pkt, hdr, codec_.size(), hdr, 0, nullptr);
      if (h != B::null()) {
        ++ctr_.rx;
        ++ctr_.splits;
        const uint32_t id = next_id();
        const auto at = st_.add(s, b, pkt, id, ++sent_, len, uint16_t(hdr), false, time());
        place(at, pkt);
        hold(len);
        encode(h, hdr, port, at.idx, id, len, len - hdr);
        carry_layout<B>(h, L);  // its headers are pkt's: the NF side need not parse them
        to_nf.push(h);
        return true;
      }
      why = &ctr_.not_split_no_buffer;
    }
    if (waits && !st_.room(s, port)) return refuse(s, to_out);
    ++ctr_.rx;
    if (!B::open_gap(pkt, hdr, codec_.size())) {
      drop(pkt, ctr_.drop_no_headroom);
      return true;
    }
    ++*why;
    if (waits) {  // queued behind its flow: travels whole, waits at its entry on the way back
      ++ctr_.joined_whole;
      const uint32_t id = next_id();
      const auto at = st_.add(s, b, B::null(), id, ++sent_, len, uint16_t(hdr), true, time());
      place(at, B::null());
      encode(pkt, hdr, port, at.idx, id, len, 0);
    } else {
      ParkTag tag;
      tag.slice = port;
      tag.orig_len = uint16_t(std::min<uint32_t>(len, kMaxTaggedFrame));
      codec_.encode_nfpark(tag, B::data(pkt) + hdr);
    }
    carry_layout<B>(pkt, L);  // a tag after the headers changes no offset
    to_nf.push(pkt);
    return true;
  }

  // A hint for a caller that knows a packet's flow hash ahead of its split() (a traffic source,
  // a frame ahead): brings in the store state split() reads for that flow. Changes nothing.
  void prefetch_split(uint8_t port, uint64_t hash) const {
    if (port < cfg_.ports) st_.prefetch_add(st_.slice_index(port, hash), st_.bucket(hash));
  }

  // NF -> traffic out. `nf_link` names the NF link the packet came from; the tag itself names
  // the port, so it is informational — unless ports are NF servers (port_per_server): then a
  // tag must come back on its own port's link. A header may release batches.
  void merge(Handle pkt, uint8_t nf_link, Emitter<Handle>& to_out) {
    uint8_t* d = B::data(pkt);
    PacketLayout L;
    parse_handle<B>(pkt, L);
    if (!taggable(L)) {
      ++ctr_.untagged_returned;
      to_out.push(pkt);
      return;
    }
    const uint32_t at = L.payload_off;
    const uint32_t avail = B::head_len(pkt) > at ? B::head_len(pkt) - at : 0;
    ParkTag tag;
    if (codec_.decode_nfpark(d + at, avail, tag) != TagError::kNone) return drop(pkt, ctr_.bad_tag);
    if (cfg_.port_per_server && tag.slice != nf_link) return drop(pkt, ctr_.wrong_port);
    if (!tag.parked) {
      if (tag.drop) return drop(pkt, ctr_.drop_explicit_whole);
      B::close_gap(pkt, at, codec_.size());
      ++ctr_.returned_whole;
      to_out.push(pkt);
      return;
    }
    if (tag.index >= st_.slots() || tag.slice >= cfg_.ports) return drop(pkt, ctr_.stale_headers);
    auto& s = st_.slot(tag.index);
    if (s.id == 0 || s.id != tag.generation || st_.queue_port(s.queue) != tag.slice)
      return drop(pkt, ctr_.stale_headers);  // late (batch gone), replayed or forged
    if (s.returned) return drop(pkt, ctr_.duplicate_headers);
    s.returned = true;
    back_ = std::max(back_, s.send);
    if (tag.drop) {
      s.dropped = true;
      if (s.whole)
        drop(pkt, ctr_.drop_explicit_whole);
      else
        B::free(pkt);
    } else {
      s.hdr = pkt;
      s.hdr_len = uint16_t(at);
      if (s.whole) hold(B::pkt_len(pkt));
    }
    ++ctr_.headers_returned;
    auto& bt = st_.batch(s.queue);
    if (++bt.returned == bt.count && bt.closed) completed(s.queue, to_out);
  }

  // Time, every loop iteration. `now`: the NF side's clock — the one its Reframer and delays
  // run on (INT64_MIN: none yet); `settled`: every packet the NF side has sent back so far has
  // been merged (none waits in a ring or a backlog). Closes batches open longer than
  // seal_after. At a settled call, recovers a slice's head batch that misses a header when a
  // header sent after that batch came back lost_after ago or more: by then the NF's clock has
  // passed whatever it could hold that header for, and all it sent is merged, so it is lost.
  void poll(Nanos now, Emitter<Handle>& to_out, bool settled = true) {
    if (now == kNoTime) return;
    if (now_ == kNoTime) st_.restamp(now);  // packets split before the clock's first reading
    if (now_ != kNoTime && now < now_) clock_back_ = true;  // opening order != time order now
    now_ = now;
    evidence_.note(back_, now);
    lost_below_ = evidence_.seen_by(now - cfg_.lost_after);  // recoverable() for this poll
    // Each slice in turn: seal its open batch if due, then recover its head batches while the
    // evidence says they are lost. Only the slices where that can do something are visited, in
    // slice order (what a visit of every slice does: a slice's work touches no other slice):
    // those with an open batch due for sealing (a prefix of the open batches, in opening order)
    // and, when recovering, those whose head is recoverable (heads among the batches sent
    // below lost_below_, a prefix of the send order; the oldest head decides whether any is).
    const uint64_t oldest = st_.oldest_head_send();
    const bool recover = settled && oldest != UINT64_MAX && recoverable(oldest);
    if (clock_back_) {  // opening order is not time order any more: visit every slice
      for (uint32_t s = 0; s < st_.slices(); ++s) poll_slice(s, recover, to_out);
    } else if (recover || cfg_.seal_after > 0) {
      due_.clear();
      if (cfg_.seal_after > 0)
        for (uint32_t q = st_.first_open();
             q != Store::kNone && now - st_.batch(q).opened >= cfg_.seal_after;
             q = st_.next_open(q))
          due_.push_back(st_.batch(q).slice);
      if (recover)
        for (uint32_t q = st_.first_sent();
             q != Store::kNone && recoverable(st_.batch(q).last_send); q = st_.next_sent(q))
          if (st_.head(st_.batch(q).slice) == q) due_.push_back(st_.batch(q).slice);
      std::sort(due_.begin(), due_.end());  // the order a visit of every slice takes
      due_.erase(std::unique(due_.begin(), due_.end()), due_.end());
      for (uint32_t s : due_) poll_slice(s, recover, to_out);
    }
    const uint64_t after = st_.oldest_head_send();
    evidence_.prune(after == UINT64_MAX ? sent_ : after);
  }

  // The engine knows that nothing is on its way to or from the NF and the NF holds nothing:
  // every header not back is lost. Releases every batch (recovering those missing a header).
  void nf_idle(Emitter<Handle>& to_out) {
    for (uint32_t s = 0; s < st_.slices(); ++s) release_slice(s, ctr_.recoveries_idle, to_out);
  }

  // Port `port`'s NF server went down (port_per_server): every batch of its slices is released
  // now, as a recovery (payloads whose header is back leave, the others are dropped as
  // drop.header_lost), so its flows can move to another server with nothing of theirs waiting.
  void release_port(uint8_t port, Emitter<Handle>& to_out) {
    if (port >= cfg_.ports) return;
    const uint32_t per = st_.slices_per_port();
    for (uint32_t s = uint32_t(port) * per; s < uint32_t(port + 1) * per; ++s)
      release_slice(s, ctr_.recoveries_down, to_out);
  }

  // End of run: releases every batch (as a recovery would) and frees the packets whose header
  // never came back (stranded_at_exit). Call after the NF side has returned everything it will
  // return; afterwards nothing is held and no queue is paused.
  void drain(Emitter<Handle>& to_out) {
    for (uint32_t s = 0; s < st_.slices(); ++s) {
      st_.seal_tail(s);
      while (st_.head(s) != Store::kNone) {
        ++ctr_.batches_drained;
        release_head(s, Release::kDrain, to_out);
      }
    }
  }

  // One packet of a released batch leaves its store (S calls it, in the batch's FIFO order):
  // rebuilt with its header and pushed to `to_out`, or dropped and counted.
  void reconstruct(const Leaving& l, Emitter<Handle>& to_out) {
    Handle hdr = l.hdr;
    if (l.id_mismatch) {
      if (l.pkt != B::null()) {
        unhold(l.bytes);
        drop(l.pkt, ctr_.drop_id_mismatch);
      }
      return;
    }
    if (l.pkt == B::null()) {  // a queued whole packet
      if (hdr != B::null()) {
        unhold(B::pkt_len(hdr));
        B::close_gap(hdr, l.hdr_len, codec_.size());
        ++ctr_.returned_whole;
        to_out.push(hdr);
        hdr = B::null();
      } else if (!l.dropped) {
        ++ctr_.whole_lost;
      }
    } else {
      unhold(l.bytes);
      if (l.dropped) {
        drop(l.pkt, ctr_.drop_explicit);
      } else if (hdr == B::null()) {
        drop(l.pkt, l.why == Release::kDrain ? ctr_.stranded_at_exit : ctr_.drop_header_lost);
      } else {
        typename B::Lent never_lent{};
        const Rejoin r = B::rejoin(l.pkt, l.pkt_hdr_len, never_lent, hdr, l.hdr_len);
        if (r != Rejoin::kLent) hdr = B::null();  // consumed
        if (r == Rejoin::kOk) {
          ++ctr_.released;
          to_out.push(l.pkt);
        } else {  // no room, or a copy came back while its own header is still out
          drop(l.pkt, r == Rejoin::kNoRoom ? ctr_.drop_no_headroom : ctr_.drop_header_lost);
        }
      }
    }
    if (hdr != B::null()) B::free(hdr);
  }
  // S: queue `q`, released earlier (resume() returned false), holds nothing any more.
  void queue_drained(uint32_t q) { st_.free_queue(q); }

 private:
  using Store = QueueMemStore<Handle>;

  static QueueMemConfig usable(QueueMemConfig c) {  // validate() reports these; never divide by 0
    c.ports = std::max<uint8_t>(1, c.ports);
    c.queues = std::max<uint16_t>(1, c.queues);
    c.slices = std::max<uint16_t>(1, std::min(c.slices, c.queues));
    c.batch = std::max<uint16_t>(1, c.batch);
    c.header_array = std::max<uint32_t>(1, c.header_array);
    return c;
  }
  Nanos time() const { return now_ == kNoTime ? 0 : now_; }
  // A head batch whose last packet has send number `last_send` misses a header that is lost: a
  // header sent after it came back lost_after ago or more (now_ - seen_after(last_send) >=
  // lost_after), one compare against the bound poll() took from the evidence (seen_by).
  bool recoverable(uint64_t last_send) const { return last_send < lost_below_; }
  // poll()'s work on slice s.
  void poll_slice(uint32_t s, bool recover, Emitter<Handle>& to_out) {
    const uint32_t t = st_.tail(s);
    if (t != Store::kNone && cfg_.seal_after > 0 && !st_.batch(t).closed &&
        now_ - st_.batch(t).opened >= cfg_.seal_after)
      seal(s, to_out);
    for (uint32_t h = st_.head(s); h != Store::kNone && recover; h = st_.head(s)) {
      if (!recoverable(st_.batch(h).last_send)) break;
      ++ctr_.recoveries;
      release_head(s, Release::kLost, to_out);
      release_ready(s, to_out);
    }
  }
  uint32_t next_id() {
    const uint32_t id = next_id_;
    next_id_ = next_id_ + 1 == 0 ? 1 : next_id_ + 1;
    return id;
  }
  NFPARK_HOT_INLINE void encode(Handle h, uint32_t at, uint8_t port, uint32_t idx, uint32_t id,
                                uint32_t len, uint32_t parked) {
    ParkTag tag;
    tag.parked = true;
    tag.slice = port;
    tag.index = idx;
    tag.generation = id;
    tag.orig_len = uint16_t(std::min<uint32_t>(len, kMaxTaggedFrame));  // whole ones may be more
    tag.parked_len = uint16_t(parked);                                  // 0: a queued whole packet
    codec_.encode_nfpark(tag, B::data(h) + at);                         // codec_ is kNfpark
  }
  void hold(uint32_t bytes) {
    ctr_.held_pkts++;
    ctr_.held_bytes += bytes;
    ctr_.peak_pkts = std::max(ctr_.peak_pkts, ctr_.held_pkts);
    ctr_.peak_bytes = std::max(ctr_.peak_bytes, ctr_.held_bytes);
  }
  void unhold(uint32_t bytes) {
    ctr_.held_pkts--;
    ctr_.held_bytes -= bytes;
  }
  bool refuse(uint32_t s, Emitter<Handle>& to_out) {
    ++ctr_.refused;
    seal(s, to_out);
    return false;
  }
  // Closes slice s's open batch; it may be complete already.
  void seal(uint32_t s, Emitter<Handle>& to_out) {
    if (!st_.seal_tail(s)) return;
    ++ctr_.batches_sealed;
    const uint32_t t = st_.tail(s);
    if (Store::complete(st_.batch(t))) completed(t, to_out);
  }
  // Batch q just became complete: it leaves now if it is its slice's head, else later.
  void completed(uint32_t q, Emitter<Handle>& to_out) {
    const uint32_t s = st_.batch(q).slice;
    if (st_.head(s) != q) {
      ++ctr_.batches_waited;
      return;
    }
    release_ready(s, to_out);
  }
  // Releases complete batches from the head of slice s.
  void release_ready(uint32_t s, Emitter<Handle>& to_out) {
    while (st_.head(s) != Store::kNone && Store::complete(st_.batch(st_.head(s)))) {
      ++ctr_.batches_complete;
      release_head(s, Release::kComplete, to_out);
    }
  }
  // Seals slice s's open batch and releases all its batches: complete ones as ready, the others
  // as recoveries (counted in ctr_.recoveries and in `why`: idle NF, server down).
  void release_slice(uint32_t s, uint64_t& why, Emitter<Handle>& to_out) {
    if (st_.seal_tail(s)) ++ctr_.batches_sealed;
    while (st_.head(s) != Store::kNone) {
      if (Store::complete(st_.batch(st_.head(s)))) {
        release_ready(s, to_out);
        continue;
      }
      ++ctr_.recoveries;
      ++why;
      release_head(s, Release::kLost, to_out);
    }
  }
  // Resumes slice s's head batch: its packets leave in FIFO order (P4 PacketReconstruct), each
  // rebuilt by reconstruct() when the store lets it out.
  void release_head(uint32_t s, Release why, Emitter<Handle>& to_out) {
    const uint32_t q = st_.head(s);
    const uint32_t n = st_.batch(q).count;
    for (uint32_t i = 0; i < n; ++i) {
      auto& e = st_.entry(q, i);
      auto& sl = st_.slot(e.idx);
      Leaving l{e.pkt, B::null(), e.bytes, e.hdr_len, 0, false, false, why};
      if (sl.id != e.id) {  // never: an entry in use is not handed out again (kept as a guard)
        l.id_mismatch = true;
        store_.leave(*this, q, l, to_out);
        continue;
      }
      l.hdr = sl.hdr;
      l.hdr_len = sl.hdr_len;
      l.dropped = sl.dropped;
      sl.hdr = B::null();
      store_.leave(*this, q, l, to_out);
      st_.free_slot(e.idx);
    }
    st_.pop_head(s, store_.resume(q, s));
  }
  // A packet joined its slice's open batch: a new batch pauses its queue.
  void place(const typename Store::Added& at, Handle pkt) {
    if (at.opened) store_.pause(at.queue);
    if (pkt != B::null()) store_.hold(at.queue, pkt);
  }

  void drop(Handle pkt, uint64_t& counter) {
    ++counter;
    B::free(pkt);
  }

  QueueMemConfig cfg_;
  TagCodec codec_;
  Store st_;
  LossEvidence evidence_;  // when headers sent after a given one first came back
  static constexpr Nanos kNoTime = INT64_MIN;
  Nanos now_ = kNoTime;      // the last poll()'s time (split() stamps batches with it)
  uint64_t lost_below_ = 0;  // this poll(): head batches sent below it are recoverable
  bool clock_back_ = false;  // poll() once went back in time: it visits every slice
  uint64_t sent_ = 0;        // packets queued so far (send numbers)
  uint64_t back_ = 0;        // highest send number whose header is back (loss evidence)
  uint32_t next_id_ = 1;
  std::vector<uint32_t> due_;  // poll(): slices with a batch due for sealing or recovery
  QueueMemCounters ctr_;
  S store_;
};

}  // namespace nfpark::park
