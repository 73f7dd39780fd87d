// TrackBuffer: a checking BufferOps (park/buffer_ops.h) for fuzzing and soaking the parking
// modes without DPDK. Like tests/park/vec_buffer.h it keeps packets in heap vectors, but it also
// knows where every byte came from, and it checks every call against the contract:
//
//  - Every byte carries an Origin: a byte of traffic frame `id` at offset `off` (kFrame), a tag
//    byte written into a gap the switch opened for frame `id` (kTag), or a byte an NF wrote
//    (kNf). make_header/rejoin/gaps move origins with the bytes; raw writes through data() keep
//    them (the switch writes headers, tags and DSCP that way).
//  - rejoin() — the one place a payload meets a header — calls the harness's merge check
//    (World::on_rejoin) with the parked original and the returned header packet, before it
//    changes anything: the harness decides whether that header was entitled to that payload.
//  - Handles are never reused within an input; a call on a freed handle, a range outside the
//    packet, or freeing twice fails at once (FUZZ_CHECK) with the call named. Freed packets
//    release their bytes, so a stale data() pointer is a heap-use-after-free for ASan.
//  - Engine limits as MbufOps has them: 128 bytes of headroom per buffer (open_gap and a rejoin
//    with longer headers fail when it runs out), a contiguous first segment (head_len may be
//    shorter than pkt_len: a header packet's first segment ends with its tag), and header
//    buffers that can run out (make_header returns null when World::fail_alloc is set).
// It never lends an original (B::carries is false): the lending paths are MbufOps' own, covered
// on real mbufs by tests/dp/park_mbuf_fuzz_test.cc.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "fuzz/check.h"
#include "park/buffer_ops.h"

namespace nfpark::fuzz {

enum class Src : uint8_t { kFrame, kTag, kNf };
struct Origin {
  Src src = Src::kNf;
  uint32_t id = 0;   // traffic frame (kFrame: whose byte; kTag: whose record)
  uint32_t off = 0;  // kFrame: offset in that frame
};

enum class Kind : uint8_t { kFrame, kHeader, kCopy };
struct TPkt {
  std::vector<uint8_t> bytes;
  std::vector<Origin> from;
  uint32_t head = 0;  // contiguous bytes at data() (the first segment)
  uint32_t headroom = 128;
  uint32_t id = 0;      // the traffic frame this packet is, was made from, or copies
  uint64_t serial = 0;  // unique within an input
  Kind kind = Kind::kFrame;
  bool live = true;
  bool reshaped = false;  // an NF inserted, cut or moved bytes (not just overwrote some)
  uint8_t lane = 0;       // harness bookkeeping: the lane it went to the NF on
  uint32_t cut = 0;       // wire bytes the capture cut off (B::cut_len)
  uint32_t size() const { return uint32_t(bytes.size()); }
};

struct TrackBuffer;

// Per-input state: every packet made, and the harness's hooks. One World is current at a time.
struct World {
  std::vector<std::unique_ptr<TPkt>> all;
  int64_t live = 0;
  bool fail_alloc = false;  // the next make_header finds no buffer
  bool fail_gap = false;    // the next open_gap finds no headroom
  // Called by rejoin(parked, ., ., returned, at) before it changes anything.
  std::function<void(const TPkt& parked, const TPkt& returned, uint32_t at)> on_rejoin;

  TPkt* make(std::vector<uint8_t> b, uint32_t id, Kind k) {
    auto p = std::make_unique<TPkt>();
    p->from.resize(b.size());
    for (uint32_t i = 0; i < b.size(); ++i) p->from[i] = {Src::kFrame, id, i};
    p->head = uint32_t(b.size());
    p->bytes = std::move(b);
    p->id = id;
    p->kind = k;
    p->serial = all.size();
    ++live;
    all.push_back(std::move(p));
    return all.back().get();
  }
  // A deep copy (an NF duplicating a packet): same bytes and origins, a new handle.
  TPkt* copy(const TPkt& s) {
    TPkt* c = make({}, s.id, Kind::kCopy);
    c->bytes = s.bytes;
    c->from = s.from;
    c->head = s.head;
    c->headroom = s.headroom;
    c->reshaped = s.reshaped;
    c->lane = s.lane;
    c->cut = s.cut;
    return c;
  }
  static World*& current() {
    static World* w = nullptr;
    return w;
  }
};

#define TRACK_LIVE(h, call) \
  FUZZ_CHECK((h) != nullptr && (h)->live, "%s on a %s packet", call, (h) ? "freed" : "null")

struct TrackBuffer {
  using Handle = TPkt*;
  struct Lent {};
  static World& w() { return *World::current(); }

  static Handle null() { return nullptr; }
  static uint8_t* data(Handle h) {
    TRACK_LIVE(h, "data");
    return h->bytes.data();
  }
  static uint32_t head_len(Handle h) {
    TRACK_LIVE(h, "head_len");
    return h->head;
  }
  static uint32_t pkt_len(Handle h) {
    TRACK_LIVE(h, "pkt_len");
    return h->size();
  }
  static uint32_t cut_len(Handle h) {
    TRACK_LIVE(h, "cut_len");
    return h->cut;
  }
  static Handle make_header(Handle o, uint32_t hdr, uint32_t gap, uint32_t tail_off,
                            uint32_t tail_len, Lent* lent) {
    TRACK_LIVE(o, "make_header");
    FUZZ_CHECK(o->kind == Kind::kFrame, "make_header from a packet that is not a traffic frame");
    FUZZ_CHECK(hdr <= o->head && hdr <= tail_off && uint64_t(tail_off) + tail_len <= o->size(),
               "make_header(hdr %u, tail %u+%u) on %u bytes (head %u)", hdr, tail_off, tail_len,
               o->size(), o->head);
    if (lent) *lent = Lent{};
    if (w().fail_alloc) {
      w().fail_alloc = false;
      return nullptr;
    }
    TPkt* h = w().make({}, o->id, Kind::kHeader);
    h->cut = o->cut;  // a header packet carries its original's
    h->bytes.assign(o->bytes.begin(), o->bytes.begin() + hdr);
    h->from.assign(o->from.begin(), o->from.begin() + hdr);
    h->bytes.resize(hdr + gap, 0);
    h->from.resize(hdr + gap, Origin{Src::kTag, o->id, 0});
    h->bytes.insert(h->bytes.end(), o->bytes.begin() + tail_off,
                    o->bytes.begin() + tail_off + tail_len);
    h->from.insert(h->from.end(), o->from.begin() + tail_off,
                   o->from.begin() + tail_off + tail_len);
    h->head = hdr + gap;  // a header buffer; the tail travels as its own segment
    return h;
  }
  static uint8_t* open_gap(Handle h, uint32_t at, uint32_t n) {
    TRACK_LIVE(h, "open_gap");
    if (at > h->head) return nullptr;  // as MbufOps: the headers must be in the first segment
    if (w().fail_gap || n > h->headroom) {
      w().fail_gap = false;
      return nullptr;
    }
    h->headroom -= n;
    h->bytes.insert(h->bytes.begin() + at, n, 0);
    h->from.insert(h->from.begin() + at, n, Origin{Src::kTag, h->id, 0});
    h->head += n;
    return h->bytes.data() + at;
  }
  static void close_gap(Handle h, uint32_t at, uint32_t n) {
    TRACK_LIVE(h, "close_gap");
    FUZZ_CHECK(uint64_t(at) + n <= h->head, "close_gap(%u, %u) on a %u-byte first segment", at, n,
               h->head);
    h->bytes.erase(h->bytes.begin() + at, h->bytes.begin() + at + n);
    h->from.erase(h->from.begin() + at, h->from.begin() + at + n);
    h->head -= n;
    h->headroom += n;
  }
  static park::Rejoin rejoin(Handle parked, uint32_t hdr_len, Lent&, Handle r, uint32_t at) {
    TRACK_LIVE(parked, "rejoin (parked)");
    TRACK_LIVE(r, "rejoin (returned)");
    FUZZ_CHECK(parked != r, "rejoin of a packet with itself (TrackBuffer never lends)");
    FUZZ_CHECK(parked->kind == Kind::kFrame, "the parked packet is not a traffic frame");
    FUZZ_CHECK(hdr_len <= parked->head && at <= r->head, "rejoin(hdr_len %u of %u, at %u of %u)",
               hdr_len, parked->head, at, r->head);
    if (w().on_rejoin) w().on_rejoin(*parked, *r, at);
    if (at > hdr_len + parked->headroom) {
      free(r);
      return park::Rejoin::kNoRoom;
    }
    parked->headroom = parked->headroom + hdr_len - at;
    parked->bytes.erase(parked->bytes.begin(), parked->bytes.begin() + hdr_len);
    parked->from.erase(parked->from.begin(), parked->from.begin() + hdr_len);
    parked->bytes.insert(parked->bytes.begin(), r->bytes.begin(), r->bytes.begin() + at);
    parked->from.insert(parked->from.begin(), r->from.begin(), r->from.begin() + at);
    parked->head = parked->head - hdr_len + at;
    free(r);
    return park::Rejoin::kOk;
  }
  static bool carries(Handle r, Handle p) {
    TRACK_LIVE(r, "carries");
    TRACK_LIVE(p, "carries");
    return false;
  }
  static void trim(Handle h, uint32_t len) {
    TRACK_LIVE(h, "trim");
    if (len >= h->size()) return;
    h->bytes.resize(len);
    h->from.resize(len);
    if (h->head > len) h->head = len;
  }
  static void free(Handle h) {
    TRACK_LIVE(h, "free");
    h->live = false;
    std::vector<uint8_t>().swap(h->bytes);  // stale pointers into it: use-after-free
    std::vector<Origin>().swap(h->from);
    --w().live;
  }
};
static_assert(park::BufferOps<TrackBuffer>);

}  // namespace nfpark::fuzz
