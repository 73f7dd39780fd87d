// MbufOps: the parking logic's buffer operations (park/buffer_ops.h) on DPDK mbufs.
//
// Header packets are built in a small "header" pool; the payload bytes that travel with them
// (the unparked remainder) are referenced through indirect mbufs attached to the original, never
// copied. Tags are inserted and removed by moving the headers within the mbuf's headroom.
// The pools are per process (set once by the engine before any packet moves).
#pragma once
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include <cstdint>

#include "park/buffer_ops.h"

namespace nfpark::dp {

struct MbufPools {
  rte_mempool* packets = nullptr;   // whole frames (from the wire)
  rte_mempool* headers = nullptr;   // header packets (small data room)
  rte_mempool* indirect = nullptr;  // indirect mbufs referencing payload bytes (no data room)
};

// Per-packet metadata kept in an mbuf dynamic field: the input sequence number, so the output
// writer can stamp each packet with its input timestamp (and tests can match packets).
// Its time: the input packet's timestamp (trace time), which the writer stamps on the output and
// the NF server hands its chain as `now` when replaying a trace — so meters, rate limiters and
// Reframer see the trace's time, whatever the replay speed, and every run is repeatable.
struct MbufMeta {
  static int offset;   // dynfield offset, registered by register_meta()
  static int ts_offset;
  static bool register_meta();
  static uint64_t& seq(rte_mbuf* m) { return *RTE_MBUF_DYNFIELD(m, offset, uint64_t*); }
  static int64_t& ts(rte_mbuf* m) { return *RTE_MBUF_DYNFIELD(m, ts_offset, int64_t*); }
  static void copy(rte_mbuf* to, rte_mbuf* from) {
    seq(to) = seq(from);
    ts(to) = ts(from);
  }
  // A packet that came from another process (its sequence number did not travel with it).
  static constexpr uint64_t kUnknown = ~0ull;
};

struct MbufOps {
  using Handle = rte_mbuf*;
  static inline MbufPools pools;

  static Handle null() { return nullptr; }
  static uint8_t* data(Handle m) { return rte_pktmbuf_mtod(m, uint8_t*); }
  static uint32_t head_len(Handle m) { return m->data_len; }
  static uint32_t pkt_len(Handle m) { return m->pkt_len; }
  static Handle make_header(Handle orig, uint32_t hdr, uint32_t gap, uint32_t tail_off,
                            uint32_t tail_len);
  static uint8_t* open_gap(Handle m, uint32_t at, uint32_t n);
  static void close_gap(Handle m, uint32_t at, uint32_t n);
  static bool replace_head(Handle m, uint32_t old_len, const uint8_t* src, uint32_t new_len);
  static void trim(Handle m, uint32_t len);
  static void free(Handle m) { rte_pktmbuf_free(m); }

  // Appends orig[off, off+len) to `h` as indirect segments (no copy). False if out of mbufs.
  static bool append_ref(Handle h, Handle orig, uint32_t off, uint32_t len);
};
static_assert(park::BufferOps<MbufOps>);

}  // namespace nfpark::dp
