#include "kvs/item_store.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "core/hot_path.h"

namespace nfpark::kvs {

ItemStore::ItemStore(uint64_t log_bytes, uint32_t index_entries, Listener* listener)
    : cap_(log_bytes & ~uint64_t(7)),
      cap_mask_(std::has_single_bit(cap_) ? cap_ - 1 : 0),
      log_(new uint8_t[cap_]),
      scratch_(new uint8_t[cap_ / 2]),
      listener_(listener) {
  const uint32_t buckets = std::bit_ceil(std::max<uint32_t>(index_entries / kWays, 1));
  entries_.resize(size_t(buckets) * kWays);
  bucket_mask_ = buckets - 1;
}

uint32_t ItemStore::find(std::string_view key, uint64_t hash) const {
  const uint32_t b = uint32_t(hash & bucket_mask_) * kWays;
  const auto tag = uint32_t(hash >> 32);
  for (uint32_t w = 0; w < kWays; ++w) {
    const Entry& e = entries_[b + w];
    if (e.offset >= kMoving || e.tag != tag) continue;
    const RecordHeader* h = hdr(e.offset);
    if (h->nkey == key.size() &&
        std::memcmp(reinterpret_cast<const uint8_t*>(h) + sizeof(RecordHeader), key.data(),
                    key.size()) == 0)
      return b + w;
  }
  return kNotFound;
}

void ItemStore::prefetch_record(uint64_t hash) const {
  const uint32_t b = uint32_t(hash & bucket_mask_) * kWays;
  const auto tag = uint32_t(hash >> 32);
  for (uint32_t w = 0; w < kWays; ++w)
    if (entries_[b + w].tag == tag && entries_[b + w].offset < kMoving)
      prefetch_line(hdr(entries_[b + w].offset));
}

const uint8_t* ItemStore::data(uint32_t pos) const {
  const RecordHeader* h = hdr(entries_[pos].offset);
  return reinterpret_cast<const uint8_t*>(h) + sizeof(RecordHeader) + h->nkey;
}

void ItemStore::lose(Entry& e) {
  if (e.hot && listener_) listener_->lost(e.hot - 1);
  e = Entry{};
  --items_;
}

void ItemStore::evict_record(uint64_t off, const RecordHeader& h) {
  const uint32_t b = uint32_t(h.hash & bucket_mask_) * kWays;
  for (uint32_t w = 0; w < kWays; ++w) {
    if (entries_[b + w].offset == off) {  // still the item's current record: the item goes
      ++c_.evictions;
      lose(entries_[b + w]);
      return;
    }
  }  // garbage: an older version, a deleted item or one the index dropped
}

void ItemStore::make_room(uint64_t end) {
  while (end - tail_ > cap_) {
    const RecordHeader* h = hdr(tail_);
    if (h->size == 0) {  // padding: the rest of this lap is unused
      tail_ += cap_ - phys(tail_);
      continue;
    }
    const RecordHeader copy = *h;
    evict_record(tail_, copy);
    tail_ += copy.size;
  }
}

uint64_t ItemStore::append(uint64_t size) {
  const uint64_t at = phys(head_);
  if (at + size > cap_) {  // records never straddle the end: pad to the next lap
    const uint64_t lap_end = head_ + (cap_ - at);
    make_room(lap_end);
    hdr(head_)->size = 0;
    head_ = lap_end;
  }
  make_room(head_ + size);
  const uint64_t off = head_;
  head_ += size;
  return off;
}

uint32_t ItemStore::insert(uint64_t hash, uint64_t off) {
  const uint32_t b = uint32_t(hash & bucket_mask_) * kWays;
  uint32_t pos = b;
  for (uint32_t w = 0; w < kWays; ++w) {
    if (entries_[b + w].offset == kEmpty) {
      pos = b + w;
      break;
    }
    if (entries_[b + w].offset < entries_[pos].offset) pos = b + w;
  }
  if (entries_[pos].offset != kEmpty) {  // bucket full: drop its oldest item
    ++c_.index_evictions;
    lose(entries_[pos]);
  }
  entries_[pos] = Entry{off, uint32_t(hash >> 32), 0};
  ++items_;
  return pos;
}

uint32_t ItemStore::put(std::string_view key, uint64_t hash, uint32_t flags, int64_t expiry,
                        uint64_t cas, const uint8_t* data, uint32_t nbytes) {
  const uint64_t size = record_size(uint32_t(key.size()), nbytes);
  const uint32_t pos = find(key, hash);
  if (pos != kNotFound) entries_[pos].offset = kMoving;  // the old record is garbage now
  const uint64_t off = append(size);
  auto* h = hdr(off);
  *h = RecordHeader{uint32_t(size), nbytes, flags, uint16_t(key.size()), 0, expiry, cas, hash};
  uint8_t* p = reinterpret_cast<uint8_t*>(h) + sizeof(RecordHeader);
  std::memcpy(p, key.data(), key.size());
  std::memcpy(p + key.size(), data, nbytes);
  if (pos != kNotFound) {
    entries_[pos].offset = off;
    return pos;
  }
  return insert(hash, off);
}

void ItemStore::maybe_reinsert(uint32_t pos, uint64_t keep_from) {
  Entry& e = entries_[pos];
  if (head_ - e.offset <= cap_ - cap_ / 4) return;  // not in the oldest quarter
  const RecordHeader* h = hdr(e.offset);
  const uint32_t size = h->size;
  const uint64_t at = phys(head_);
  const uint64_t new_head = head_ + (at + size > cap_ ? cap_ - at : 0) + size;
  if (new_head > cap_ && new_head - cap_ > keep_from) return;  // would overwrite it
  std::memcpy(scratch_.get(), h, size);  // the append below may overwrite the old bytes
  e.offset = kMoving;
  const uint64_t off = append(size);
  std::memcpy(hdr(off), scratch_.get(), size);
  e.offset = off;
  ++c_.reinserts;
}

void ItemStore::erase(uint32_t pos) {
  entries_[pos] = Entry{};
  --items_;
}

}  // namespace nfpark::kvs
