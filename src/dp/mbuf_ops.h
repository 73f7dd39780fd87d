// MbufOps: the parking logic's buffer operations (park/buffer_ops.h) on DPDK mbufs.
//
// A header packet never copies payload bytes. Three shapes, cheapest first:
//  - in place (nothing of the payload travels): the original itself is lent as the header
//    packet. Its headers move into headroom to open the tag's gap and its length is cut to
//    headers + tag; the payload stays in the buffer past the end. No mbuf is allocated.
//  - lent tail (the rest of the payload travels, original in one segment): a header mbuf holds
//    headers + tag and is chained to the original, whose start moves past the parked bytes.
//  - referenced tail (original in several segments): indirect mbufs attached to the original.
// A lent original has reference count 2 (the slot's and the header packet's); its own view is
// remembered in a Lent record the park layer keeps in the slot (not in the mbuf: the mbuf's
// second cache line would be one more miss per packet). rejoin() restores it at the merge with
// plain stores when both references are the merge's own (in-process), or after the header
// packet left the process (memif, af_packet: the port copied and freed it). Tags are inserted
// and removed by moving the headers within the mbuf's headroom.
#pragma once
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include <cstdint>

#include "core/bytes.h"
#include "park/buffer_ops.h"

namespace nfpark::dp {

struct MbufPools {
  rte_mempool* packets = nullptr;   // whole frames (from the wire)
  rte_mempool* headers = nullptr;   // header packets (small data room)
  rte_mempool* indirect = nullptr;  // indirect mbufs referencing payload bytes (no data room)
};

// Per-packet metadata kept in mbuf dynamic fields: the input sequence number, so the output
// writer can stamp each packet with its input timestamp (and tests can match packets).
// Its time: the input packet's timestamp (trace time), which the writer stamps on the output and
// the NF server hands its chain as `now` when replaying a trace — so meters, rate limiters and
// Reframer see the trace's time, whatever the replay speed, and every run is repeatable.
// Its cut: the bytes of the frame on the wire that the capture did not keep (caplen < wire
// length, e.g. a header-only trace), so the NFs count real bytes (B::cut_len) and the writer puts
// the wire length back in the output pcap. Bytes missing at the end, so header edits, tags and
// splits never change it. None of the three crosses a process boundary: a port that is not an
// in-process ring hands out packets whose metadata is reset (seq kUnknown, ts 0, cut 0).
struct MbufMeta {
  static int offset;  // dynfield offsets, registered by register_meta()
  static int ts_offset;
  static int cut_offset;
  static int server_offset;
  static bool register_meta();
  static uint64_t& seq(rte_mbuf* m) { return *RTE_MBUF_DYNFIELD(m, offset, uint64_t*); }
  static int64_t& ts(rte_mbuf* m) { return *RTE_MBUF_DYNFIELD(m, ts_offset, int64_t*); }
  static uint32_t& cut(rte_mbuf* m) { return *RTE_MBUF_DYNFIELD(m, cut_offset, uint32_t*); }
  // The NF server a packet goes to (switch with several NF servers; 0 with one).
  static uint32_t& server(rte_mbuf* m) { return *RTE_MBUF_DYNFIELD(m, server_offset, uint32_t*); }
  static void copy(rte_mbuf* to, rte_mbuf* from) {
    seq(to) = seq(from);
    ts(to) = ts(from);
    cut(to) = cut(from);
    server(to) = server(from);
  }
  // A packet that came from another process or the wire: nothing of ours travelled with it.
  static void reset(rte_mbuf* m) {
    seq(m) = kUnknown;
    ts(m) = 0;
    cut(m) = 0;
    server(m) = 0;
  }
  // A packet that came from another process (its sequence number did not travel with it).
  static constexpr uint64_t kUnknown = ~0ull;
};

struct MbufOps {
  using Handle = rte_mbuf*;
  static inline MbufPools pools;
  // The view a lent original had before make_header changed it.
  struct Lent {
    enum Kind : uint8_t { kNone, kTail, kInPlace };
    uint16_t data_off = 0, data_len = 0;
    Kind kind = kNone;
  };

  static Handle null() { return nullptr; }
  static uint8_t* data(Handle m) { return rte_pktmbuf_mtod(m, uint8_t*); }
  static uint32_t head_len(Handle m) { return m->data_len; }
  static uint32_t pkt_len(Handle m) { return m->pkt_len; }
  static uint32_t cut_len(Handle m) { return MbufMeta::cut(m); }
  // Replaying a trace: the packet's own trace time (NfBurst's chain clock, park/nf_burst.h).
  static int64_t trace_ts(Handle m) { return MbufMeta::ts(m); }
  // The in-place cases are inline (they are the hot path); the rest is in mbuf_ops.cc.
  NFPARK_HOT_INLINE static Handle make_header(Handle orig, uint32_t hdr, uint32_t gap,
                                              uint32_t tail_off, uint32_t tail_len, Lent* lent) {
    if (lent && tail_len == 0 && hdr <= orig->data_len && can_lend(orig) && orig->data_off >= gap) {
      *lent = {orig->data_off, orig->data_len, Lent::kInPlace};
      uint8_t* const d = data(orig);
      move_bytes(d - gap, d, hdr);  // the headers step back into headroom: the tag's gap
      orig->data_off = uint16_t(orig->data_off - gap);
      orig->data_len = uint16_t(hdr + gap);
      orig->pkt_len = hdr + gap;
      rte_mbuf_refcnt_set(orig, 2);  // was 1 (can_lend): the slot's reference and the NF's
      return orig;
    }
    return make_header_segment(orig, hdr, gap, tail_off, tail_len, lent);
  }
  static uint8_t* open_gap(Handle m, uint32_t at, uint32_t n) {
    if (at > m->data_len) return nullptr;
    uint8_t* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_prepend(m, uint16_t(n)));
    if (!p) return nullptr;
    move_bytes(p, p + n, at);
    return p + at;
  }
  static void close_gap(Handle m, uint32_t at, uint32_t n) {
    uint8_t* p = data(m);
    move_bytes(p + n, p, at);
    rte_pktmbuf_adj(m, uint16_t(n));
  }
  NFPARK_HOT_INLINE static park::Rejoin rejoin(Handle parked, uint32_t hdr_len, Lent& l,
                                               Handle returned, uint32_t at) {
    if (returned != parked) {
      // Lent as the tail of `returned` and back in this process: the NF's headers go in front of
      // the parked bytes and the header mbuf is freed as one segment. Anything else (a copy, a
      // packet from another process, a chain changed on the way) takes the general path.
      if (l.kind != Lent::kTail || returned->next != parked || returned->nb_segs != 2 ||
          parked->nb_segs != 1 || rte_mbuf_refcnt_read(parked) != 2 ||
          !restore(parked, hdr_len, l, data(returned), at))
        return rejoin_copy(parked, hdr_len, l, returned, at);
      returned->next = nullptr;
      returned->nb_segs = 1;
      rte_pktmbuf_free_seg(returned);
      return park::Rejoin::kOk;
    }
    // Lent in place and back in this process: move the NF's headers up to the payload.
    if (l.kind != Lent::kInPlace || rte_mbuf_refcnt_read(parked) != 2 || parked->nb_segs != 1)
      return park::Rejoin::kLent;  // not as make_header left it: keep it out of the merge
    if (restore(parked, hdr_len, l, data(parked), at)) return park::Rejoin::kOk;
    l.kind = Lent::kNone;
    rte_mbuf_refcnt_set(parked, 1);  // one reference consumed: `parked` is the caller's to free
    return park::Rejoin::kNoRoom;
  }
  // For a lent original back in this process, both its references the merge's own: writes the
  // `at` header bytes at `src` right in front of the parked payload (which never moved) and gives
  // `parked` its whole view back, reference count 1 with a plain store. False, changing nothing,
  // when the headers do not fit in front of the payload.
  NFPARK_HOT_INLINE static bool restore(Handle parked, uint32_t hdr_len, Lent& l,
                                        const uint8_t* src, uint32_t at) {
    const uint32_t payload_off = uint32_t(l.data_off) + hdr_len;
    if (at > payload_off) return false;
    move_bytes(static_cast<uint8_t*>(parked->buf_addr) + payload_off - at, src, at);
    parked->data_off = uint16_t(payload_off - at);
    parked->data_len = uint16_t(at + l.data_len - hdr_len);
    parked->pkt_len = parked->data_len;
    rte_mbuf_refcnt_set(parked, 1);
    l.kind = Lent::kNone;
    return true;
  }

  static bool carries(Handle returned, Handle parked) {
    return returned == parked || returned->next == parked;
  }
  static void trim(Handle m, uint32_t len);
  static void free(Handle m) { rte_pktmbuf_free(m); }

  // Takes a lent `orig` back from `returned` (unchaining it when it is returned's tail) and gives
  // it its own view again (`l` as make_header left it). False while `orig` is lent to another
  // packet in flight. Not for an original lent in place and back itself (rejoin handles that).
  static bool reclaim(Handle orig, Lent& l, Handle returned);
  // Writes src[0, new_len) over m[0, old_len).
  static bool replace_head(Handle m, uint32_t old_len, const uint8_t* src, uint32_t new_len);

  // The original can be lent (its fields are about to change): one segment, nobody else holds it.
  static bool can_lend(Handle orig) {
    return orig->nb_segs == 1 && rte_mbuf_refcnt_read(orig) == 1;
  }
  // make_header with a header mbuf: the tail lent (one segment) or referenced (indirect mbufs).
  static Handle make_header_segment(Handle orig, uint32_t hdr, uint32_t gap, uint32_t tail_off,
                                    uint32_t tail_len, Lent* lent);
  // rejoin when `returned` is not `parked` itself: header bytes copied, `returned` freed.
  static park::Rejoin rejoin_copy(Handle parked, uint32_t hdr_len, Lent& l, Handle returned,
                                  uint32_t at);
  // Appends orig[off, off+len) to `h` as indirect segments (no copy). False if out of mbufs.
  static bool append_ref(Handle h, Handle orig, uint32_t off, uint32_t len);
};
static_assert(park::BufferOps<MbufOps>);

}  // namespace nfpark::dp
