// VecBuffer: a BufferOps implementation over heap vectors, for unit tests of the parking logic
// without DPDK. It counts live packets so tests can assert nothing leaked.
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

#include "park/buffer_ops.h"

namespace nfpark::park::testing {

struct VecPkt {
  std::vector<uint8_t> bytes;
  uint64_t id = 0;   // test bookkeeping
  uint32_t cut = 0;  // wire bytes the capture cut off (B::cut_len)
};

struct VecBuffer {
  using Handle = VecPkt*;
  static inline int64_t live = 0;
  static Handle make(std::vector<uint8_t> b, uint64_t id = 0) {
    ++live;
    return new VecPkt{std::move(b), id};
  }
  static Handle null() { return nullptr; }
  static uint8_t* data(Handle h) { return h->bytes.data(); }
  static uint32_t head_len(Handle h) { return uint32_t(h->bytes.size()); }
  static uint32_t pkt_len(Handle h) { return uint32_t(h->bytes.size()); }
  static uint32_t cut_len(Handle h) { return h->cut; }
  struct Lent {};  // never lends: make_header copies
  static Handle make_header(Handle o, uint32_t hdr, uint32_t gap, uint32_t tail_off,
                            uint32_t tail_len, Lent* = nullptr) {
    std::vector<uint8_t> b(o->bytes.begin(), o->bytes.begin() + hdr);
    b.resize(hdr + gap);
    b.insert(b.end(), o->bytes.begin() + tail_off, o->bytes.begin() + tail_off + tail_len);
    Handle h = make(std::move(b), o->id);
    h->cut = o->cut;
    return h;
  }
  static uint8_t* open_gap(Handle h, uint32_t at, uint32_t n) {
    h->bytes.insert(h->bytes.begin() + at, n, 0);
    return h->bytes.data() + at;
  }
  static void close_gap(Handle h, uint32_t at, uint32_t n) {
    h->bytes.erase(h->bytes.begin() + at, h->bytes.begin() + at + n);
  }
  static Rejoin rejoin(Handle d, uint32_t old_len, Lent&, Handle r, uint32_t at) {
    d->bytes.erase(d->bytes.begin(), d->bytes.begin() + old_len);
    d->bytes.insert(d->bytes.begin(), r->bytes.begin(), r->bytes.begin() + at);
    free(r);
    return Rejoin::kOk;
  }
  static bool carries(Handle, Handle) { return false; }  // make_header copies
  static void trim(Handle h, uint32_t len) { h->bytes.resize(len); }
  static void free(Handle h) {
    --live;
    delete h;
  }
};
static_assert(BufferOps<VecBuffer>);

}  // namespace nfpark::park::testing
