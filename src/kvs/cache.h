// Cache: memcached's item semantics over the ItemStore, with the hot set in "NIC memory".
// Config:   CacheConfig below (sizes in bytes) — the log and index of ItemStore, the hot set's
//           region (provided by the engine) and entries, the policy, and pinned keys.
// Time:     `now` (unix time, Nanos) passed to every call; expiry at one-second resolution.
// Counters: get_keys, get_hits, get_misses, get_expired, hot_hits (replies given a stable
//           buffer: zero-copy candidates), stores, stored, not_stored, exists, not_found,
//           deletes, deleted; plus HotSet's and ItemStore's (see there).
//
// Theory of operation. GET: find the item (expired ones are dropped and missed), count the
// access in the policy, re-append it if it is about to be evicted, and — when the engine can
// send zero-copy — serve it from the hot set (promoting it first if the policy admits it);
// otherwise the reply copies the value from the log. SET/ADD/REPLACE/CAS append a new record
// (the new "pending" value) and invalidate the stable buffer of a hot item. DELETE, expiry,
// log and index evictions demote a hot item; its block outlives any reply still using it.
// CAS uniques come from one counter incremented per stored item, as memcached's get_cas_id().
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/flow_key.h"
#include "core/time.h"
#include "kvs/hot_policy.h"
#include "kvs/hot_set.h"
#include "kvs/item_store.h"
#include "kvs/reply.h"

namespace nfpark::kvs {

struct CacheConfig {
  uint64_t log_bytes = 64ull << 20;
  uint32_t index_entries = 0;  // 0: log_bytes / 256
  uint32_t hot_items = 65536;
  uint64_t hot_max_block = 2ull << 20;
  bool auto_hot = true;  // promote by frequency (HotPolicy); pinned keys are always hot
  uint32_t zc_min = 0;   // values shorter than this are always copied (never hot)
  HotPolicyConfig policy;
  std::vector<std::string> pinned;
};

struct CacheCounters {
  uint64_t get_keys = 0, get_hits = 0, get_misses = 0, get_expired = 0, hot_hits = 0;
  uint64_t stores = 0, stored = 0, not_stored = 0, exists = 0, not_found = 0;
  uint64_t deletes = 0, deleted = 0;
};

class Cache final : private ItemStore::Listener, public RefReleaser {
 public:
  Cache(const CacheConfig& cfg, uint8_t* region, uint64_t region_bytes);

  struct Hit {
    bool found = false;
    uint32_t flags = 0, nbytes = 0;  // nbytes: value + "\r\n"
    uint64_t cas = 0;
    const uint8_t* data = nullptr;  // the value in the log: valid until the next store
    HotSet::Served hot;             // zero_copy: send hot.data instead (holds hot.ref)
  };
  Hit get(std::string_view key, Nanos now, bool zero_copy);

  enum class Mode : uint8_t { kSet, kAdd, kReplace, kCas };
  enum class Result : uint8_t { kStored, kNotStored, kExists, kNotFound };
  // `data` holds nbytes = value + "\r\n"; `expiry` is absolute unix seconds (0: never).
  Result store(Mode mode, std::string_view key, uint32_t flags, int64_t expiry, const uint8_t* data,
               uint32_t nbytes, uint64_t cas, Nanos now);
  // true: it existed (DELETED). `count` false: an unlink, not a delete command.
  bool remove(std::string_view key, Nanos now, bool count = true);
  // The replies built since the last call are out (copied): their log values may be overwritten.
  void end_reply() { keep_from_ = ~0ull; }

  void release(HotRef ref) override { hot_.release(ref); }

  // Batched prefetch over a burst (see ItemStore): stage 0 the buckets, then 1 the records.
  void prefetch(std::string_view key, int stage) const {
    const uint64_t h = hash_bytes(key.data(), key.size());
    if (stage == 0)
      store_.prefetch_bucket(h);
    else
      store_.prefetch_record(h);
  }

  const ItemStore& store() const { return store_; }
  const HotSet& hot() const { return hot_; }
  const HotPolicy& policy() const { return policy_; }
  const CacheCounters& counters() const { return c_; }
  uint64_t max_record() const { return store_.max_record(); }

 private:
  void lost(uint32_t hot_slot) override { hot_.demote(hot_slot); }
  bool expired(uint32_t pos, Nanos now) const;
  void drop(uint32_t pos);  // erase an entry, demoting it first
  bool pinned(std::string_view key) const;
  uint32_t maybe_promote(uint32_t pos, std::string_view key, uint64_t hash, uint32_t freq);
  uint32_t pick_victim(uint32_t& freq);

  ItemStore store_;
  HotSet hot_;
  HotPolicy policy_;
  bool auto_hot_;
  uint32_t zc_min_;
  std::set<std::string, std::less<>> pinned_;
  uint64_t next_cas_ = 0;
  uint64_t keep_from_ = ~0ull;                  // lowest log offset a reply being built copies from
  uint32_t admit_floor_ = 0, floor_epoch_ = 0;  // see hot_policy.h
  CacheCounters c_;
};

}  // namespace nfpark::kvs
