// Packet: the simulator's packet record, and PacketPool, where records come from.
//
// A record holds the bytes the logic reads — by default the frame's first bytes (headers and a
// little payload) — and the frame's length as a number: `head` bytes are present at data(),
// `len` is the frame length. A run that asks for full bytes (the equivalence test) gets records
// large enough for whole frames, so head == len. The parking logic sees both through SimBuffer
// (sim_buffer.h), the same way it sees an mbuf's first segment and pkt_len.
//
// Layout (one record, records start on cache lines):
//   [0, 64)    Packet: what every stage reads (links, sequence, flow, times, lengths, ports);
//              the frame start is an offset (`off`), the pool is found from the address
//   [64, 88)   the carried parse and flow-key hash (PacketCarry), read by the stage after the
//              one that left them
//   [88, 128)  headroom (kHeadroom = 40 B: a tag of up to 24 B goes in front of the headers)
//   [128, ...) the frame's bytes: `room` of them (the headers start on a cache line)
// Records are pooled: a pool grows by 2 MiB chunks aligned on 2 MiB (the chunk's first line
// holds its pool, so a record finds its pool without a pointer of its own) when it runs dry and
// never frees until destroyed, so a run in steady state allocates nothing per packet. A frame
// pool has two companions for the header packets a split makes (SimBuffer::make_header): one of
// 128 B records for headers and a tag, one as large as the run's records for a header that
// carries a long tail; `live()` counts the records out of all three (zero again at the end of a
// run: "pools full at exit"). No globals.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "core/carried_layout.h"
#include "sim/time.h"

namespace nfpark::sim {

class PacketPool;

// What a record carries beside its header from the stage that made it to the next one.
struct PacketCarry {
  // the parse of the bytes at data(), if a stage left it for the next (ip_version 0: none);
  // SimBuffer forgets it whenever the bytes change (park/buffer_ops.h: take/carry_layout)
  CarriedLayout layout;
  // FlowKey::hash() of the bytes' flow key, left by the source beside its parse (0: none); valid
  // only with that parse: taking the layout or carrying a new one forgets it (take_flow_hash)
  uint64_t key_hash;
};
static_assert(sizeof(PacketCarry) == 24);

struct Packet {
  static constexpr uint32_t kCarryAt = 64;                            // PacketCarry
  static constexpr uint32_t kBufAt = kCarryAt + sizeof(PacketCarry);  // buf(): 88
  static constexpr uint32_t kDataAt = 128;                            // data() of a new record

  Packet* next;       // intrusive FIFO link (one FIFO at a time)
  uint64_t seq;       // input sequence number (arrival order at the switch, all ports)
  uint64_t flow;      // flow id (traffic port and 5-tuple); 0 = none
  Picos t_in;         // arrival at the switch (first bit)
  Picos due;          // while in a delay line: when it comes out
  uint32_t head;      // bytes present at data()
  uint32_t len;       // frame length (bytes on the wire without FCS)
  uint16_t in_port;   // traffic port it arrived on
  uint16_t out_port;  // traffic port it leaves on
  uint16_t queue;     // egress queue chosen by the switch program
  uint16_t user;      // free for the current holder (a switch program, the NF server)
  uint32_t off;       // data() - the record's start
  uint32_t pad_;

  uint8_t* record() { return reinterpret_cast<uint8_t*>(this); }
  const uint8_t* record() const { return reinterpret_cast<const uint8_t*>(this); }
  uint8_t* data() { return record() + off; }  // frame start, inside buf()
  const uint8_t* data() const { return record() + off; }
  void set_data(uint8_t* d) { off = uint32_t(d - record()); }
  uint8_t* buf() { return record() + kBufAt; }
  CarriedLayout& layout() { return reinterpret_cast<PacketCarry*>(record() + kCarryAt)->layout; }
  uint64_t& key_hash() { return reinterpret_cast<PacketCarry*>(record() + kCarryAt)->key_hash; }
  PacketPool* pool() const;
  uint32_t headroom() const { return off - kBufAt; }
  uint32_t tailroom() const;  // bytes after the present ones
  // Where the record's buffer ends, counted from data(), as a model that treats the record as a
  // receive buffer sees it (a NIC, nic_program.cc): the run's record size, whatever pool holds it.
  uint32_t reach() const;
};
static_assert(sizeof(Packet) == 64, "a record's header: one cache line");

class PacketPool {
 public:
  static constexpr uint32_t kHeadroom = Packet::kDataAt - Packet::kBufAt;  // 40: room for a tag
  static constexpr uint32_t kMinBytes = 128;     // every record has room for this much after it
  static constexpr uint32_t kHeaderBytes = 128;  // room of the header packets' records
  static constexpr uintptr_t kChunkBytes = 2u << 20;  // chunks: 2 MiB, aligned on 2 MiB
  // `bytes`: frame bytes a record can hold (the rest of a frame is a length only).
  // `max_records`: a bound on live records of each of the pool's record sizes (alloc() returns
  // nullptr past it). `room`: the bytes a record of this pool has after data() (0: max(bytes,
  // kMinBytes)); a source that writes only headers (synthetic frames) asks for kHeaderBytes.
  explicit PacketPool(uint32_t bytes = 192, uint64_t max_records = 1ull << 24, uint32_t room = 0);
  ~PacketPool();
  PacketPool(const PacketPool&) = delete;
  PacketPool& operator=(const PacketPool&) = delete;

  // A record with data() at kHeadroom, head = len = 0; nullptr past max_records.
  Packet* alloc() {
    if (!free_) [[unlikely]]
      if (!grow()) return nullptr;
    Packet* p = free_;
    free_ = p->next;
    p->next = nullptr;
    p->off = Packet::kDataAt;
    p->head = p->len = 0;
    p->user = 0;
    p->layout().ip_version = 0;
    p->key_hash() = 0;
    ++live_;
    return p;
  }
  // A record holding frame[0, min(len, bytes)) with length `len`.
  Packet* make(const uint8_t* frame, uint32_t captured, uint32_t len);
  static void release(Packet* p) { p->pool()->free(p); }
  void free(Packet* p) {
    p->next = free_;
    free_ = p;
    --live_;
  }
  // Records out of this pool and its companions.
  uint64_t live() const;
  uint64_t capacity() const;
  uint32_t bytes() const { return bytes_; }
  uint32_t room() const { return room_; }
  uint32_t stride() const { return stride_; }
  // The largest header packet (headers, gap and tail present) a split may make from a record of
  // this pool: the run's record size less the headroom (what a record could hold when all
  // records were one size: bytes rounded up with 32 B of slack).
  uint32_t limit() const { return limit_; }
  // The pool a header packet of `n` bytes (n <= limit()) comes from.
  PacketPool* for_header(uint32_t n) const { return n <= kHeaderBytes ? hdr_ : spill_; }

  static PacketPool* of(const Packet* p) {
    const uintptr_t chunk = reinterpret_cast<uintptr_t>(p) & ~(kChunkBytes - 1);
    return *reinterpret_cast<PacketPool* const*>(chunk);
  }

 private:
  PacketPool(uint32_t bytes, uint64_t max_records, uint32_t room, uint32_t limit);
  bool grow();
  uint32_t bytes_;
  uint32_t room_;
  uint32_t stride_;
  uint32_t limit_;
  uint64_t max_;
  uint64_t total_ = 0, live_ = 0;
  Packet* free_ = nullptr;
  std::vector<void*> chunks_;
  std::unique_ptr<PacketPool> own_hdr_, own_spill_;  // the companions (a frame pool's)
  PacketPool* hdr_ = nullptr;                        // header packets up to kHeaderBytes
  PacketPool* spill_ = nullptr;                      // larger header packets (room >= limit_)
};

inline PacketPool* Packet::pool() const {
  return PacketPool::of(this);
}
inline uint32_t Packet::tailroom() const {
  return pool()->stride() - off - head;
}
inline uint32_t Packet::reach() const {
  return pool()->limit() + PacketPool::kHeadroom - headroom();
}

// A FIFO of packets linked through `next` (no allocation): a device's queue in the models.
struct PacketFifo {
  Packet* head = nullptr;
  Packet* tail = nullptr;
  uint32_t count = 0;
  void push(Packet* p) {
    p->next = nullptr;
    if (tail)
      tail->next = p;
    else
      head = p;
    tail = p;
    ++count;
  }
  Packet* pop() {
    Packet* p = head;
    head = p->next;
    if (!head) tail = nullptr;
    --count;
    return p;
  }
};

}  // namespace nfpark::sim
