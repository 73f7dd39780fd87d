// FlowTable: a fixed-size hash table for per-flow state, with idle expiry.
//
// Element:  (library) used by nat, lb, counter and rate_limiter.
// Config:   capacity (flows; the table allocates next_pow2(capacity * 5 / 4) slots, rounded up
//           to a whole bucket) · idle_timeout (Nanos; 0 = entries never expire).
// Time:     `now` is passed to every call; no clock is read.
// State:    slots = buckets * 16. Per slot: one Entry {Key, Value, Nanos last_seen} padded to
//           16/32/64 B, plus a 4-byte tag. With Key = FlowKey (40 B) and Value <= 16 B an Entry is
//           64 B (one cache line), so a slot costs 68 B and a flow at most 68 * 2.5 = 170 B at the
//           worst rounding (85 B at the best); e.g. capacity 1M -> 2^21 slots -> 136 MiB.
//           Tags and entries live in HugeArray (2 MiB pages where transparent huge pages are
//           enabled: a 1M-flow table then costs the TLB 70 entries, not 35k), written once at
//           construction so the packet path takes no page faults.
// Counters: expired (lazy + sweep), insert_failed (both candidate buckets full of live flows).
// Cost:     one hash + 2 tag lines (both candidates compared at once, no branch on which bucket
//           holds the key) + 1 entry line; batched (hash all, prefetch tags, prefetch entries):
//           11 ns/lookup at 1k flows, 54 at 1M (peers_lib_bench hash, vs rte_hash 14 / 80).
//
// Theory of operation. Buckets hold 16 slots, whose tags fill one cache line. A key hashes to two
// candidate buckets (b1 = low bits of the hash, b2 = b1 xor a function of the tag), like a cuckoo
// table without displacement: lookups read at most two tag lines (64 B each) and the entry whose
// tag matches; an insert goes to the emptier of the two buckets ("power of two choices"). Tags are
// the hash's high 32 bits with the low bit forced to 1, so 0 marks an empty slot. Entries never
// move, so a slot index is a stable handle until the entry is erased (NAT keeps slot indices in its
// reverse map). Expiry is lazy: an entry idle for more than idle_timeout is removed when a lookup
// or insert meets it, and sweep() walks a bounded number of slots per call so that dead flows leave
// even when nothing touches them. Every removal of a live-at-insert entry by expiry calls the
// OnExpire hook (key, value, slot) before the slot is cleared; erase() does not. Insert fails
// (returns kNone, counted) only when all 16 candidate slots hold live flows; with the 5/4
// over-provisioning and power-of-two rounding the load factor stays <= 80%, where two 8-way choices
// essentially never fail (tests/nf/flow_table_test.cc fills to capacity). Nothing is allocated
// after construction. Refs:     Pagh & Rodler, "Cuckoo hashing" (2001); Fan et al., "MemC3"
// (NSDI'13, tags + 2 choices);
//           DPDK rte_hash bulk lookup (hash all, prefetch, compare).
#pragma once
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "core/flow_key.h"
#include "core/time.h"
#include "nf/huge_array.h"

namespace nfpark::nf {

struct NoExpireHook {
  template <class K, class V>
  void operator()(const K&, V&, uint32_t) const {}
};

template <class Key, class Value, class Hash, class OnExpire = NoExpireHook>
class FlowTable {
  static_assert(std::is_trivially_copyable_v<Key> && std::is_trivially_copyable_v<Value>);
  static constexpr size_t kRaw = sizeof(Key) + sizeof(Value) + sizeof(Nanos);
  static constexpr size_t kAlign = kRaw <= 16 ? 16 : kRaw <= 32 ? 32 : kRaw <= 64 ? 64 : 8;

 public:
  static constexpr uint32_t kWays = 16;
  static constexpr uint32_t kNone = UINT32_MAX;
  // Slots the NFs sweep per burst: a 2^21-slot table is swept every 131k bursts (4M packets).
  static constexpr size_t kSweepPerBurst = 16;
  struct alignas(kAlign) Entry {
    Key key;
    Value value;
    Nanos last_seen;
  };

  FlowTable(size_t capacity, Nanos idle_timeout, OnExpire hook = {}, Hash hasher = {})
      : timeout_(idle_timeout), hook_(hook), hash_(hasher) {
    size_t want = std::max<size_t>(capacity + capacity / 4, 2 * kWays);
    slots_ = std::bit_ceil(want);
    mask_ = uint32_t(slots_ / kWays - 1);
    // Huge pages where the kernel gives them (a 1M-flow table spans 136 MiB: 4 KiB pages would
    // miss the TLB on every lookup); written once here so no page faults on the packet path.
    tag_mem_.resize(slots_, 0);
    entry_mem_.resize(slots_, Entry{});
    tags_ = tag_mem_.data();
    entries_ = entry_mem_.data();
    std::memset(tags_, 0, slots_ * 4);
    std::memset(static_cast<void*>(entries_), 0, slots_ * sizeof(Entry));
  }
  FlowTable(const FlowTable&) = delete;
  FlowTable& operator=(const FlowTable&) = delete;
  // Exchanges the two tables' contents (a NAT grows its table into a bigger one and swaps it in,
  // so that the table it keeps by value stays where the hot path finds it).
  void swap(FlowTable& o) noexcept {
    std::swap(timeout_, o.timeout_);
    std::swap(hook_, o.hook_);
    std::swap(hash_, o.hash_);
    std::swap(slots_, o.slots_);
    std::swap(mask_, o.mask_);
    std::swap(tag_mem_, o.tag_mem_);
    std::swap(entry_mem_, o.entry_mem_);
    std::swap(tags_, o.tags_);
    std::swap(entries_, o.entries_);
    std::swap(size_, o.size_);
    std::swap(cursor_, o.cursor_);
    std::swap(expired_, o.expired_);
    std::swap(insert_failed_, o.insert_failed_);
  }

  uint64_t hash(const Key& k) const { return hash_(k); }

  // Stage 1 of a batch: prefetch both candidate tag groups of hash `h`.
  void prefetch_buckets(uint64_t h) const {
    __builtin_prefetch(&tags_[b1(h) * kWays]);
    __builtin_prefetch(&tags_[b2(h) * kWays]);
  }
  // Stage 2: read the (prefetched) tags and prefetch the entry that will probably match.
  void prefetch_entry(uint64_t h) const {
    const uint32_t c1 = b1(h), c2 = b2(h);
    const uint32_t m = match2(c1, c2, tag(h));
    if (m) __builtin_prefetch(&entries_[slot_at(c1, c2, m)]);
  }

  // Live entry of `k` or kNone. Refreshes last_seen when `touch`. Expired matches are removed.
  uint32_t find(const Key& k, uint64_t h, Nanos now, bool touch = true) {
    const uint32_t c1 = b1(h), c2 = b2(h);
    for (uint32_t m = match2(c1, c2, tag(h)); m; m &= m - 1) {  // bucket c1's slots first
      const uint32_t s = slot_at(c1, c2, m);
      Entry& e = entries_[s];
      if (!(e.key == k)) continue;
      if (expired(e, now)) {
        expire(s);
        return kNone;
      }
      if (touch && now > e.last_seen) e.last_seen = now;  // a held packet may be older
      return s;
    }
    return kNone;
  }

  // Finds `k` or inserts it with a value-initialised Value. `inserted` tells which.
  // Returns kNone (and counts insert_failed) when no slot is free.
  uint32_t find_or_insert(const Key& k, uint64_t h, Nanos now, bool& inserted) {
    inserted = false;
    uint32_t s = find(k, h, now);
    if (s != kNone) return s;
    uint32_t t = tag(h);
    s = free_slot(b1(h), b2(h), now);
    if (s == kNone) {
      ++insert_failed_;
      return kNone;
    }
    tags_[s] = t;
    entries_[s].key = k;
    entries_[s].value = Value{};
    entries_[s].last_seen = now;
    ++size_;
    inserted = true;
    return s;
  }

  // Removes the entry at `slot` without calling the hook.
  void erase(uint32_t slot) {
    if (tags_[slot] == 0) return;
    tags_[slot] = 0;
    --size_;
  }
  bool occupied(uint32_t slot) const { return slot < slots_ && tags_[slot] != 0; }
  Entry& at(uint32_t slot) { return entries_[slot]; }
  const Entry& at(uint32_t slot) const { return entries_[slot]; }
  // True when the entry at `slot` is live at `now`; an expired one is removed (hook called).
  bool live(uint32_t slot, Nanos now) {
    if (!occupied(slot)) return false;
    if (!expired(entries_[slot], now)) return true;
    expire(slot);
    return false;
  }

  // Examines up to `max_slots` slots from an internal cursor and removes expired entries.
  size_t sweep(Nanos now, size_t max_slots) {
    if (timeout_ <= 0) return 0;
    size_t removed = 0;
    for (size_t i = 0; i < max_slots; ++i) {
      uint32_t s = cursor_;
      cursor_ = uint32_t((cursor_ + 1) & (slots_ - 1));
      if (tags_[s] != 0 && expired(entries_[s], now)) {
        expire(s);
        ++removed;
      }
    }
    return removed;
  }

  template <class F>
  void for_each(F&& f) const {
    for (size_t s = 0; s < slots_; ++s)
      if (tags_[s]) f(entries_[s]);
  }

  size_t size() const { return size_; }
  size_t slots() const { return slots_; }
  Nanos idle_timeout() const { return timeout_; }
  uint64_t expired_count() const { return expired_; }
  uint64_t insert_failed() const { return insert_failed_; }
  static constexpr size_t bytes_per_slot() { return sizeof(Entry) + sizeof(uint32_t); }

 private:
  static uint32_t tag(uint64_t h) { return uint32_t(h >> 32) | 1u; }
  uint32_t b1(uint64_t h) const { return uint32_t(h) & mask_; }
  uint32_t b2(uint64_t h) const { return (b1(h) ^ (tag(h) * 0x5bd1e995u >> 7)) & mask_; }
  // Bit i set when slot i of bucket b carries tag t (written branch-free so it vectorises).
  uint32_t match(uint32_t b, uint32_t t) const {
    const uint32_t* g = &tags_[b * kWays];
#if defined(__AVX512F__)  // one compare of the 64-byte tag line (nf_bench flowtable: see docs)
    return _mm512_cmpeq_epi32_mask(_mm512_load_si512(g), _mm512_set1_epi32(int(t)));
#endif
    uint32_t m = 0;
    for (uint32_t i = 0; i < kWays; ++i) m |= uint32_t(g[i] == t) << i;
    return m;
  }
  // Both candidate buckets at once: bits 0-15 = slots of c1, bits 16-31 = slots of c2. One mask
  // for both means no branch on which bucket holds the key (it is either, half the time).
  uint32_t match2(uint32_t c1, uint32_t c2, uint32_t t) const {
    return match(c1, t) | match(c2, t) << kWays;
  }
  // The slot of the lowest set bit of a match2() mask.
  static uint32_t slot_at(uint32_t c1, uint32_t c2, uint32_t m) {
    const uint32_t bit = uint32_t(std::countr_zero(m));
    return (bit < kWays ? c1 : c2) * kWays + (bit & (kWays - 1));
  }
  bool expired(const Entry& e, Nanos now) const {
    return timeout_ > 0 && now - e.last_seen > timeout_;
  }
  void expire(uint32_t s) {
    hook_(entries_[s].key, entries_[s].value, s);
    tags_[s] = 0;
    --size_;
    ++expired_;
  }
  // An empty slot of the emptier candidate bucket (two choices keep the load even), else an
  // expired entry of either bucket (expired first), else kNone.
  uint32_t free_slot(uint32_t c1, uint32_t c2, Nanos now) {
    uint32_t e1 = match(c1, 0), e2 = match(c2, 0);
    if (e1 | e2) {
      uint32_t b = std::popcount(e1) >= std::popcount(e2) ? c1 : c2;
      return b * kWays + uint32_t(std::countr_zero(b == c1 ? e1 : e2));
    }
    for (uint32_t b : {c1, c2}) {
      for (uint32_t i = 0; i < kWays; ++i) {
        uint32_t s = b * kWays + i;
        if (expired(entries_[s], now)) {
          expire(s);
          return s;
        }
      }
    }
    return kNone;
  }

  Nanos timeout_;
  OnExpire hook_;
  Hash hash_;
  size_t slots_ = 0;
  uint32_t mask_ = 0;
  HugeArray<uint32_t> tag_mem_;  // 64-byte aligned: one bucket's tags = one cache line
  HugeArray<Entry> entry_mem_;
  uint32_t* tags_ = nullptr;  // tag_mem_.data(), entry_mem_.data()
  Entry* entries_ = nullptr;
  size_t size_ = 0;
  uint32_t cursor_ = 0;
  uint64_t expired_ = 0, insert_failed_ = 0;
};

}  // namespace nfpark::nf
