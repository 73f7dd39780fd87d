// PcapWire: the "wire" on both sides of the traffic port when nfpark replays a pcap file.
//   Feeder  input pcap -> mbufs -> the traffic port's RX ring (optionally at the trace's pace)
//   Writer  the traffic port's TX ring -> output pcap, each packet stamped with its input time
// Both are test equipment, not dataplane: they copy bytes in and out as a NIC's wire would.
#pragma once
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/time.h"
#include "dp/mbuf_ops.h"
#include "dp/port.h"
#include "trace/pcap_reader.h"
#include "trace/pcap_writer.h"

namespace nfpark::dp {

// The wire in front of the traffic port: input pcap -> mbufs -> the port's RX ring.
class Feeder {
 public:
  // `primary`: where received frames land (the NIC-memory pool in nicmem mode); when it is
  // empty they land in `pool` instead (nicmem's secondary ring), counted in `fallbacks`.
  Feeder(trace::TraceReader& r, rte_mempool* pool, rte_mempool* primary, rte_ring* ring,
         bool pace)
      : reader_(r), pool_(pool), primary_(primary), ring_(ring), pace_(pace) {}
  void start(Nanos now) { start_ = now; }
  // Enqueues up to one burst; returns packets fed. Sets done() at end of input.
  uint32_t feed(Nanos now) {
    if (done_ || has_pending_) return 0;
    if (rte_ring_free_count(ring_) < kBurst || rte_ring_count(ring_) > 4 * kBurst) return 0;
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
    if (n) {
      unsigned q = rte_ring_enqueue_burst(ring_, reinterpret_cast<void**>(b), n, nullptr);
      for (unsigned i = q; i < n; ++i) rte_pktmbuf_free(b[i]);  // cannot happen: space checked
      packets += q;
    }
    return n;
  }
  bool done() const { return done_ && !has_pending_ && !has_paced_; }
  uint64_t packets = 0, bytes = 0, fallbacks = 0;
  std::string error;

 private:
  rte_mbuf* alloc() {
    if (primary_ != pool_) {
      if (rte_mbuf* m = rte_pktmbuf_alloc(primary_)) return m;
      ++fallbacks;
    }
    return rte_pktmbuf_alloc(pool_);
  }
  rte_mbuf* to_mbuf(const trace::PacketRecord& rec) {
    rte_mbuf* head = alloc();
    if (!head) return nullptr;
    uint32_t off = 0;
    rte_mbuf* last = head;
    while (off < rec.len) {
      rte_mbuf* seg = off == 0 ? head : alloc();
      if (!seg) {
        rte_pktmbuf_free(head);
        return nullptr;
      }
      uint32_t room = rte_pktmbuf_tailroom(seg);
      uint32_t take = rec.len - off < room ? rec.len - off : room;
      std::memcpy(rte_pktmbuf_mtod(seg, uint8_t*), rec.data + off, take);
      seg->data_len = uint16_t(take);
      if (seg != head) {
        last->next = seg;
        head->nb_segs++;
        last = seg;
      }
      off += take;
    }
    head->pkt_len = rec.len;
    MbufMeta::seq(head) = seq_++;
    MbufMeta::ts(head) = rec.ts;
    bytes += rec.len;
    return head;
  }

  trace::TraceReader& reader_;
  rte_mempool *pool_, *primary_;
  rte_ring* ring_;
  uint64_t seq_ = 0;
  bool pace_;
  bool done_ = false, has_pending_ = false, has_paced_ = false;
  trace::PacketRecord pending_, paced_;
  Nanos start_ = 0, first_ts_ = INT64_MIN;

 public:
  // Retry a packet that found the pool empty.
  uint32_t retry() {
    if (!has_pending_) return 0;
    rte_mbuf* m = to_mbuf(pending_);
    if (!m) return 0;
    if (rte_ring_enqueue(ring_, m) != 0) {
      bytes -= m->pkt_len;
      rte_pktmbuf_free(m);
      --seq_;
      return 0;
    }
    has_pending_ = false;
    ++packets;
    return 1;
  }
};

// The wire behind the traffic port: the port's TX ring -> output pcap.
class Writer {
 public:
  Writer(trace::PcapWriter* w, rte_ring* ring) : w_(w), ring_(ring), buf_(16384) {}
  uint32_t drain() {
    rte_mbuf* b[kBurst];
    unsigned n = rte_ring_dequeue_burst(ring_, reinterpret_cast<void**>(b), kBurst, nullptr);
    for (unsigned i = 0; i < n; ++i) {
      rte_mbuf* m = b[i];
      bytes += m->pkt_len;
      if (w_) {
        const uint8_t* d = static_cast<const uint8_t*>(rte_pktmbuf_read(m, 0, m->pkt_len, buf_.data()));
        // Stamp with the input time; a packet whose metadata was lost in another process
        // (whole packets back from an external NF) takes the previous packet's time.
        if (MbufMeta::seq(m) != MbufMeta::kUnknown) last_ts_ = MbufMeta::ts(m);
        if (!w_->write(last_ts_, d, m->pkt_len, m->pkt_len)) failed = true;
      }
      rte_pktmbuf_free(m);
    }
    packets += n;
    return n;
  }
  uint64_t packets = 0, bytes = 0;
  bool failed = false;

 private:
  trace::PcapWriter* w_;
  rte_ring* ring_;
  std::vector<uint8_t> buf_;
  Nanos last_ts_ = 0;
};

}  // namespace nfpark::dp
