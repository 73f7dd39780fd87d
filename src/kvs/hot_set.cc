#include "kvs/hot_set.h"

#include <cstring>

namespace nfpark::kvs {

HotSet::HotSet(uint8_t* base, uint64_t bytes, uint32_t max_items, uint64_t max_block)
    : base_(base), region_(base ? bytes : 0, max_block), entries_(base ? max_items : 0) {
  free_slots_.reserve(entries_.size());
  for (uint32_t i = uint32_t(entries_.size()); i-- > 0;) free_slots_.push_back(i);
}

uint64_t HotSet::block_need(uint32_t nbytes, bool& trailer) const {
  const uint64_t value = nbytes - 2;  // nbytes counts the value's "\r\n"
  trailer = region_.fit(value + kTrailer) == region_.fit(value ? value : 1);
  return trailer ? value + kTrailer : value;
}

bool HotSet::can_fit(uint32_t nbytes) const {
  bool trailer = false;
  return !free_slots_.empty() && region_.can_alloc(block_need(nbytes, trailer));
}

bool HotSet::write_stable(Entry& e, const uint8_t* data, uint32_t nbytes) {
  bool trailer = false;
  const uint64_t need = block_need(nbytes, trailer);
  if (e.offset != Region::kNone && region_.block_size(e.offset) != region_.fit(need)) drop_block(e);
  if (e.offset == Region::kNone) {
    e.offset = region_.alloc(need);
    if (e.offset == Region::kNone) return false;
  }
  // The only CPU accesses to the region: writes (write-combined on real nicmem).
  std::memcpy(base_ + e.offset, data, nbytes - 2);
  if (trailer) std::memcpy(base_ + e.offset + nbytes - 2, "\r\nEND\r\n", kTrailer);
  e.nbytes = nbytes;
  e.trailer = trailer;
  e.valid = true;
  return true;
}

void HotSet::drop_block(Entry& e) {
  if (e.offset != Region::kNone) region_.free(e.offset);
  e.offset = Region::kNone;
  e.valid = false;
}

uint32_t HotSet::promote(const uint8_t* data, uint32_t nbytes, uint64_t hash, uint32_t index_pos,
                         bool pinned, uint32_t hits, uint32_t epoch) {
  if (free_slots_.empty()) return kNone;
  const uint32_t slot = free_slots_.back();
  Entry& e = entries_[slot];
  e.offset = Region::kNone;
  if (!write_stable(e, data, nbytes)) return kNone;
  free_slots_.pop_back();
  e.hash = hash;
  e.index_pos = index_pos;
  e.refs = 0;
  e.live = true;
  e.pinned = pinned;
  e.hits = hits;
  e.epoch = epoch;
  ++e.gen;
  ++live_;
  ++c_.promotions;
  return slot;
}

HotSet::Served HotSet::serve(uint32_t slot, const uint8_t* pending, uint32_t nbytes) {
  Entry& e = entries_[slot];
  Served s;
  if (!e.valid) {
    if (e.refs > 0) {  // the stable buffer is in flight: never overwrite it
      ++c_.pending_copies;
      return s;
    }
    if (!write_stable(e, pending, nbytes)) {
      ++c_.refresh_failed;
      return s;
    }
    ++c_.swaps;
  } else {
    ++c_.stable_hits;
  }
  ++e.refs;
  ++refs_;
  s.zero_copy = true;
  s.data = base_ + e.offset;
  s.len = e.trailer ? e.nbytes : e.nbytes - 2;
  s.room = e.trailer ? e.nbytes + kEndMarker : s.len;
  s.ref = HotRef{slot, e.gen};
  return s;
}

void HotSet::invalidate(uint32_t slot) {
  Entry& e = entries_[slot];
  if (e.valid) ++c_.invalidations;
  e.valid = false;
}

void HotSet::free_slot(uint32_t slot) {
  Entry& e = entries_[slot];
  drop_block(e);
  e.live = false;
  ++e.gen;  // a HotRef of the old generation can no longer match
  free_slots_.push_back(slot);
}

void HotSet::demote(uint32_t slot) {
  Entry& e = entries_[slot];
  if (!e.live) return;
  e.live = false;
  e.valid = false;
  --live_;
  ++c_.demotions;
  if (e.refs == 0) {
    free_slot(slot);
  } else {
    ++zombies_;
  }
}

void HotSet::release(HotRef ref) {
  if (ref.slot >= entries_.size() || entries_[ref.slot].gen != ref.gen ||
      entries_[ref.slot].refs == 0) {
    ++c_.stale_releases;  // never expected: counted so that tests can assert it stays 0
    return;
  }
  Entry& e = entries_[ref.slot];
  --e.refs;
  --refs_;
  if (e.refs == 0 && !e.live) {
    --zombies_;
    free_slot(ref.slot);
  }
}

}  // namespace nfpark::kvs
