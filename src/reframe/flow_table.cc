#include "reframe/flow_table.h"

#include "core/flow_key.h"

namespace nfpark::reframe {

FlowTable::FlowTable(uint32_t max_flows) {
  uint64_t want = uint64_t(max_flows) * 5 / 4 + kWays;  // load factor <= 80%
  uint64_t buckets = (want + kWays - 1) / kWays;
  if (buckets < 2) buckets = 2;
  buckets_ = uint32_t(buckets);
  keys_.assign(buckets * kWays, 0);
  entries_.assign(buckets * kWays, FlowEntry{});
}

uint32_t FlowTable::bucket2(uint64_t key, uint32_t b1) const {
  uint32_t b2 = reduce(mix64(key ^ 0x9e3779b97f4a7c15ULL));
  return b2 != b1 ? b2 : (b1 + 1 == buckets_ ? 0 : b1 + 1);
}

void FlowTable::reset(uint32_t slot, uint64_t key, Nanos now) {
  keys_[slot] = key;
  FlowEntry& e = entries_[slot];
  e = FlowEntry{};
  e.first_seen = now;
  e.last_arrival = now;
}

void FlowTable::prefetch_entry(uint64_t key) const {
  const uint32_t b1 = reduce(key);
  const uint32_t base[2] = {b1 * kWays, bucket2(key, b1) * kWays};
  for (uint32_t base_slot : base) {
    for (uint32_t i = 0; i < kWays; ++i) {
      if (keys_[base_slot + i] == key) {
        __builtin_prefetch(&entries_[base_slot + i], 1);
        return;
      }
    }
  }
}

FlowTable::Lookup FlowTable::find_or_insert(uint64_t key, Nanos now, Nanos idle_timeout) {
  Lookup r;
  const uint32_t b1 = reduce(key);
  const uint32_t b2 = bucket2(key, b1);
  const uint32_t base[2] = {b1 * kWays, b2 * kWays};
  uint32_t empty = kNone;
  for (uint32_t base_slot : base) {
    for (uint32_t i = 0; i < kWays; ++i) {
      const uint32_t s = base_slot + i;
      if (keys_[s] == key) {
        FlowEntry& e = entries_[s];
        if (!e.busy() && now - e.last_arrival >= idle_timeout) {  // lazily expired: recycle
          reset(s, key, now);
          r.is_new = r.expired = true;
        }
        r.slot = s;
        return r;
      }
      if (keys_[s] == 0 && empty == kNone) empty = s;
    }
  }
  if (empty == kNone) {  // evict the least recently seen idle candidate
    Nanos oldest = 0;
    for (uint32_t base_slot : base) {
      for (uint32_t i = 0; i < kWays; ++i) {
        const uint32_t s = base_slot + i;
        const FlowEntry& e = entries_[s];
        if (!e.busy() && (empty == kNone || e.last_arrival < oldest)) {
          empty = s;
          oldest = e.last_arrival;
        }
      }
    }
    if (empty == kNone) return r;  // every candidate is holding packets
    r.evicted = true;
    --size_;
  }
  reset(empty, key, now);
  ++size_;
  r.slot = empty;
  r.is_new = true;
  return r;
}

}  // namespace nfpark::reframe
