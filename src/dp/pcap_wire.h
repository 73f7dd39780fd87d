// PcapWire: the "wire" on both sides of the traffic port when nfpark replays a pcap file.
//   Feeder  input pcap -> mbufs -> the traffic port's RX ring (optionally at the trace's pace)
//   Writer  the traffic port's TX ring -> output pcap, each packet stamped with its input time
// Both are test equipment, not dataplane: they copy bytes in and out as a NIC's wire would.
// Frames of any length up to the pcap's snaplen (trace::kMaxFrame, 256 KiB) travel: the feeder
// builds a chain of as many mbufs as a frame needs, the writer writes a chain segment by segment.
// Many workers: the feeder plays a NIC's RSS — it puts each frame on the RX ring of the worker
// its flow belongs to (core/shard.h) — and the writer drains every worker's TX ring; a flow's
// packets keep their order, flows of different workers interleave as their workers run.
// Truncated records: the feeder keeps what the capture cut off in MbufMeta::cut (the wire length
// travels with the packet), or with `pad` rebuilds the frame to its wire length (trace/pad.h).
#pragma once
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/shard.h"
#include "core/time.h"
#include "dp/mbuf_ops.h"
#include "dp/port.h"
#include "trace/link_layer.h"
#include "trace/pad.h"
#include "trace/pcap_reader.h"
#include "trace/pcap_writer.h"

namespace nfpark::dp {

// The wire in front of the traffic port: input pcap -> mbufs -> the port's RX ring.
class Feeder {
 public:
  // `primary`: where received frames land (the NIC-memory pool in nicmem mode); when it is
  // empty they land in `pool` instead (nicmem's secondary ring), counted in `fallbacks`.
  // `pad`: rebuild truncated records to their wire length (nfpark run --pad).
  Feeder(trace::TraceReader& r, rte_mempool* pool, rte_mempool* primary, rte_ring* ring, bool pace,
         bool pad = false)
      : reader_(r), pool_(pool), primary_(primary), ring_(ring), rings_{ring}, pace_(pace) {
    if (pad) padded_.resize(trace::kMaxFrame);
  }
  // Many workers: frame f goes to rings[shard.of(f)] (rings.size() == shard.workers()).
  void shard_over(const Shard& shard, std::vector<rte_ring*> rings) {
    shard_ = shard;
    rings_ = std::move(rings);
    ring_ = rings_[0];
  }
  void start(Nanos now) { start_ = now; }
  // Enqueues up to one burst; returns packets fed. Sets done() at end of input.
  uint32_t feed(Nanos now) {
    if (done_ || has_pending_) return 0;
    for (rte_ring* r : rings_)
      if (rte_ring_free_count(r) < kBurst || rte_ring_count(r) > 4 * kBurst) return 0;
    rte_mbuf* b[kBurst];
    uint32_t n = 0;
    trace::PacketRecord rec;
    while (n < kBurst) {
      if (has_paced_) {  // a packet read earlier, waiting for its time on the wire
        if (now - start_ < paced_.ts - first_ts_) break;
        rec = paced_;
        has_paced_ = false;
      } else {
        auto st = reader_.next(rec);
        if (st != trace::ReadStatus::kPacket) {
          done_ = true;
          if (st == trace::ReadStatus::kError) error = reader_.error();
          break;
        }
        if (pace_) {
          if (first_ts_ == INT64_MIN) first_ts_ = rec.ts;
          if (now - start_ < rec.ts - first_ts_) {
            paced_ = rec;
            has_paced_ = true;
            break;
          }
        }
      }
      rte_mbuf* m = to_mbuf(rec);
      if (!m) {  // pool empty: the pipeline holds too much; retry this packet later
        pending_ = rec;
        has_pending_ = true;
        break;
      }
      b[n++] = m;
    }
    if (n && rings_.size() == 1) {
      unsigned q = rte_ring_enqueue_burst(ring_, reinterpret_cast<void**>(b), n, nullptr);
      for (unsigned i = q; i < n; ++i) rte_pktmbuf_free(b[i]);  // cannot happen: space checked
      packets += q;
    } else if (n) {
      for (uint32_t i = 0; i < n; ++i) {
        if (rte_ring_enqueue(rings_[worker_of(b[i])], b[i]) == 0)
          ++packets;
        else
          rte_pktmbuf_free(b[i]);  // cannot happen: space checked
      }
    }
    return n;
  }
  bool done() const { return done_ && !has_pending_ && !has_paced_; }
  // A frame waits for mbufs: the pool ran dry (a large frame needs one mbuf per 2 KiB).
  bool starved() const { return has_pending_; }
  uint64_t packets = 0, bytes = 0, fallbacks = 0;
  uint64_t padded = 0;  // truncated records rebuilt to their wire length (pad)
  std::string error;

 private:
  uint32_t worker_of(rte_mbuf* m) const {
    return rings_.size() == 1 ? 0 : shard_.of(rte_pktmbuf_mtod(m, const uint8_t*), m->data_len);
  }
  rte_mbuf* alloc() {
    if (primary_ != pool_) {
      if (rte_mbuf* m = rte_pktmbuf_alloc(primary_)) return m;
      ++fallbacks;
    }
    return rte_pktmbuf_alloc(pool_);
  }
  rte_mbuf* to_mbuf(const trace::PacketRecord& rec) {
    const uint8_t* data = rec.data;
    uint32_t len = rec.len, cut = rec.wire_len - rec.len;
    if (!padded_.empty() && cut) {
      const trace::PadResult p = trace::pad_frame(rec.data, rec.len, rec.wire_len, padded_.data());
      data = padded_.data();
      len = p.len;
      cut = p.cut;
    }
    rte_mbuf* head = alloc();
    if (!head) return nullptr;
    uint32_t off = 0;
    rte_mbuf* last = head;
    while (off < len) {
      rte_mbuf* seg = off == 0 ? head : alloc();
      if (!seg) {
        rte_pktmbuf_free(head);
        return nullptr;
      }
      uint32_t room = rte_pktmbuf_tailroom(seg);
      uint32_t take = len - off < room ? len - off : room;
      std::memcpy(rte_pktmbuf_mtod(seg, uint8_t*), data + off, take);
      seg->data_len = uint16_t(take);
      if (seg != head) {
        last->next = seg;
        head->nb_segs++;
        last = seg;
      }
      off += take;
    }
    head->pkt_len = len;
    MbufMeta::seq(head) = seq_++;
    MbufMeta::ts(head) = rec.ts;
    MbufMeta::cut(head) = cut;
    if (len != rec.len) ++padded;
    bytes += len;
    return head;
  }

  trace::TraceReader& reader_;
  rte_mempool *pool_, *primary_;
  rte_ring* ring_;
  std::vector<rte_ring*> rings_;  // one per worker
  Shard shard_;
  uint64_t seq_ = 0;
  bool pace_;
  bool done_ = false, has_pending_ = false, has_paced_ = false;
  trace::PacketRecord pending_, paced_;
  std::vector<uint8_t> padded_;  // a padded frame (pad only)
  Nanos start_ = 0, first_ts_ = INT64_MIN;

 public:
  // Retry a packet that found the pool empty.
  uint32_t retry() {
    if (!has_pending_) return 0;
    rte_mbuf* m = to_mbuf(pending_);
    if (!m) return 0;
    if (rte_ring_enqueue(rings_[worker_of(m)], m) != 0) {
      bytes -= m->pkt_len;
      if (m->pkt_len != pending_.len) --padded;
      rte_pktmbuf_free(m);
      --seq_;
      return 0;
    }
    has_pending_ = false;
    ++packets;
    return 1;
  }
};

// The wire behind the traffic port: the port's TX ring -> output pcap. Each frame is written
// segment by segment, straight from the mbufs (any length, no bounded copy), with its wire
// length: the bytes it holds plus those the capture had cut off (MbufMeta::cut). A frame longer
// than the file's snaplen (trace::kMaxFrame) is written cut there, the rest counted as not
// captured.
class Writer {
 public:
  Writer(trace::PcapWriter* w, rte_ring* ring) : w_(w), rings_{ring} {}
  // Many workers: drains each worker's TX ring in turn.
  void drain_all(std::vector<rte_ring*> rings) { rings_ = std::move(rings); }
  uint32_t drain() {
    uint32_t n = 0;
    for (rte_ring* r : rings_) n += drain(r);
    return n;
  }
  uint64_t packets = 0, bytes = 0;
  bool failed = false;

 private:
  uint32_t drain(rte_ring* ring) {
    rte_mbuf* b[kBurst];
    unsigned n = rte_ring_dequeue_burst(ring, reinterpret_cast<void**>(b), kBurst, nullptr);
    for (unsigned i = 0; i < n; ++i) {
      rte_mbuf* m = b[i];
      bytes += m->pkt_len;
      if (w_ && !write(m)) failed = true;
      rte_pktmbuf_free(m);
    }
    packets += n;
    return n;
  }
  bool write(rte_mbuf* m) {
    // Stamp with the input time; a packet whose metadata was lost in another process (whole
    // packets back from an external NF) takes the previous packet's time.
    if (MbufMeta::seq(m) != MbufMeta::kUnknown) last_ts_ = MbufMeta::ts(m);
    const uint32_t len = m->pkt_len < trace::kMaxFrame ? m->pkt_len : trace::kMaxFrame;
    if (!w_->begin(last_ts_, len, m->pkt_len + MbufMeta::cut(m))) return false;
    uint32_t left = len;
    for (const rte_mbuf* s = m; s && left; s = s->next) {
      const uint32_t take = s->data_len < left ? s->data_len : left;
      if (!w_->append(rte_pktmbuf_mtod(s, const uint8_t*), take)) return false;
      left -= take;
    }
    return left == 0;
  }

  trace::PcapWriter* w_;
  std::vector<rte_ring*> rings_;
  Nanos last_ts_ = 0;
};

}  // namespace nfpark::dp
