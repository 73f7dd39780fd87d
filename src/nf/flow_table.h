// FlowTable: a fixed-size hash table for per-flow state, with idle expiry.
//
// Element:  (library) used by nat, lb, counter and rate_limiter.
// Config:   capacity (flows; the table allocates buckets of 32 slots for capacity * 5/4 flows,
//           31 a bucket, an even number of buckets, at least two) · idle_timeout (Nanos; 0 =
//           entries never expire).
// Time:     `now` is passed to every call; no clock is read.
// State:    slots = buckets * 32, of which 31 per bucket hold flows (lane 0 of each bucket's tag
//           line holds its overflow counts). Per bucket: a line of 32 2-byte tags and 31 Entries
//           {Key, Value, Nanos last_seen} padded to 16/32/64 B (slot s's entry is entry(s): none
//           is kept for lane 0). With Key = FlowKey (40 B) and Value <= 16 B an Entry is 64 B (one
//           cache line), so a bucket costs 2 KiB and a flow 2048 / 31 * 1.25 = 83 B (a full table
//           runs at 80% load); e.g. capacity 1M -> 40,324 buckets -> 78.8 MiB (rte_hash for the
//           same 1.25M entries: 81.2 MiB). Tags and entries live in HugeArray (2 MiB pages where
//           transparent huge pages are enabled: a 1M-flow table then costs the TLB 41 entries,
//           not 20k), written once at construction so the packet path takes no page faults.
// Counters: expired (lazy + sweep), insert_failed (both candidate buckets full of live flows).
// Cost:     one hash + 1 tag line (2 when the key is not in its first bucket and that bucket's
//           overflow count of the key's class is not zero: at 80% load ~13% of misses and ~3% of
//           hits) + 1 entry line; batched (hash all, prefetch tag lines, prefetch entries). See
//           docs/performance.md section 6 (peers_lib_bench hash: vs rte_hash, 1k and 1M flows).
//
// Theory of operation. A bucket's 32 16-bit tags fill one cache line: lane 0 counts the keys whose
// first bucket this is but which live in their second one ("overflow"), as four 4-bit counts, one
// per class of tag (t & 3); lanes 1-31 tag the slots. A key hashes to a first bucket b1 (the low
// 32 bits of the hash reduced to [0, buckets) by multiply-shift, so any bucket count works, not
// only powers of two) and a 15-bit tag t (high bits, never 0); its second bucket is b2 = (f(t) -
// b1) mod buckets, so either bucket and the tag give the other (f is odd and the bucket count
// even, so b2 != b1). A key in b1 is tagged t, in b2 t | 0x8000: a tag match in b2 is therefore
// always a key whose first bucket is b1. Lookups compare the 31 tags of b1 in one vector compare,
// read the entries whose tag matches, and read b2's line only when b1's overflow count of the
// key's class is not zero — so most misses cost one tag line (MemC3/rte_hash read both candidate
// buckets every time). Inserts fill b1 while it holds fewer than kFirstChoice (28) flows, then
// take the emptier of b1 and b2 ("power of two choices", counting the overflow in b1), then an
// expired entry of either. Simulated and tested: no insert fails up to the 80% load the 5/4
// sizing gives (the first failure comes at 85-93%); at 80% load ~25% of buckets have overflowed
// (with one count for the bucket ~25% of misses would read b2; the four classes make it ~13%).
// Entries never move, so a slot index is a stable handle until the entry is erased (NAT keeps slot
// indices in its reverse map). Expiry is lazy: an entry idle for more than idle_timeout is removed
// when a lookup or insert meets it, and sweep() walks a bounded number of slots per call so that
// dead flows leave even when nothing touches them (and requests the next call's tag line and
// entries before it returns: in a large table they are cold). Every removal of a live-at-insert
// entry by expiry calls the OnExpire hook (key, value, slot) before the slot is cleared; erase()
// does not. Removing a key that lives in its b2 decrements its class's count in b1 (b1 = (f(t) -
// b2) mod buckets); a count saturates at 15 and then stays (lookups of that class in that bucket
// always read b2: slower, never wrong). Insert fails (returns kNone, counted) only when both
// candidate buckets hold 31 live flows. Nothing is allocated after construction.
// Refs:     Pagh & Rodler, "Cuckoo hashing" (2001); Fan et al., "MemC3" (NSDI'13, tags + 2
//           choices); DPDK rte_hash (16-bit signatures, bulk lookup: hash all, prefetch,
//           compare); the overflow count follows the "bucket overflow" bits of Horton tables
//           (Breslow et al., ATC'16), simplified to counts in the tag line; Lemire, "A fast
//           alternative to the modulo reduction" (2016, multiply-shift).
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
#if defined(__AVX512BW__)
#include <immintrin.h>
#endif

#include "core/flow_key.h"
#include "core/hot_path.h"
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
  static constexpr uint32_t kWays = 32;  // tag lanes per bucket (one cache line of uint16)
  static constexpr uint32_t kFlowWays = kWays - 1;  // lane 0 is the overflow count
  // b1 is filled alone up to this many flows before an insert considers b2 (see above).
  static constexpr uint32_t kFirstChoice = 28;
  static constexpr uint32_t kNone = UINT32_MAX;
  // Slots the NFs sweep per burst: a 1M-flow table (1.29M slots) is swept every
  // 81k bursts (2.6M packets).
  static constexpr size_t kSweepPerBurst = 16;
  struct alignas(kAlign) Entry {
    Key key;
    Value value;
    Nanos last_seen;
  };

  // Buckets for `capacity` flows: capacity * 5/4 flow lanes (31 a bucket), rounded up to an even
  // count (at least 2): a full table runs at no more than 80% load, whatever the capacity.
  static constexpr uint32_t buckets_for(size_t capacity) {
    const size_t lanes = capacity + capacity / 4;
    const size_t b = std::max<size_t>((lanes + kFlowWays - 1) / kFlowWays, 2);
    return uint32_t(b + (b & 1));
  }
  // Bytes of a table of `capacity` flows (tags and entries).
  static constexpr size_t bytes_for(size_t capacity) {
    return size_t(buckets_for(capacity)) * kBucketBytes;
  }

  FlowTable(size_t capacity, Nanos idle_timeout, OnExpire hook = {}, Hash hasher = {})
      : timeout_(idle_timeout), hook_(hook), hash_(hasher) {
    buckets_ = buckets_for(capacity);
    slots_ = size_t(buckets_) * kWays;
    // Huge pages where the kernel gives them (a 1M-flow table spans 79 MiB: 4 KiB pages would
    // miss the TLB on every lookup); written once here so no page faults on the packet path.
    tag_mem_.resize(slots_, 0);
    entry_mem_.resize(size_t(buckets_) * kFlowWays, Entry{});
    tags_ = tag_mem_.data();
    entries_ = entry_mem_.data();
    std::memset(tags_, 0, slots_ * sizeof(uint16_t));
    std::memset(static_cast<void*>(entries_), 0, size_t(buckets_) * kFlowWays * sizeof(Entry));
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
    std::swap(buckets_, o.buckets_);
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

  // Stage 1 of a batch: prefetch the tag line of the key's first bucket.
  void prefetch_buckets(uint64_t h) const { prefetch_line(&tags_[b1(h) * kWays]); }
  // Stage 2: read the (prefetched) tags and prefetch the entry that will probably match, or the
  // second bucket's tag line when the key is not in the first and the first has overflowed.
  // `for_insert` (callers that insert what they do not find): a key absent from its first bucket
  // also prefetches, for writing, the entry an insert would take there — an insert's cost is the
  // tag line plus that entry line, and a burst's new flows then fetch them together (a 1M-flow
  // table: one by one ~350 ns/insert, staged 44-54 vs 59-70 without it; it costs pure lookups a
  // line they do not need, hence not the default).
  void prefetch_entry(uint64_t h, bool for_insert = false) const {
    const uint32_t c1 = b1(h), t = tag(h);
    if (const uint32_t m = match(c1, t)) {
      prefetch_line(&entry(c1 * kWays + uint32_t(std::countr_zero(m))));
    } else if (overflow(c1, t)) {
      prefetch_line(&tags_[alt(c1, t) * kWays]);
    } else if (const uint32_t e = for_insert ? match(c1, 0) : 0) {
      prefetch_line_w(&entry(c1 * kWays + uint32_t(std::countr_zero(e))));
    }
  }

  // Live entry of `k` or kNone. Refreshes last_seen when `touch`. Expired matches are removed.
  uint32_t find(const Key& k, uint64_t h, Nanos now, bool touch = true) {
    const uint32_t c1 = b1(h), t = tag(h);
    uint32_t s = find_in(c1, t, k);
    if (s == kNone && overflow(c1, t)) s = find_in(alt(c1, t), t | kSecond, k);
    if (s == kNone) return kNone;
    Entry& e = entry(s);
    if (expired(e, now)) {
      expire(s);
      return kNone;
    }
    if (touch && now > e.last_seen) e.last_seen = now;  // a held packet may be older
    return s;
  }

  // Finds `k` or inserts it with a value-initialised Value. `inserted` tells which.
  // Returns kNone (and counts insert_failed) when no slot is free.
  uint32_t find_or_insert(const Key& k, uint64_t h, Nanos now, bool& inserted) {
    inserted = false;
    uint32_t s = find(k, h, now);
    if (s != kNone) return s;
    s = place(b1(h), tag(h), now);
    if (s == kNone) {
      ++insert_failed_;
      return kNone;
    }
    entry(s).key = k;
    entry(s).value = Value{};
    entry(s).last_seen = now;
    ++size_;
    inserted = true;
    return s;
  }

  // Removes the entry at `slot` without calling the hook.
  void erase(uint32_t slot) {
    if (!occupied(slot)) return;
    clear(slot);
    --size_;
  }
  // True when `slot` holds an entry (lane 0 of a bucket never does: it is the overflow count).
  bool occupied(uint32_t slot) const {
    return slot < slots_ && (slot & (kWays - 1)) != 0 && tags_[slot] != 0;
  }
  Entry& at(uint32_t slot) { return entry(slot); }
  const Entry& at(uint32_t slot) const { return entry(slot); }
  // True when the entry at `slot` is live at `now`; an expired one is removed (hook called).
  bool live(uint32_t slot, Nanos now) {
    if (!occupied(slot)) return false;
    if (!expired(entry(slot), now)) return true;
    expire(slot);
    return false;
  }

  // Examines up to `max_slots` slots from an internal cursor and removes expired entries.
  size_t sweep(Nanos now, size_t max_slots) {
    if (timeout_ <= 0) return 0;
    size_t removed = 0;
    for (size_t i = 0; i < max_slots; ++i) {
      const uint32_t s = cursor_;
      if (++cursor_ == slots_) cursor_ = 0;
      if (occupied(s) && expired(entry(s), now)) {
        expire(s);
        ++removed;
      }
    }
    // The next call's slots, requested now so that they arrive before it: the sweep reads
    // cold lines (a 16-slot window of a large table: its tag line and ~10 entry lines), which
    // otherwise stall each burst's sweep (a hint: nothing else changes).
    prefetch_line(&tags_[cursor_]);
    for (size_t i = 0, s = cursor_; i < max_slots; ++i, s = s + 1 == slots_ ? 0 : s + 1)
      if (s % kWays) prefetch_line(&entry(uint32_t(s)));
    return removed;
  }

  template <class F>
  void for_each(F&& f) const {
    for (size_t s = 0; s < slots_; ++s)
      if (occupied(uint32_t(s))) f(entry(s));
  }

  size_t size() const { return size_; }
  size_t slots() const { return slots_; }
  Nanos idle_timeout() const { return timeout_; }
  uint64_t expired_count() const { return expired_; }
  uint64_t insert_failed() const { return insert_failed_; }
  // Keys of `slot`'s bucket that live in their second bucket (for tests and diagnostics).
  // (The four classes' counts summed; a saturated class counts 15.)
  uint32_t overflow_of(uint32_t slot) const {
    uint32_t n = 0;
    for (uint32_t c = 0; c < 4; ++c) n += overflow(slot / kWays, c);
    return n;
  }
  // Bytes of a bucket: its tag line and 31 entries (lane 0, the overflow counts, has none).
  static constexpr size_t kBucketBytes = kWays * sizeof(uint16_t) + kFlowWays * sizeof(Entry);
  size_t bytes() const { return size_t(buckets_) * kBucketBytes; }

 private:
  static constexpr uint16_t kSecond = 0x8000;  // tag bit: the key lives in its second bucket
  static constexpr uint32_t kSaturated = 0xF;  // an overflow class's count stays here
  static constexpr uint32_t kFlowLanes = ~1u;  // lanes 1-31 of a match mask

  // 15 high bits of the hash, 0 mapped to 1 (0 marks an empty slot).
  static uint32_t tag(uint64_t h) {
    const uint32_t t = uint32_t(h >> 49);
    return t | uint32_t(t == 0);
  }
  // The entry of slot s (lanes 1-31 of bucket s / 32: 31 entries a bucket, none for lane 0).
  Entry& entry(uint32_t s) { return entries_[s - s / kWays - 1]; }
  const Entry& entry(uint32_t s) const { return entries_[s - s / kWays - 1]; }
  // [0, n) from 32 uniform bits: multiply-shift (Lemire), no power-of-two mask, no division.
  static uint32_t reduce(uint32_t x, uint32_t n) { return uint32_t(uint64_t(x) * n >> 32); }
  uint32_t b1(uint64_t h) const { return reduce(uint32_t(h), buckets_); }
  // The other candidate bucket of a key tagged t: (f - b) mod buckets with f = f(t) odd. Either
  // way (alt(alt(b, t), t) == b), and never b itself: 2b = f (mod an even count) has no solution
  // for an odd f.
  uint32_t alt(uint32_t b, uint32_t t) const {
    const uint32_t f = reduce((t & 0x7FFFu) * 0x5bd1e995u, buckets_) | 1u;
    return f >= b ? f - b : f + buckets_ - b;
  }
  // Keys of first bucket b and tag class t & 3 that live in their second bucket: lane 0 holds
  // four 4-bit counts, one per class, so a miss reads b2 only when its own class has spilled.
  uint32_t overflow(uint32_t b, uint32_t t) const {
    return uint32_t(tags_[b * kWays] >> ((t & 3) * 4)) & kSaturated;
  }
  // Adds `d` (+1 or -1) to the count of b's class t & 3, unless saturated.
  void count_overflow(uint32_t b, uint32_t t, int d) {
    if (overflow(b, t) != kSaturated)
      tags_[b * kWays] = uint16_t(tags_[b * kWays] + (d << ((t & 3) * 4)));
  }
  // Bit i set when lane i (1-31) of bucket b carries tag t: one compare of the 64-byte line.
  uint32_t match(uint32_t b, uint32_t t) const {
    const uint16_t* g = &tags_[b * kWays];
#if defined(__AVX512BW__)
    return _mm512_cmpeq_epi16_mask(_mm512_load_si512(g), _mm512_set1_epi16(short(t))) & kFlowLanes;
#else
    uint32_t m = 0;
    for (uint32_t i = 0; i < kWays; ++i) m |= uint32_t(g[i] == t) << i;
    return m & kFlowLanes;
#endif
  }
  uint32_t find_in(uint32_t b, uint32_t t, const Key& k) const {
    for (uint32_t m = match(b, t); m; m &= m - 1) {
      const uint32_t s = b * kWays + uint32_t(std::countr_zero(m));
      if (entry(s).key == k) return s;
    }
    return kNone;
  }
  bool expired(const Entry& e, Nanos now) const {
    return timeout_ > 0 && now - e.last_seen > timeout_;
  }
  // Empties `slot` (tag and, for a key in its second bucket, the first bucket's overflow count).
  void clear(uint32_t slot) {
    const uint32_t t = tags_[slot];
    tags_[slot] = 0;
    if (!(t & kSecond)) return;
    count_overflow(alt(slot / kWays, t), t, -1);
  }
  // Out of line (rare next to lookups): keeps find() small enough to inline into burst loops.
  NFPARK_COLD void expire(uint32_t s) {
    hook_(entry(s).key, entry(s).value, s);
    clear(s);
    --size_;
    ++expired_;
  }
  // Tags and returns a free slot for a key (first bucket c1, tag t): c1 while it holds fewer
  // than kFirstChoice flows, else the emptier of c1 and its second bucket (ties: c1), else an
  // expired entry of either (c1 first); kNone when both hold 31 live flows.
  uint32_t place(uint32_t c1, uint32_t t, Nanos now) {
    const uint32_t c2 = alt(c1, t);
    const uint32_t e1 = match(c1, 0);
    uint32_t pick = kNone;
    bool second = false;
    if (kFlowWays - uint32_t(std::popcount(e1)) < kFirstChoice) {
      pick = c1 * kWays + uint32_t(std::countr_zero(e1));
    } else {
      const uint32_t e2 = match(c2, 0);
      if (e1 | e2) {
        second = std::popcount(e2) > std::popcount(e1);
        pick = second ? c2 * kWays + uint32_t(std::countr_zero(e2))
                      : c1 * kWays + uint32_t(std::countr_zero(e1));
      } else {
        for (uint32_t b : {c1, c2}) {
          for (uint32_t i = 1; i < kWays && pick == kNone; ++i) {
            if (expired(entry(b * kWays + i), now)) {
              pick = b * kWays + i;
              second = b == c2;
              expire(pick);
            }
          }
        }
        if (pick == kNone) return kNone;
      }
    }
    tags_[pick] = uint16_t(second ? t | kSecond : t);
    if (second) {
      count_overflow(c1, t, +1);
    }
    return pick;
  }

  Nanos timeout_;
  OnExpire hook_;
  Hash hash_;
  size_t slots_ = 0;
  uint32_t buckets_ = 0;         // even, at least 2
  HugeArray<uint16_t> tag_mem_;  // 64-byte aligned: one bucket's tags = one cache line
  HugeArray<Entry> entry_mem_;   // 31 a bucket: slot s's entry is entry(s)
  uint16_t* tags_ = nullptr;     // tag_mem_.data(), entry_mem_.data()
  Entry* entries_ = nullptr;
  size_t size_ = 0;
  uint32_t cursor_ = 0;
  uint64_t expired_ = 0, insert_failed_ = 0;
};

}  // namespace nfpark::nf
