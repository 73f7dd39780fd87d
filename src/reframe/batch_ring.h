// BatchRing: Reframer's flush list, kept as a ring of batches in the order they were created.
//
// A batch is one flow's packets waiting together (Buffering), or a group of packets due out in
// the current round (Ready). Batches are created in time order, so the ring *is* the flush list
// sorted by batch start: the oldest batch that may still be buffering is at `head`, and expiry
// walks forward from there until it meets one whose t_buff has not elapsed. A batch flushed
// early (full, bypass, forced) stays where it is and is skipped later (lazy deletion), so no
// operation ever touches another flow's state: a flow slot points at its latest batch by
// sequence number, and the batch is live when ring[seq & mask] still carries that sequence
// number, that slot and a live state. Batches of the last t_buff are a few kilobytes of ring:
// they stay in cache while the flow slots (one per flow) are in DRAM.
//
// Capacity: a power of two above max_held_packets + 2 rounds, so the batches created in one round
// never wrap onto each other; if the batch about to be overwritten is still buffering (the
// traffic outran the ring within t_buff), it is flushed first (flush.forced).
#pragma once
#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "core/time.h"
#include "reframe/flow_slots.h"

namespace nfpark::reframe {

struct alignas(64) Batch {
  enum State : uint8_t { kDone = 0, kBuffering = 1, kReady = 2 };
  uint32_t seq = 0;                     // sequence number: ring position and identity
  uint32_t slot = kNone;                // flow slot, kNone for untracked packets
  uint32_t head = kNone, tail = kNone;  // node FIFO, arrival order
  uint32_t count = 0;                   // packets in it
  State state = kDone;
  bool has_ack = false;  // holds a pure TCP ACK (coalescing candidate)
  Nanos start = 0;       // arrival of its first packet
  Nanos last = 0;        // arrival of its latest packet
  int64_t key = 0;       // priority key (smaller first), see Priority
  uint64_t flow = 0;     // flow id (output run accounting)
};

class BatchRing {
 public:
  explicit BatchRing(uint32_t min_capacity)
      : ring_(std::bit_ceil(std::max<uint32_t>(min_capacity, 64))),
        mask_(uint32_t(ring_.size() - 1)) {}

  Batch& at(uint32_t seq) { return ring_[seq & mask_]; }
  const Batch& at(uint32_t seq) const { return ring_[seq & mask_]; }
  // The live batch `seq` of flow slot `slot`, or nullptr.
  Batch* live(uint32_t seq, uint32_t slot) {
    Batch& b = at(seq);
    return b.seq == seq && b.slot == slot && b.state != Batch::kDone ? &b : nullptr;
  }
  uint32_t next_seq() const { return next_; }
  // The position the next batch takes (the caller empties it first if it is live).
  Batch& next_slot() { return at(next_); }
  Batch& create(uint32_t slot, Batch::State st, Nanos now, uint64_t flow) {
    Batch& b = at(next_);
    b.seq = next_++;
    b.slot = slot;
    b.head = b.tail = kNone;
    b.count = 0;
    b.state = st;
    b.has_ack = false;
    b.start = b.last = now;
    b.key = 0;
    b.flow = flow;
    return b;
  }
  uint32_t capacity() const { return uint32_t(ring_.size()); }

  // Oldest batch that may be buffering (every batch before it is done or ready).
  uint32_t head = 0;
  bool empty_from_head() const { return head == next_; }

 private:
  std::vector<Batch> ring_;
  uint32_t mask_;
  uint32_t next_ = 0;
};

}  // namespace nfpark::reframe
