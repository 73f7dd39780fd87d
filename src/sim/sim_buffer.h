// SimBuffer: the parking logic's buffer operations (park/buffer_ops.h) on simulator records, so
// PayloadPark, QUEUE-MEM, NFSlicer and the NF endpoint run unchanged in virtual time.
//
// A record holds a frame's first bytes and its length (packet.h). A header packet copies the
// headers (a few dozen bytes) and whatever of the travelling tail is present; the rest of the
// tail is a length, as the payload is. So make_header never lends the original (Lent is empty,
// carries() is false: PayloadPark's merge takes its checked path), and rejoin writes the NF's
// headers in front of the parked record's bytes. Tags go into the record's headroom, as in an
// mbuf. Metadata (sequence, flow, ports, arrival time) travels with every copy. A record carries
// the parse of its bytes from the stage that made them to the next one that reads them
// (take_layout / carry_layout); every operation here that changes bytes or lengths forgets it.
// A synthetic source's record also carries its flow key's hash beside that first parse
// (take_flow_hash): QUEUE-MEM's split need not extract and hash the key.
#pragma once
#include <algorithm>
#include <cstring>

#include "core/bytes.h"
#include "park/buffer_ops.h"
#include "sim/packet.h"

namespace nfpark::sim {

struct SimBuffer {
  using Handle = Packet*;
  struct Lent {};

  static Handle null() { return nullptr; }
  static uint8_t* data(Handle p) { return p->data(); }
  static uint32_t head_len(Handle p) { return p->head; }
  static uint32_t pkt_len(Handle p) { return p->len; }
  // A record's length is the frame's length on the wire (the payload is a number, never cut).
  static uint32_t cut_len(Handle) { return 0; }

  static Handle make_header(Handle o, uint32_t hdr, uint32_t gap, uint32_t tail_off,
                            uint32_t tail_len, Lent*) {
    const uint32_t present = o->head > tail_off ? std::min(o->head - tail_off, tail_len) : 0;
    const uint32_t n = hdr + gap + present;
    PacketPool* pool = o->pool();
    if (n > pool->limit()) return nullptr;  // the run's record size decides, not the pool's
    Packet* h = pool->for_header(n)->alloc();
    if (!h) return nullptr;
    copy_meta(h, o);
    const uint8_t* from = o->data();
    uint8_t* to = h->data();
    move_bytes(to, from, hdr);  // inline for headers (<= 128 B)
    // the gap is left as it is: the caller writes its tag there
    if (present) std::memcpy(to + hdr + gap, from + tail_off, present);
    h->head = n;
    h->len = hdr + gap + tail_len;
    return h;
  }
  static uint8_t* open_gap(Handle p, uint32_t at, uint32_t n) {
    if (at > p->head || p->headroom() < n) return nullptr;
    p->layout().ip_version = 0;
    p->off -= n;
    uint8_t* d = p->data();
    move_bytes(d, d + n, at);
    p->head += n;
    p->len += n;
    return d + at;
  }
  static void close_gap(Handle p, uint32_t at, uint32_t n) {
    p->layout().ip_version = 0;
    uint8_t* d = p->data();
    move_bytes(d + n, d, at);
    p->off += n;
    p->head -= n;
    p->len -= n;
  }
  // parked[0, hdr_len) becomes returned[0, at); `returned` is freed.
  static park::Rejoin rejoin(Handle parked, uint32_t hdr_len, Lent&, Handle returned, uint32_t at) {
    const uint32_t keep = parked->head > hdr_len ? parked->head - hdr_len : 0;
    uint8_t* start = parked->data() + hdr_len - at;  // new frame start
    if (at > hdr_len + parked->headroom() || at > returned->head) {
      free(returned);
      return park::Rejoin::kNoRoom;
    }
    parked->layout().ip_version = 0;
    move_bytes(start, returned->data(), at);  // in front of the kept bytes
    parked->set_data(start);
    parked->head = at + keep;
    parked->len = parked->len - hdr_len + at;
    free(returned);
    return park::Rejoin::kOk;
  }
  static bool carries(Handle, Handle) { return false; }
  static void trim(Handle p, uint32_t len) {
    p->layout().ip_version = 0;
    p->len = len;
    p->head = std::min(p->head, len);
  }
  static void free(Handle p) { PacketPool::release(p); }
  // A copy of `p` from its pool: the same bytes at the same headroom, its length and metadata
  // (what the dataplane's rte_pktmbuf_copy gives a fault injector's duplicate: a linear packet
  // in host memory, so `user` — a holder's note, e.g. a NIC's — starts at 0). null() when the
  // pool is exhausted.
  static Handle copy(Handle p) {
    Packet* c = p->pool()->alloc();
    if (!c) return nullptr;
    c->off = p->off;
    std::memcpy(c->data(), p->data(), p->head);
    c->head = p->head;
    c->len = p->len;
    copy_meta(c, p);
    return c;
  }
  static bool take_layout(Handle p, PacketLayout& out) {
    CarriedLayout& c = p->layout();
    if (c.ip_version == 0 || p->head < c.payload_off) return false;
    c.restore(p->head, out);
    c.ip_version = 0;
    p->key_hash() = 0;
    return true;
  }
  static void carry_layout(Handle p, const PacketLayout& L) {
    p->key_hash() = 0;  // a stage's parse comes without the source's flow hash
    CarriedLayout& c = p->layout();
    if (!c.keep(L) || p->head < L.payload_off) c.ip_version = 0;
  }
  // The source's flow-key hash, while the record still carries the source's parse (a change to
  // the bytes forgets that parse, and with it the hash); taken once.
  static bool take_flow_hash(Handle p, uint64_t& out) {
    uint64_t& h = p->key_hash();
    if (p->layout().ip_version == 0 || h == 0) return false;
    out = h;
    h = 0;
    return true;
  }

  // Copies the metadata (not the bytes) of `from` into `to`.
  static void copy_meta(Handle to, Handle from) {
    to->seq = from->seq;
    to->flow = from->flow;
    to->t_in = from->t_in;
    to->in_port = from->in_port;
    to->out_port = from->out_port;
    to->queue = from->queue;
  }
};
static_assert(park::BufferOps<SimBuffer> && park::CarriesLayout<SimBuffer> &&
              park::CarriesFlowHash<SimBuffer>);

}  // namespace nfpark::sim
