// HugeArray<T>: a growable array of trivially copyable T in anonymous memory advised for
// transparent huge pages (madvise MADV_HUGEPAGE), for lookup tables too big for the TLB's reach
// in 4 KiB pages (the IPv4 LPM's 64 MiB DIR-24 root, its child groups, flow tables).
//
// Parameters: none. Memory: capacity * sizeof(T), rounded up to 2 MiB when it is at least 2 MiB
// (then 2 MiB-aligned, so the kernel can back it with huge pages: /sys/kernel/mm/
// transparent_hugepage/enabled must be "always" or "madvise"; otherwise, or when madvise fails,
// the array works the same on 4 KiB pages). Growth doubles the capacity and copies, so it is for
// build time only (never on a packet path). Pages are touched only when written: growing with
// a zero fill leaves the new pages unbacked until first written.
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

namespace nfpark::nf {

template <class T>
class HugeArray {
  static_assert(std::is_trivially_copyable_v<T>);
  static constexpr size_t kHuge = size_t(2) << 20;

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
    bool fresh = false;  // elements past n_ are freshly mapped, hence zero
    if (n > cap_) reserve(std::max(n, cap_ * 2)), fresh = true;
    static constexpr unsigned char kZero[sizeof(T)] = {};
    if (!fresh || std::memcmp(&fill, kZero, sizeof(T)) != 0)  // untouched pages stay unbacked
      for (size_t i = n_; i < n; ++i) p_[i] = fill;
    n_ = n;
  }
  void clear() {
    release();
    n_ = cap_ = 0;
  }

 private:
  void reserve(size_t cap) {
    size_t bytes = cap * sizeof(T);
    const bool huge = bytes >= kHuge;
    if (huge) bytes = (bytes + kHuge - 1) & ~(kHuge - 1);
    if constexpr (kHeap) {  // ASan: heap memory it can check (no huge pages)
      T* p = static_cast<T*>(::operator new (bytes, std::align_val_t{64}));
      std::memset(static_cast<void*>(p), 0, bytes);
      if (n_) std::memcpy(static_cast<void*>(p), p_, n_ * sizeof(T));
      const size_t n = n_;
      release();
      p_ = p, n_ = n, cap_ = bytes / sizeof(T), map_len_ = bytes;
      return;
    }
    const size_t len = huge ? bytes + kHuge : bytes;  // slack to align to 2 MiB
    void* m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) throw std::bad_alloc();
    auto* base = static_cast<uint8_t*>(m);
    size_t head = 0;
    if (huge) {  // trim to a 2 MiB-aligned window of `bytes`
      head = (kHuge - reinterpret_cast<uintptr_t>(base) % kHuge) % kHuge;
      if (head) munmap(base, head);
      const size_t tail = len - head - bytes;
      if (tail) munmap(base + head + bytes, tail);
#ifdef MADV_HUGEPAGE
      madvise(base + head, bytes, MADV_HUGEPAGE);  // advice only: 4 KiB pages if refused
#endif
    }
    T* p = reinterpret_cast<T*>(base + head);
    if (n_) std::memcpy(static_cast<void*>(p), p_, n_ * sizeof(T));
    const size_t n = n_;
    release();
    p_ = p, n_ = n, cap_ = bytes / sizeof(T), map_len_ = bytes;
  }
  void release() {
    if (p_ && kHeap) ::operator delete (p_, std::align_val_t{64});
    if (p_ && !kHeap) munmap(p_, map_len_);
    p_ = nullptr;
    map_len_ = 0;
  }
  void swap(HugeArray& o) noexcept {
    std::swap(p_, o.p_), std::swap(n_, o.n_), std::swap(cap_, o.cap_);
    std::swap(map_len_, o.map_len_);
  }

  T* p_ = nullptr;
  size_t n_ = 0, cap_ = 0, map_len_ = 0;
};

}  // namespace nfpark::nf
