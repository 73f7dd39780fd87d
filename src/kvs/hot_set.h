// Element:  HotSet — hot items' stable buffers in the "NIC memory" region, with nicmem's
//           stable/pending rules so that a SET never changes the bytes of a reply in flight.
// Config:   region base + bytes (the engine allocates it: a memzone on the DPDK engine, a vector
//           in tests) · max_items (entries, default 65536) · max_block (largest stable buffer,
//           default 2 MiB: a 1 MiB value fits).
// State:    per entry: stable block (offset, bytes), valid bit, refs (replies in flight that
//           reference the block), live (still hot), pinned, hash and index position (for the
//           policy and the index), generation (for HotRef). Region: see region.h.
// Counters: promotions, demotions, invalidations (stable -> pending: a SET on a hot item),
//           swaps (pending -> stable: a GET found refs == 0 and refreshed the block), stable_hits,
//           pending_copies (a GET found the block invalid and still referenced: sent a copy of
//           the pending value), refresh_failed (no block for a grown value), stale_releases.
// Refs:     nicmem (ASPLOS'22) §4.2.2 and §5 (nmKVS on MICA).
//
// Theory of operation. A stable buffer holds the value, then "\r\nEND\r\n" when those 7 bytes
// fit in the block the value needs anyway (a reply ending with the value then sends its
// terminator from the same buffer); a value whose size is a power of two, or just under one,
// is stored alone — 1 KiB values in 1 KiB blocks, not 2 KiB — and its reply copies the
// terminator. The pending buffer is
// the item's current record in the host-memory log: a SET writes the log (as for any item) and
// clears `valid`. A GET, as the paper specifies:
//   valid               -> refs++, send the stable buffer zero-copy;
//   !valid, refs == 0   -> copy pending -> stable (reallocating if the size class changed), set
//                          valid, then as above (a swap);
//   !valid, refs > 0    -> send a copy of the pending value (the stable buffer is in flight).
// Each zero-copy reply holds one reference, returned once with release() when the engine knows
// nothing points at the buffer any more (on DPDK: the mbufs' external-buffer free callback).
// Demotion (policy, delete, eviction) marks the entry dead; its block is freed when refs reaches
// 0, so a reply in flight always reads the bytes it was built with. The CPU only ever writes the
// region (memcpy on promotion and swap), never reads it.
#pragma once
#include <cstdint>
#include <vector>

#include "kvs/hot_ref.h"
#include "kvs/region.h"

namespace nfpark::kvs {

constexpr uint32_t kEndMarker = 5;  // "END\r\n"
constexpr uint32_t kTrailer = 7;    // "\r\nEND\r\n", kept after a stable value when it fits

struct HotCounters {
  uint64_t promotions = 0, demotions = 0, invalidations = 0, swaps = 0, stable_hits = 0,
           pending_copies = 0, refresh_failed = 0, stale_releases = 0;
};

class HotSet {
 public:
  static constexpr uint32_t kNone = ~0u;
  HotSet(uint8_t* base, uint64_t bytes, uint32_t max_items, uint64_t max_block);

  // Copies a value (nbytes, "\r\n" included) into a new stable buffer; the entry's slot, or
  // kNone when there is no free entry or block.
  uint32_t promote(const uint8_t* data, uint32_t nbytes, uint64_t hash, uint32_t index_pos,
                   bool pinned, uint32_t hits = 0, uint32_t epoch = 0);
  // Would a value of nbytes fit in a free block now?
  bool can_fit(uint32_t nbytes) const;

  struct Served {
    bool zero_copy = false;
    const uint8_t* data = nullptr;  // the stable buffer (zero_copy only)
    uint32_t len = 0;               // bytes of the reply there: the value, + "\r\n" if kept
    uint32_t room = 0;              // bytes readable there: len, + "END\r\n" if kept
    HotRef ref;
  };
  // A GET of hot item `slot` whose current (pending) value is data[0, nbytes).
  Served serve(uint32_t slot, const uint8_t* pending, uint32_t nbytes);
  void invalidate(uint32_t slot);  // a SET wrote a new pending value
  void demote(uint32_t slot);      // no longer hot (block freed when refs reaches 0)
  void release(HotRef ref);        // a reply no longer references the stable buffer

  struct Entry {
    uint64_t offset = Region::kNone, hash = 0;
    uint32_t nbytes = 0, refs = 0, gen = 0, index_pos = 0;
    uint32_t hits = 0, epoch = 0;  // the policy's decayed access count, kept here while hot
    bool valid = false, live = false, pinned = false, trailer = false;
  };
  // Access counting while hot (the policy's sketch counts cold keys): halved once per decay
  // epoch, like the sketch, so that the two compare.
  static uint32_t decayed(const Entry& e, uint32_t epoch) {
    const uint32_t d = epoch - e.epoch;
    return d >= 32 ? 0 : e.hits >> d;
  }
  void hit(uint32_t slot, uint32_t epoch) {
    Entry& e = entries_[slot];
    e.hits = decayed(e, epoch) + 1;
    e.epoch = epoch;
  }
  const Entry& entry(uint32_t slot) const { return entries_[slot]; }
  uint32_t capacity() const { return uint32_t(entries_.size()); }
  uint32_t live() const { return live_; }
  uint64_t refs_in_flight() const { return refs_; }
  uint32_t zombies() const { return zombies_; }  // demoted, waiting for refs to reach 0
  const Region& region() const { return region_; }
  const HotCounters& counters() const { return c_; }
  void set_index_pos(uint32_t slot, uint32_t pos) { entries_[slot].index_pos = pos; }

 private:
  bool write_stable(Entry& e, const uint8_t* data, uint32_t nbytes);
  uint64_t block_need(uint32_t nbytes, bool& trailer) const;
  void drop_block(Entry& e);
  void free_slot(uint32_t slot);

  uint8_t* base_;
  Region region_;
  std::vector<Entry> entries_;
  std::vector<uint32_t> free_slots_;
  uint32_t live_ = 0, zombies_ = 0;
  uint64_t refs_ = 0;
  HotCounters c_;
};

}  // namespace nfpark::kvs
