#include "kvs/cache.h"

#include "core/flow_key.h"

namespace nfpark::kvs {

namespace {
uint32_t default_index(const CacheConfig& c) {
  if (c.index_entries) return c.index_entries;
  const uint64_t n = c.log_bytes / 256;
  return uint32_t(n < 1024 ? 1024 : n > (1u << 30) ? (1u << 30) : n);
}
}  // namespace

Cache::Cache(const CacheConfig& cfg, uint8_t* region, uint64_t region_bytes)
    : store_(cfg.log_bytes, default_index(cfg), this),
      hot_(region, region_bytes, cfg.hot_items, cfg.hot_max_block),
      policy_(cfg.policy),
      auto_hot_(cfg.auto_hot),
      zc_min_(cfg.zc_min),
      pinned_(cfg.pinned.begin(), cfg.pinned.end()) {}

bool Cache::expired(uint32_t pos, Nanos now) const {
  const int64_t e = store_.header(pos).expiry;
  return e != 0 && e <= now / kSecond;
}

void Cache::drop(uint32_t pos) {
  const uint32_t slot = store_.hot(pos);
  if (slot != HotSet::kNone) hot_.demote(slot);
  store_.erase(pos);
}

bool Cache::pinned(std::string_view key) const {
  return !pinned_.empty() && pinned_.find(key) != pinned_.end();
}

uint32_t Cache::pick_victim(uint32_t& best_freq) {
  uint32_t best = HotSet::kNone;
  best_freq = UINT32_MAX;
  const uint32_t cap = hot_.capacity();
  for (uint32_t tries = 0, found = 0;
       cap && found < policy_.samples() && tries < 4 * policy_.samples(); ++tries) {
    const auto slot = uint32_t(policy_.next_random() % cap);
    const HotSet::Entry& e = hot_.entry(slot);
    if (!e.live || e.pinned) continue;
    ++found;
    const uint32_t f = HotSet::decayed(e, policy_.epoch());
    if (f < best_freq) {
      best = slot;
      best_freq = f;
    }
  }
  return best;
}

uint32_t Cache::maybe_promote(uint32_t pos, std::string_view key, uint64_t hash, uint32_t freq) {
  const bool pin = pinned(key);
  if (!pin && (!auto_hot_ || freq < policy_.promote_min())) return HotSet::kNone;
  const RecordHeader& h = store_.header(pos);
  if (h.nbytes - 2 < zc_min_) return HotSet::kNone;  // cheaper to copy
  if (!hot_.can_fit(h.nbytes)) {
    if (floor_epoch_ != policy_.epoch()) admit_floor_ = 0;  // estimates halved since
    if (!pin && freq <= admit_floor_) return HotSet::kNone;
    uint32_t victim_freq = 0;
    const uint32_t victim = pick_victim(victim_freq);
    if (victim == HotSet::kNone) return HotSet::kNone;
    if (!pin && victim_freq >= freq) {
      admit_floor_ = victim_freq;
      floor_epoch_ = policy_.epoch();
      return HotSet::kNone;
    }
    store_.clear_hot(hot_.entry(victim).index_pos);
    hot_.demote(victim);
    if (!hot_.can_fit(h.nbytes)) return HotSet::kNone;  // its block is still in flight
  }
  const uint32_t slot =
      hot_.promote(store_.data(pos), h.nbytes, hash, pos, pin, freq, policy_.epoch());
  if (slot != HotSet::kNone) {
    store_.set_hot(pos, slot);
    admit_floor_ = 0;
  }
  return slot;
}

Cache::Hit Cache::get(std::string_view key, Nanos now, bool zero_copy) {
  ++c_.get_keys;
  Hit r;
  const uint64_t hash = hash_bytes(key.data(), key.size());
  const uint32_t pos = store_.find(key, hash);
  if (pos == ItemStore::kNotFound) {
    ++c_.get_misses;
    return r;
  }
  if (expired(pos, now)) {
    drop(pos);
    ++c_.get_expired;
    ++c_.get_misses;
    return r;
  }
  ++c_.get_hits;
  store_.maybe_reinsert(pos, keep_from_);
  const RecordHeader& h = store_.header(pos);
  r.found = true;
  r.flags = h.flags;
  r.nbytes = h.nbytes;
  r.cas = h.cas;
  r.data = store_.data(pos);
  if (zero_copy && r.nbytes - 2 >= zc_min_) {
    uint32_t slot = store_.hot(pos);
    if (slot != HotSet::kNone)
      hot_.hit(slot, policy_.epoch());
    else
      slot = maybe_promote(pos, key, hash, policy_.touch(hash));
    if (slot != HotSet::kNone) {
      r.hot = hot_.serve(slot, r.data, r.nbytes);
      if (r.hot.zero_copy) ++c_.hot_hits;
    }
  }
  if (!r.hot.zero_copy && store_.offset(pos) < keep_from_) keep_from_ = store_.offset(pos);
  return r;
}

Cache::Result Cache::store(Mode mode, std::string_view key, uint32_t flags, int64_t expiry,
                           const uint8_t* data, uint32_t nbytes, uint64_t cas, Nanos now) {
  ++c_.stores;
  const uint64_t hash = hash_bytes(key.data(), key.size());
  uint32_t pos = store_.find(key, hash);
  if (pos != ItemStore::kNotFound && expired(pos, now)) {
    drop(pos);
    pos = ItemStore::kNotFound;
  }
  const bool exists = pos != ItemStore::kNotFound;
  Result res = Result::kStored;
  if (mode == Mode::kAdd && exists) res = Result::kNotStored;
  if (mode == Mode::kReplace && !exists) res = Result::kNotStored;
  if (mode == Mode::kCas)
    res = !exists                         ? Result::kNotFound
          : store_.header(pos).cas != cas ? Result::kExists
                                          : Result::kStored;
  switch (res) {
    case Result::kNotStored:
      ++c_.not_stored;
      return res;
    case Result::kExists:
      ++c_.exists;
      return res;
    case Result::kNotFound:
      ++c_.not_found;
      return res;
    case Result::kStored:
      break;
  }
  pos = store_.put(key, hash, flags, expiry, ++next_cas_, data, nbytes);
  ++c_.stored;
  const uint32_t slot = store_.hot(pos);
  if (slot != HotSet::kNone) {
    hot_.invalidate(slot);  // the new record is the pending buffer
  } else if (pinned(key)) {
    maybe_promote(pos, key, hash, 0);
  }
  return res;
}

bool Cache::remove(std::string_view key, Nanos now, bool count) {
  if (count) ++c_.deletes;
  const uint64_t hash = hash_bytes(key.data(), key.size());
  const uint32_t pos = store_.find(key, hash);
  if (pos == ItemStore::kNotFound) return false;
  const bool live = !expired(pos, now);
  drop(pos);
  if (live && count) ++c_.deleted;
  return live;
}

}  // namespace nfpark::kvs
