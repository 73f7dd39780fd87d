// HugeArray<T>: a growable array of trivially copyable T in anonymous memory advised for
// transparent huge pages (madvise MADV_HUGEPAGE), for lookup tables too big for the TLB's reach
// in 4 KiB pages (the IPv4 LPM's 64 MiB DIR-24 root, its child groups, flow tables).
//
// Parameters: none. Memory: capacity * sizeof(T), rounded up to 2 MiB when it is at least
// kHugeFrom (256 KiB; then 2 MiB-aligned, so the kernel can back it with huge pages: /sys/kernel/
// mm/transparent_hugepage/enabled must be "always" or "madvise"; otherwise, or when madvise
// fails, the array works the same on 4 KiB pages). Why from 256 KiB: on this VM the kernel backs
// a 2 MiB page in ~30 us and 512 4 KiB pages in ~560 us (zeroing is the small part): a 256 KiB
// array on small pages already costs more to fault in (~70 us) than a huge page, at most 8x the
// memory (an LPM built at start-up: 1k IPv4 routes in ~3 MiB on small pages cost ~0.8 ms of
// faults, 8 MiB on huge pages ~0.1 ms). Growth doubles the capacity; a huge array grows by
// moving its mapping (mremap: its pages, huge ones whole, move with no copy and no new fault) to
// a 2 MiB-aligned address, a small one in place or moved (mremap), and from small to huge by a
// copy (so the new mapping is all huge pages); for build time only (never on a packet path).
// Pages are touched only when written: elements never written since they were mapped are known
// to be zero, so growing over them with a zero fill writes nothing and leaves their pages
// unbacked until first written (a trie's new child groups under "no route", a flow table's
// zeroed tags).
// Freed mappings go to MapCache (map_cache.h: process-wide, 64 MiB at most, zeroed at free where
// written), and a new array (or a growth) takes a kept one of the same kind first: a table built
// again writes into pages already backed, as DPDK's tables come from its heap. mapped_bytes()
// is what the array holds (a kept mapping is cut to what a fresh one would be; the rest stays
// kept); what the cache keeps is MapCache::global().bytes().
// Not DPDK: plain mmap, so the simulator and the unit tests use the same tables. Under
// AddressSanitizer the array lives on the heap instead (64-byte aligned), so ASan checks it.
#pragma once
#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#include "nf/map_cache.h"

namespace nfpark::nf {

template <class T>
class HugeArray {
  static_assert(std::is_trivially_copyable_v<T>);
  static constexpr size_t kHuge = size_t(2) << 20, kHugeFrom = size_t(256) << 10, kPage = 4096;
  static constexpr int kRw = PROT_READ | PROT_WRITE;

 public:
  // On the heap under AddressSanitizer (GCC defines __SANITIZE_ADDRESS__, clang 14 only
  // answers __has_feature), so ASan checks every access; in mapped memory otherwise.
#if defined(__SANITIZE_ADDRESS__)
  static constexpr bool kHeap = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  static constexpr bool kHeap = true;
#else
  static constexpr bool kHeap = false;
#endif
#else
  static constexpr bool kHeap = false;
#endif

  HugeArray() = default;
  HugeArray(const HugeArray&) = delete;
  HugeArray& operator=(const HugeArray&) = delete;
  HugeArray(HugeArray&& o) noexcept {
    swap(o);
  }
  HugeArray& operator=(HugeArray&& o) noexcept {
    HugeArray(std::move(o)).swap(*this);
    return *this;
  }
  ~HugeArray() {
    release();
  }

  size_t size() const {
    return n_;
  }
  T* data() {
    return p_;
  }
  const T* data() const {
    return p_;
  }
  T& operator[](size_t i) {
    return p_[i];
  }
  const T& operator[](size_t i) const {
    return p_[i];
  }
  // Bytes mapped (what the table costs in memory).
  size_t mapped_bytes() const {
    return map_len_;
  }

  // Grows (or shrinks) to n elements; new elements are `fill`. Throws std::bad_alloc.
  void resize(size_t n, const T& fill) {
    if (n > cap_) reserve(std::max(n, cap_ * 2));
    static constexpr unsigned char kZero[sizeof(T)] = {};
    // Elements from dirty_ on were never written since they were mapped: zero already.
    const size_t end = std::memcmp(&fill, kZero, sizeof(T)) != 0 ? n : std::min(n, dirty_);
    for (size_t i = n_; i < end; ++i) p_[i] = fill;
    n_ = n;
    dirty_ = std::max(dirty_, n);  // the caller may write anything below n
  }
  // Capacity for at least n elements (nothing written, nothing backed until written).
  void reserve_for(size_t n) {
    if (n > cap_) reserve(n);
  }
  // Back the pages of every later growth at once (one madvise(MADV_POPULATE_WRITE), not one
  // fault per page, and no read fault on the shared zero page before the write fault): for
  // arrays written soon after they grow (a trie's root and groups, a lookup image). Only while
  // the array is small: from kHugeFrom on it faults in 2 MiB pages (one fault each), and a
  // doubling would back pages never used. Off by default.
  void populate(bool on) {
    populate_ = on;
  }
  // Keep the array on 4 KiB pages at any size (set before it grows): for a big array written in
  // a few places only (an IPv6 trie's root: 256 KiB, one entry per /16 routed), where one 2 MiB
  // page would be zeroed for each 4 KiB one written. Off by default.
  void small_pages(bool on) {
    small_ = on;
  }
  void clear() {
    release();
    n_ = cap_ = dirty_ = 0;
  }

 private:
  void reserve(size_t cap) {
    size_t bytes = cap * sizeof(T);
    const bool huge = bytes >= kHugeFrom && !small_;
    if (huge) bytes = (bytes + kHuge - 1) & ~(kHuge - 1);
    if constexpr (kHeap) {  // ASan: heap memory it can check (no huge pages)
      T* p = static_cast<T*>(::operator new (bytes, std::align_val_t{64}));
      std::memset(static_cast<void*>(p), 0, bytes);
      if (n_) std::memcpy(static_cast<void*>(p), p_, n_ * sizeof(T));
      const size_t n = n_, dirty = dirty_;
      release();
      p_ = p, n_ = n, dirty_ = dirty, cap_ = bytes / sizeof(T), map_len_ = bytes;
      return;
    }
    bytes = (bytes + kPage - 1) & ~(kPage - 1);  // whole pages: mremap moves pages
    const size_t old_len = p_ ? map_len_ : 0;
    uint8_t* at = nullptr;
    // Memory MapCache kept (backed, reading zero) first: the rest of the mapping this array was
    // taken from, right after it (grows in place), or a kept mapping of the same kind.
    MapCache& cache = MapCache::global();
    uint8_t* const end = reinterpret_cast<uint8_t*>(p_) + map_len_;
    uint8_t* kept = nullptr;
    if (p_ && huge == huge_ && cache.take_at(end, bytes - map_len_, huge)) {
      at = reinterpret_cast<uint8_t*>(p_);
    } else if (!p_ || huge) {
      kept = static_cast<uint8_t*>(cache.take(bytes, huge));
    }
    if (at) {
      // grown in place
    } else if (kept && !p_) {  // a fresh array in a kept mapping: nothing to move
      at = kept;
    } else if (!huge) {  // small: grow in place or move (the kernel picks), else a fresh mapping
      void* q = p_ ? mremap(p_, map_len_, bytes, MREMAP_MAYMOVE)
                   : mmap(nullptr, bytes, kRw, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (q == MAP_FAILED) throw std::bad_alloc();
      at = static_cast<uint8_t*>(q);
    } else if (kept) {  // a huge growth into a kept mapping: the old pages move over its start
      at = kept;
      const size_t moved = huge_ ? map_len_ : 0;
      if (moved && mremap(p_, moved, moved, MREMAP_MAYMOVE | MREMAP_FIXED, at) == MAP_FAILED) {
        cache.put(kept, bytes, true, 0);  // the old mapping is untouched
        throw std::bad_alloc();
      }
      if (moved) p_ = reinterpret_cast<T*>(at);
      if (p_ && !moved) {  // from small: copy what was written, the old mapping to the cache
        if (n_) std::memcpy(static_cast<void*>(at), p_, n_ * sizeof(T));
        release();
        dirty_ = n_;  // the rest of the kept mapping reads zero
      }
    } else {  // a 2 MiB-aligned window (reserved, nothing backed), trimmed to `bytes`
      const size_t len = bytes + kHuge;
      void* m = mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (m == MAP_FAILED) throw std::bad_alloc();
      auto* base = static_cast<uint8_t*>(m);
      const size_t head = (kHuge - reinterpret_cast<uintptr_t>(base) % kHuge) % kHuge;
      if (head) munmap(base, head);
      if (len - head - bytes) munmap(base + head + bytes, len - head - bytes);
      at = base + head;
      // A huge array's pages move into the window's start (huge ones stay huge); a small one's
      // are copied (left in place, its 4 KiB pages would keep the first 2 MiB off huge pages).
      const size_t moved = p_ && huge_ ? map_len_ : 0;
      if (moved && mremap(p_, moved, moved, MREMAP_MAYMOVE | MREMAP_FIXED, at) == MAP_FAILED) {
        munmap(at, bytes);  // the old mapping is untouched
        throw std::bad_alloc();
      }
      if (moved) p_ = reinterpret_cast<T*>(at);  // moved, same capacity so far
      if (mmap(at + moved, bytes - moved, kRw, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
          MAP_FAILED) {
        munmap(at + moved, bytes - moved);
        throw std::bad_alloc();
      }
#ifdef MADV_HUGEPAGE
      madvise(at, bytes, MADV_HUGEPAGE);  // advice only: 4 KiB pages if refused
#endif
      if (p_ && !moved) {  // from small: copy what was written, the old mapping to the cache
        if (n_) std::memcpy(static_cast<void*>(at), p_, n_ * sizeof(T));
        release();
        dirty_ = n_;  // the rest of the new mapping is fresh
      }
    }
#ifdef MADV_POPULATE_WRITE
    if (populate_ && !huge && bytes > old_len)  // huge: one fault per 2 MiB page anyway
      madvise(at + old_len, bytes - old_len, MADV_POPULATE_WRITE);
#endif
    p_ = reinterpret_cast<T*>(at), cap_ = bytes / sizeof(T), map_len_ = bytes;  // old one moved
    huge_ = huge;
  }
  // The mapping goes to MapCache (kept, zeroed where written, or unmapped).
  void release() {
    if (p_ && kHeap) ::operator delete (p_, std::align_val_t{64});
    if (p_ && !kHeap)
      MapCache::global().put(p_, map_len_, huge_, std::min(dirty_, cap_) * sizeof(T));
    p_ = nullptr;
    map_len_ = 0;
  }
  void swap(HugeArray& o) noexcept {
    std::swap(p_, o.p_), std::swap(n_, o.n_), std::swap(cap_, o.cap_);
    std::swap(map_len_, o.map_len_), std::swap(dirty_, o.dirty_), std::swap(populate_, o.populate_);
    std::swap(small_, o.small_), std::swap(huge_, o.huge_);
  }

  T* p_ = nullptr;
  size_t n_ = 0, cap_ = 0, map_len_ = 0;
  size_t dirty_ = 0;  // elements at and past dirty_ were never written since they were mapped
  bool populate_ = false;
  bool small_ = false;
  bool huge_ = false;  // the mapping is 2 MiB-aligned and advised for huge pages
};

}  // namespace nfpark::nf
