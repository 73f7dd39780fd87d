// Element:  QueueMem — QUEUE-MEM: payloads wait in paused per-port queues, headers go to the NF,
//           a queue is resumed when every header of its batch is back (software switch).
// Ports:    traffic in -> split -> NF (headers, whole packets) ; NF -> merge -> traffic out
//           split(pkt, port, to_nf, to_out) · merge(pkt, nf_link, to_out) · drain(to_out)
// Config:   QueueMemConfig: ports (1) · queues per port (31) · slices (6) · batch (20 payloads) ·
//           header_array (94000 entries) · min_payload (64 B) · tag key (none: CRC-32C) · no_split
// Time:     none: batches are released by header count, never by timers (paper §3.3).
// State:    ports x queues FIFOs of <= batch payload handles; header array of header_array
//           slots {id, queue, returned header handle}; a round-robin cursor per (port, slice).
//           At most config.max_held() payloads wait at once.
// Counters: QueueMemCounters (queue_mem_config.h).
// Refs:     QUEUE-MEM §3.2–3.4, App. D (shared/seeds/004_...); Queue-Mem/queue-mem-p4
//           (payload_split.p4, forward_header.p4, store_header.p4, packet_reconstruct.p4);
//           shared/research/anchors_code.md §5; docs/queuemem.md.
//
// Theory of operation
//  Split: a taggable packet (IPv4/IPv6 TCP/UDP, unfragmented) with payload >= min_payload that
//  the no_split filter does not match is split. Its 5-tuple hash picks a slice of the port's
//  queues; the slice's cursor fills one queue with `batch` payloads, then moves to the next
//  queue of the slice (P4 get_queue). The packet gets idx (next entry of the header-array ring)
//  and id (32-bit counter, never 0). The first packet of a batch (HEAD) pauses its queue. If that
//  queue is still PAUSED, a header of its previous batch was lost: the stalled batch is released
//  first (recovery), and the HEAD is then processed as a new packet, so it can never leave with
//  the stale batch. The NF receives headers + a 24-byte nfpark tag {port, idx, id, original
//  length}; the original packet waits, untouched, in the queue. Other packets go whole to the
//  NF: taggable ones with a "not split" tag inserted after their L4 header, the rest as they are.
//  Merge: a header whose tag is valid and whose id is the one its idx was given to is stored at
//  idx and counts for its queue (an NF "drop" flag counts too). When the count reaches `batch`
//  the queue resumes: its payloads leave in FIFO order, each rebuilt with the header stored at
//  its idx if the ids match; a payload whose header never came back (recovery), was flagged
//  "drop", or whose idx was reassigned (header array too small) is dropped and counted.
//  Drain (end of run): every non-empty queue is released as a recovery would; payloads whose
//  header never came back are freed as stranded_at_exit. No queue stays paused.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/flow_key.h"
#include "core/parse.h"
#include "park/buffer_ops.h"
#include "park/emitter.h"
#include "park/payload_park.h"
#include "park/queue_mem_config.h"
#include "park/tag.h"

namespace nfpark::park {

template <BufferOps B>
class QueueMem {
 public:
  using Handle = typename B::Handle;

  explicit QueueMem(const QueueMemConfig& c) : cfg_(c), codec_(TagFormat::kNfpark, c.key) {
    cfg_.queues =
        std::max<uint16_t>(1, cfg_.queues);  // validate() reports these; never divide by 0
    cfg_.slices = std::max<uint16_t>(1, std::min(cfg_.slices, cfg_.queues));
    cfg_.batch = std::max<uint16_t>(1, cfg_.batch);
    cfg_.header_array = std::max<uint32_t>(1, cfg_.header_array);
    queues_.resize(size_t(cfg_.ports) * cfg_.queues);
    payloads_.resize(queues_.size() * cfg_.batch);
    slots_.resize(cfg_.header_array);
    const uint16_t per = cfg_.queues / cfg_.slices;  // last slice takes the remainder (setup.py)
    for (uint8_t p = 0; p < cfg_.ports; ++p)
      for (uint16_t s = 0; s < cfg_.slices; ++s) {
        const uint16_t n = s + 1 == cfg_.slices ? uint16_t(cfg_.queues - per * s) : per;
        cursors_.push_back(
            Cursor{uint32_t(p * cfg_.queues + per * s), n, uint16_t(n - 1), cfg_.batch});
      }
  }
  QueueMem(const QueueMem&) = delete;
  QueueMem& operator=(const QueueMem&) = delete;
  ~QueueMem() {  // frees what drain() did not (uncounted): stored headers and waiting payloads
    for (auto& s : slots_)
      if (s.hdr != B::null()) B::free(s.hdr);
    for (size_t q = 0; q < queues_.size(); ++q)
      for (uint32_t i = 0; i < queues_[q].count; ++i) B::free(payloads_[q * cfg_.batch + i].pkt);
  }

  const QueueMemConfig& config() const { return cfg_; }
  const TagCodec& codec() const { return codec_; }
  const QueueMemCounters& counters() const { return ctr_; }
  void report(const CounterSink& s) const { ctr_.report(s); }
  // Queues still paused (holding a batch). Zero after drain().
  uint32_t paused_queues() const {
    uint32_t n = 0;
    for (auto& q : queues_) n += q.paused;
    return n;
  }

  // Traffic port -> NF. `port` is the output port the switch chose for the packet (its set of
  // payload queues). Pushes a header or a whole packet to `to_nf`; a recovery may push the
  // released stalled batch to `to_out`.
  void split(Handle pkt, uint8_t port, Emitter<Handle>& to_nf, Emitter<Handle>& to_out) {
    ++ctr_.rx;
    uint8_t* d = B::data(pkt);
    const uint32_t len = B::pkt_len(pkt);
    const PacketLayout L = parse_packet(d, B::head_len(pkt));
    if (!taggable(L)) {
      ++ctr_.not_split_untaggable;
      to_nf.push(pkt);
      return;
    }
    const uint32_t hdr = L.payload_off;
    const uint32_t payload = std::min(L.ip_end, len) - hdr;
    if (port >= cfg_.ports) {
      ++ctr_.not_split_no_queue;
    } else if (payload < cfg_.min_payload || payload == 0) {
      ++ctr_.not_split_small;
    } else if (len > kMaxTaggedFrame) {
      ++ctr_.not_split_large;
    } else if (!cfg_.no_split.empty() && cfg_.no_split.match(d, L)) {
      ++ctr_.not_split_filtered;
    } else {
      // Never lent: a batch leaves once every header is back, copies included, and a payload
      // lent to a header still out could not leave then.
      Handle h = B::make_header(pkt, hdr, codec_.size(), hdr, 0, nullptr);
      if (h != B::null()) return enqueue(pkt, h, d, L, port, len, to_nf, to_out);
      ++ctr_.not_split_no_buffer;
    }
    uint8_t* gap = B::open_gap(pkt, hdr, codec_.size());
    if (!gap) return drop(pkt, ctr_.drop_no_headroom);
    ParkTag tag;
    tag.slice = port;
    tag.orig_len = uint16_t(std::min<uint32_t>(len, kMaxTaggedFrame));
    codec_.encode(tag, gap);
    to_nf.push(pkt);
  }

  // NF -> traffic out. `nf_link` names the NF link the packet came from; the tag itself names
  // the port and queue, so it is informational. A header may release a whole batch.
  void merge(Handle pkt, uint8_t nf_link, Emitter<Handle>& to_out) {
    (void)nf_link;
    uint8_t* d = B::data(pkt);
    const PacketLayout L = parse_packet(d, B::head_len(pkt));
    if (!taggable(L)) {
      ++ctr_.untagged_returned;
      to_out.push(pkt);
      return;
    }
    const uint32_t at = L.payload_off;
    const uint32_t avail = B::head_len(pkt) > at ? B::head_len(pkt) - at : 0;
    ParkTag tag;
    if (codec_.decode(d + at, avail, tag) != TagError::kNone) return free_header(pkt, ctr_.bad_tag);
    if (!tag.parked) {
      if (tag.drop) return drop(pkt, ctr_.drop_explicit_whole);
      B::close_gap(pkt, at, codec_.size());
      ++ctr_.returned_whole;
      to_out.push(pkt);
      return;
    }
    if (tag.index >= slots_.size() || tag.slice >= cfg_.ports)
      return free_header(pkt, ctr_.stale_headers);
    Slot& s = slots_[tag.index];
    if (s.id == 0 || s.id != tag.generation || s.queue / cfg_.queues != tag.slice)
      return free_header(pkt, ctr_.stale_headers);  // late (batch gone), replayed or reassigned
    if (s.returned) return free_header(pkt, ctr_.duplicate_headers);
    s.returned = true;
    if (tag.drop) {
      s.dropped = true;
      B::free(pkt);
    } else {
      s.hdr = pkt;
      s.hdr_len = uint16_t(at);
    }
    ++ctr_.headers_returned;
    Queue& q = queues_[s.queue];
    if (++q.returned == cfg_.batch) {  // P4 ForwardHeader: n_processed_hdrs + 1 == batch
      ++ctr_.batches_complete;
      release(s.queue, Release::kComplete, to_out);
    }
  }

  // End of run: releases every queue that still holds payloads (as a recovery would) and frees
  // the payloads whose header never came back (stranded_at_exit). Call after the NF side has
  // returned everything it will return; afterwards nothing is held and no queue is paused.
  void drain(Emitter<Handle>& to_out) {
    for (uint32_t q = 0; q < queues_.size(); ++q)
      if (queues_[q].count) {
        ++ctr_.batches_drained;
        release(q, Release::kDrain, to_out);
      }
    for (auto& c : cursors_) c.filled = cfg_.batch;  // next packet starts a fresh batch
  }

 private:
  enum class Release : uint8_t { kComplete, kRecovery, kDrain };
  struct Payload {
    Handle pkt;
    uint32_t idx, id, bytes;
    uint16_t hdr_len;
  };
  struct Queue {
    uint32_t count = 0;     // payloads waiting (one batch at most)
    uint32_t returned = 0;  // headers of this batch back (n_q^h)
    bool paused = false;    // s_q: PAUSED while a batch waits
  };
  struct Cursor {  // P4 port_queue_info {curr_queue, n_pkts} of one slice
    uint32_t first;
    uint16_t n, cur;
    uint32_t filled;  // payloads in the current batch (n_q); == batch: next packet is a HEAD
  };
  struct Slot {
    uint32_t id = 0;     // id the idx was last given to; 0 = none waiting
    uint32_t queue = 0;  // global queue index of that payload
    Handle hdr = B::null();
    uint16_t hdr_len = 0;
    bool returned = false, dropped = false;
  };

  void enqueue(Handle pkt, Handle h, const uint8_t* d, const PacketLayout& L, uint8_t port,
               uint32_t len, Emitter<Handle>& to_nf, Emitter<Handle>& to_out) {
    FlowKey k;
    extract_flow_key(d, L, k);
    Cursor& c = cursors_[size_t(port) * cfg_.slices + k.hash() % cfg_.slices];
    if (c.filled == cfg_.batch) {
      c.filled = 1;
      c.cur = uint16_t((c.cur + 1) % c.n);
    } else {
      ++c.filled;
    }
    const uint32_t qi = c.first + c.cur;
    Queue& q = queues_[qi];
    if (c.filled == 1) {  // HEAD
      if (q.paused) {     // previous batch not released: a header was lost (§3.3)
        ++ctr_.recoveries;
        ++ctr_.batches_recovered;
        release(qi, Release::kRecovery, to_out);  // then the HEAD goes on as a new packet
      }
      q.paused = true;
      q.returned = 0;
    }
    const uint32_t idx = next_idx_;
    next_idx_ = next_idx_ + 1 == cfg_.header_array ? 0 : next_idx_ + 1;
    const uint32_t id = next_id_;
    next_id_ = next_id_ + 1 == 0 ? 1 : next_id_ + 1;
    Slot& s = slots_[idx];
    if (s.id) ++ctr_.slot_reuses;  // its payload will fail the id check at release
    if (s.hdr != B::null()) B::free(s.hdr);
    s = Slot{id, qi, B::null(), 0, false, false};
    payloads_[size_t(qi) * cfg_.batch + q.count++] =
        Payload{pkt, idx, id, len, uint16_t(L.payload_off)};
    ctr_.held_pkts++;
    ctr_.held_bytes += len;
    ctr_.peak_pkts = std::max(ctr_.peak_pkts, ctr_.held_pkts);
    ctr_.peak_bytes = std::max(ctr_.peak_bytes, ctr_.held_bytes);
    ParkTag tag;
    tag.parked = true;
    tag.slice = port;
    tag.index = idx;
    tag.generation = id;
    tag.orig_len = uint16_t(len);
    tag.parked_len = uint16_t(len - L.payload_off);
    codec_.encode(tag, B::data(h) + L.payload_off);
    ++ctr_.splits;
    to_nf.push(h);
  }

  // Resumes queue `qi`: its payloads leave in FIFO order (P4 PacketReconstruct).
  void release(uint32_t qi, Release why, Emitter<Handle>& to_out) {
    Queue& q = queues_[qi];
    for (uint32_t i = 0; i < q.count; ++i) {
      Payload& p = payloads_[size_t(qi) * cfg_.batch + i];
      ctr_.held_pkts--;
      ctr_.held_bytes -= p.bytes;
      Slot& s = slots_[p.idx];
      if (s.id != p.id) {  // idx reassigned to a later packet: never merge
        drop(p.pkt, ctr_.drop_id_mismatch);
        continue;
      }
      if (s.dropped) {
        drop(p.pkt, ctr_.drop_explicit);
      } else if (s.hdr == B::null()) {
        drop(p.pkt, why == Release::kDrain ? ctr_.stranded_at_exit : ctr_.drop_header_lost);
      } else {
        typename B::Lent never_lent{};
        const Rejoin r = B::rejoin(p.pkt, p.hdr_len, never_lent, s.hdr, s.hdr_len);
        if (r != Rejoin::kLent) s.hdr = B::null();  // consumed
        if (r == Rejoin::kOk) {
          ++ctr_.released;
          to_out.push(p.pkt);
        } else {  // no room, or a copy came back while its own header is still out
          drop(p.pkt, r == Rejoin::kNoRoom ? ctr_.drop_no_headroom : ctr_.drop_header_lost);
        }
      }
      if (s.hdr != B::null()) B::free(s.hdr);
      s = Slot{};
    }
    q = Queue{};  // RESUMED, empty
  }

  void drop(Handle pkt, uint64_t& counter) {
    ++counter;
    B::free(pkt);
  }
  void free_header(Handle pkt, uint64_t& counter) { drop(pkt, counter); }

  QueueMemConfig cfg_;
  TagCodec codec_;
  std::vector<Queue> queues_;      // [port * queues + q]
  std::vector<Payload> payloads_;  // [queue * batch + i]: each queue's FIFO
  std::vector<Cursor> cursors_;    // [port * slices + slice]
  std::vector<Slot> slots_;        // the header array
  uint32_t next_idx_ = 0;
  uint32_t next_id_ = 1;
  QueueMemCounters ctr_;
};

}  // namespace nfpark::park
