// FlatIndex: maps keys to dense indices 0, 1, 2, ... in insertion order, with open addressing
// (linear probing) over a power-of-two slot array. Used for per-flow and per-packet-id state in
// trace analysis, where std::unordered_map's node allocations dominate the run time.
//
// Keys are stored once, densely, in `keys()`; a slot holds the key's 64-bit hash and its index + 1
// (0 = empty). The table doubles when it is more than half full. There is no erase.
#pragma once
#include <cstdint>
#include <vector>

namespace nfpark::trace {

template <class Key>
class FlatIndex {
 public:
  explicit FlatIndex(size_t expected = 1024) { rehash(capacity_for(expected)); }

  // Returns the index of `key` (whose hash is `h`), inserting it when new (`inserted` = true).
  uint32_t find_or_insert(const Key& key, uint64_t h, bool& inserted) {
    if ((keys_.size() + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);
    size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.index == 0) {
        keys_.push_back(key);
        s.hash = h;
        s.index = uint32_t(keys_.size());
        inserted = true;
        return s.index - 1;
      }
      if (s.hash == h && keys_[s.index - 1] == key) {
        inserted = false;
        return s.index - 1;
      }
    }
  }
  // Index of `key`, or -1 when absent.
  int64_t find(const Key& key, uint64_t h) const {
    size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.index == 0) return -1;
      if (s.hash == h && keys_[s.index - 1] == key) return s.index - 1;
    }
  }
  size_t size() const { return keys_.size(); }
  const std::vector<Key>& keys() const { return keys_; }

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t index = 0;  // key index + 1; 0 = empty
  };
  static size_t capacity_for(size_t n) {
    size_t c = 16;
    while (c < n * 2) c *= 2;
    return c;
  }
  void rehash(size_t n) {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(n, Slot{});
    size_t mask = n - 1;
    for (const Slot& s : old) {
      if (s.index == 0) continue;
      size_t i = s.hash & mask;
      while (slots_[i].index != 0) i = (i + 1) & mask;
      slots_[i] = s;
    }
  }
  std::vector<Slot> slots_;
  std::vector<Key> keys_;
};

}  // namespace nfpark::trace
