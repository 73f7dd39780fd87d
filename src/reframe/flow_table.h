// FlowTable: Reframer's per-flow state, keyed by a 64-bit flow id (hash of the 5-tuple).
//
// Layout: 2-choice bucketised hashing (cuckoo-style without displacement). A key may live in one
// of two buckets of 8 slots; the keys of a bucket fill one cache line, so a lookup touches at
// most two key lines plus the entry it finds. Inserting when both buckets are full evicts the
// least recently seen *idle* entry of the 16 candidates (no buffered packets, no batch waiting
// to be emitted); an evicted flow loses only its history (first-seen time, packet count), never
// a packet. When all 16 candidates are busy, insert() returns kNone and the caller forwards the
// packet untracked. Idle entries older than the flow timeout are recycled lazily on lookup.
//
// Keys are flow ids with 0 reserved for "empty"; the caller never passes 0. Two flows with the
// same 64-bit id share an entry: they are buffered as one flow, which can only merge batches, so
// per-flow order still holds for each of them.
#pragma once
#include <cstdint>
#include <vector>

#include "core/time.h"

namespace nfpark::reframe {

constexpr uint32_t kNone = UINT32_MAX;

struct FlowEntry {
  Nanos first_seen = 0;    // arrival of the flow's first packet (since the entry was created)
  Nanos batch_start = 0;   // arrival of the first packet of the current batch (valid if count)
  Nanos last_arrival = 0;  // arrival of the flow's latest packet
  uint32_t head = kNone, tail = kNone, count = 0;  // buffered packets (node indices), FIFO
  uint32_t prev = kNone, next = kNone;             // flush list links (valid if count)
  uint32_t pending = kNone;   // index of this flow's batch in the current round's ready set
  uint32_t packets_seen = 0;  // packets of this flow since the entry was created
  uint32_t last_ack = 0;      // ack number of the last emitted pure ACK (valid if has_last_ack)
  bool has_last_ack = false;

  bool busy() const { return count != 0 || pending != kNone; }
};
static_assert(sizeof(FlowEntry) == 64, "one cache line per flow (plus its 8-byte key)");

class FlowTable {
 public:
  static constexpr uint32_t kWays = 8;

  // Sized so that `max_flows` entries fit at a load factor of at most 80% (72 B per slot).
  explicit FlowTable(uint32_t max_flows);

  struct Lookup {
    uint32_t slot = kNone;
    bool is_new = false;   // entry created (or recycled) for this packet
    bool evicted = false;  // an idle entry of another flow was evicted to make room
    bool expired = false;  // this flow's own entry had been idle longer than the timeout
  };
  // Finds `key` or inserts it with first_seen = now. kNone slot: no room (all candidates busy).
  Lookup find_or_insert(uint64_t key, Nanos now, Nanos idle_timeout);

  // Batch prefetch (BESS cuckoo_map style): stage 1 pulls a key's two bucket lines into cache,
  // stage 2 (after stage 1 for the whole burst) finds the entry, if any, and pulls it in.
  void prefetch_buckets(uint64_t key) const {
    const uint32_t b1 = reduce(key);
    __builtin_prefetch(&keys_[size_t(b1) * kWays]);
    __builtin_prefetch(&keys_[size_t(bucket2(key, b1)) * kWays]);
  }
  void prefetch_entry(uint64_t key) const;

  FlowEntry& at(uint32_t slot) { return entries_[slot]; }
  const FlowEntry& at(uint32_t slot) const { return entries_[slot]; }
  uint64_t key_at(uint32_t slot) const { return keys_[slot]; }
  uint32_t slots() const { return uint32_t(keys_.size()); }
  uint32_t size() const { return size_; }

 private:
  // Maps 32 bits of `h` onto [0, buckets_) without a division (Lemire's multiply-shift).
  uint32_t reduce(uint64_t h) const { return uint32_t((uint64_t(uint32_t(h)) * buckets_) >> 32); }
  uint32_t bucket2(uint64_t key, uint32_t b1) const;
  void reset(uint32_t slot, uint64_t key, Nanos now);

  std::vector<uint64_t> keys_;  // 0 = empty
  std::vector<FlowEntry> entries_;
  uint32_t buckets_ = 0;
  uint32_t size_ = 0;
};

}  // namespace nfpark::reframe
