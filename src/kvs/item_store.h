// ItemStore: every item, in host memory — MICA's circular log plus a lossy bucketed index.
// Config:   log_bytes (default 64 MiB) · index_entries (default log_bytes / 256, power of two,
//           8 per bucket). Both allocated at construction; nothing is allocated per request.
// State:    the log: records [header 40 B | key | value + "\r\n"], 8-byte aligned, appended at
//           `head`; a record never straddles the end of the buffer (the rest of a lap is padded).
//           The index: 16-byte entries {record offset, hash tag, hot slot + 1}, 8 per bucket.
// Counters: evictions (log wrapped over a live item), index_evictions (bucket full: the oldest
//           entry dropped), reinserts (read items moved to the head; see below).
// Refs:     MICA (NSDI'14) §4.3: circular log, lossy concurrent index; nicmem's nmKVS runs on MICA.
//
// Theory of operation. Offsets are logical (they grow forever; physical = offset % capacity),
// so a record is live iff offset >= tail. Appending walks the oldest records out of the way
// first (FIFO eviction) and reports each live one to the Listener, which demotes it if hot.
// Updates never write in place: a SET appends a new record and repoints the index entry (the
// old bytes become garbage, reclaimed when the log wraps) — which is what makes the log the
// nmKVS "pending buffer": a reply copying an old value never sees a torn one. FIFO alone would
// evict a popular read-only item once per lap; as MICA suggests, a GET that finds its item in
// the oldest quarter of the log re-appends it (an approximate LRU) — unless the append would
// overwrite a value that a reply being built still points at (the caller's `keep_from`). Hash
// collisions are resolved by comparing keys; the tag only saves the key comparison most of the
// time.
#pragma once
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "core/hot_path.h"

namespace nfpark::kvs {

struct RecordHeader {
  uint32_t size;    // record bytes, a multiple of 8; 0: padding to the end of this lap
  uint32_t nbytes;  // data bytes: value + "\r\n"
  uint32_t flags;
  uint16_t nkey;
  uint16_t reserved;
  int64_t expiry;  // unix seconds; 0: never
  uint64_t cas;
  uint64_t hash;
};
static_assert(sizeof(RecordHeader) == 40);

struct StoreCounters {
  uint64_t evictions = 0, index_evictions = 0, reinserts = 0;
};

class ItemStore {
 public:
  static constexpr uint32_t kNotFound = ~0u;
  static constexpr uint32_t kWays = 8;
  class Listener {  // told when an entry disappears without erase() being called
   public:
    virtual ~Listener() = default;
    virtual void lost(uint32_t hot_slot) = 0;  // the entry was hot (slot, not slot + 1)
  };

  ItemStore(uint64_t log_bytes, uint32_t index_entries, Listener* listener);

  static uint64_t record_size(uint32_t nkey, uint32_t nbytes) {
    return (sizeof(RecordHeader) + nkey + nbytes + 7) & ~uint64_t(7);
  }
  uint64_t max_record() const { return cap_ / 2; }

  uint32_t find(std::string_view key, uint64_t hash) const;
  // A burst's lookups overlap their cache misses (MICA's batched prefetch): first every key's
  // bucket, then (bucket in cache) the records whose tag matches.
  void prefetch_bucket(uint64_t hash) const {
    const Entry* b = &entries_[uint32_t(hash & bucket_mask_) * kWays];
    prefetch_line(b);
    prefetch_line(b + kWays - 1);
  }
  void prefetch_record(uint64_t hash) const;
  // Writes a record for `key` and points its entry at it (created if absent, keeping the hot
  // link if present). The record's data is copied from `data` (nbytes). Returns the entry.
  // `data` must not point into the log (see reinsert()).
  uint32_t put(std::string_view key, uint64_t hash, uint32_t flags, int64_t expiry, uint64_t cas,
               const uint8_t* data, uint32_t nbytes);
  // Moves entry `pos`'s record to the head when it is in the oldest quarter of the log, unless
  // that would overwrite a record at an offset >= keep_from (a value a reply still points at).
  void maybe_reinsert(uint32_t pos, uint64_t keep_from);
  uint64_t offset(uint32_t pos) const { return entries_[pos].offset; }
  void erase(uint32_t pos);

  const RecordHeader& header(uint32_t pos) const { return *hdr(entries_[pos].offset); }
  const uint8_t* data(uint32_t pos) const;
  uint32_t hot(uint32_t pos) const { return entries_[pos].hot - 1; }  // HotSet::kNone if cold
  void set_hot(uint32_t pos, uint32_t slot) { entries_[pos].hot = slot + 1; }
  void clear_hot(uint32_t pos) { entries_[pos].hot = 0; }

  uint64_t capacity() const { return cap_; }
  uint64_t live_bytes() const { return head_ - tail_; }
  uint64_t items() const { return items_; }
  const StoreCounters& counters() const { return c_; }

 private:
  static constexpr uint64_t kEmpty = ~0ull, kMoving = ~1ull;
  struct Entry {
    uint64_t offset = kEmpty;
    uint32_t tag = 0;
    uint32_t hot = 0;  // hot slot + 1; 0 when cold
  };
  uint64_t phys(uint64_t off) const { return cap_mask_ ? off & cap_mask_ : off % cap_; }
  RecordHeader* hdr(uint64_t off) const {
    return reinterpret_cast<RecordHeader*>(log_.get() + phys(off));
  }
  uint64_t append(uint64_t size);  // room for one record: evicts, pads; returns its offset
  void make_room(uint64_t end);    // evicts until [tail, end) fits in the buffer
  void evict_record(uint64_t off, const RecordHeader& h);
  uint32_t insert(uint64_t hash, uint64_t off);
  void lose(Entry& e);

  uint64_t cap_;
  uint64_t cap_mask_;  // cap_ - 1 when cap_ is a power of two (no division per access), else 0
  std::unique_ptr<uint8_t[]> log_;      // not zeroed: pages are touched as the log fills
  std::unique_ptr<uint8_t[]> scratch_;  // one record, for maybe_reinsert()
  std::vector<Entry> entries_;
  uint32_t bucket_mask_;
  uint64_t head_ = 0, tail_ = 0, items_ = 0;
  Listener* listener_;
  StoreCounters c_;
};

}  // namespace nfpark::kvs
