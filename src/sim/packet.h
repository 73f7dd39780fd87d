// Packet: the simulator's packet record, and PacketPool, where records come from.
//
// A record holds the bytes the logic reads — by default the frame's first `cap` bytes (headers
// and a little payload) — and the frame's length as a number: `head` bytes are present at
// `data`, `len` is the frame length. A run that asks for full bytes (the equivalence test) gets
// records large enough for whole frames, so head == len. The parking logic sees both through
// SimBuffer (sim_buffer.h), the same way it sees an mbuf's first segment and pkt_len.
// Records are pooled: a pool grows by chunks when it runs dry and never frees until destroyed, so
// a run in steady state allocates nothing per packet. `live()` counts records out of the pool
// (zero again at the end of a run: "pools full at exit"). No globals: a record knows its pool.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "core/carried_layout.h"
#include "sim/time.h"

namespace nfpark::sim {

class PacketPool;

struct Packet {
  uint8_t* data;  // frame start, inside buf
  uint32_t head;  // bytes present at data
  uint32_t len;   // frame length (bytes on the wire without FCS)
  uint64_t seq;   // input sequence number (arrival order at the switch, all ports)
  uint64_t flow;  // flow id (traffic port and 5-tuple); 0 = none
  Picos t_in;     // arrival at the switch (first bit)
  Picos due;      // while in a delay line: when it comes out
  Packet* next;   // intrusive FIFO link (one FIFO at a time)
  PacketPool* pool;
  uint16_t in_port;   // traffic port it arrived on
  uint16_t out_port;  // traffic port it leaves on
  uint16_t queue;     // egress queue chosen by the switch program
  uint16_t user;      // free for the current holder (a switch program, the NF server)
  // the parse of the bytes at data, if a stage left it for the next (ip_version 0: none);
  // SimBuffer forgets it whenever the bytes change (park/buffer_ops.h: take/carry_layout)
  CarriedLayout layout;
  // FlowKey::hash() of the bytes' flow key, left by the source beside its parse (0: none); valid
  // only with that parse: taking the layout or carrying a new one forgets it (take_flow_hash)
  uint64_t key_hash;
  uint8_t* buf() { return reinterpret_cast<uint8_t*>(this + 1); }
  uint32_t cap() const;  // bytes of buf (the pool's record size)
  uint32_t headroom() const { return uint32_t(data - reinterpret_cast<const uint8_t*>(this + 1)); }
  uint32_t tailroom() const { return cap() - headroom() - head; }
};
static_assert(sizeof(Packet) == 96, "a record's header: 96 B (the stride of 192 B records: 384)");

class PacketPool {
 public:
  static constexpr uint32_t kHeadroom = 64;   // room to insert a tag in front of the headers
  static constexpr uint32_t kMinBytes = 128;  // every record has room for this much after it
  // `bytes`: frame bytes a record can hold (the rest of a frame is a length only).
  // `max_records`: a bound on live records (alloc() returns nullptr past it).
  explicit PacketPool(uint32_t bytes = 192, uint64_t max_records = 1ull << 24);
  PacketPool(const PacketPool&) = delete;
  PacketPool& operator=(const PacketPool&) = delete;

  // A record with data at kHeadroom, head = len = 0; nullptr past max_records.
  Packet* alloc() {
    if (!free_) [[unlikely]]
      if (!grow()) return nullptr;
    Packet* p = free_;
    free_ = p->next;
    p->next = nullptr;
    p->data = p->buf() + kHeadroom;
    p->head = p->len = 0;
    p->user = 0;
    p->layout.ip_version = 0;
    p->key_hash = 0;
    ++live_;
    return p;
  }
  // A record holding frame[0, min(len, bytes)) with length `len`.
  Packet* make(const uint8_t* frame, uint32_t captured, uint32_t len);
  void free(Packet* p) {
    p->next = free_;
    free_ = p;
    --live_;
  }
  uint64_t live() const { return live_; }
  uint64_t capacity() const { return total_; }
  uint32_t bytes() const { return bytes_; }
  uint32_t record_cap() const { return stride_ - uint32_t(sizeof(Packet)); }

 private:
  bool grow();
  uint32_t bytes_;
  uint32_t stride_;
  uint64_t max_;
  uint64_t total_ = 0, live_ = 0;
  Packet* free_ = nullptr;
  std::vector<std::unique_ptr<uint8_t[]>> chunks_;
};

inline uint32_t Packet::cap() const {
  return pool->record_cap();
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
