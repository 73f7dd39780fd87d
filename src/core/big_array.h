// BigArray<T>: a fixed-size, zero-initialised array for large random-access tables (flow
// tables of a million flows and more), allocated once and never resized.
//
// Arrays of 2 MiB or more come from an anonymous mmap aligned to 2 MiB and advised for
// transparent huge pages (madvise MADV_HUGEPAGE; this machine's THP mode is "madvise"): a random
// lookup in a 64 MiB table then misses the TLB into a 2 MiB page walk instead of a 4 KiB one,
// which is most of the cost of a DRAM-bound lookup without hugetlbfs (DPDK runs --no-huge here).
// The pages are zero and materialise on first touch, so a large table costs nothing until used.
// Smaller arrays are aligned `new` + memset. T must be trivially copyable (the zero pattern is
// its initial value). No DPDK: engines and the simulator share it.
#pragma once
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace nfpark {

template <class T>
class BigArray {
  static_assert(std::is_trivially_copyable_v<T>);
  static constexpr size_t kHuge = size_t(2) << 20;

 public:
  BigArray() = default;
  explicit BigArray(size_t n) : n_(n) {
    const size_t bytes = n * sizeof(T);
    if (bytes >= kHuge) {
      // Over-allocate by one huge page and trim both ends to a 2 MiB boundary.
      const size_t len = (bytes + kHuge - 1) / kHuge * kHuge;
      void* raw =
          mmap(nullptr, len + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (raw == MAP_FAILED) throw std::bad_alloc();
      auto base = reinterpret_cast<uintptr_t>(raw);
      const uintptr_t aligned = (base + kHuge - 1) & ~(uintptr_t(kHuge) - 1);
      if (aligned > base) munmap(raw, aligned - base);
      const uintptr_t end = base + len + kHuge;
      if (end > aligned + len) munmap(reinterpret_cast<void*>(aligned + len), end - aligned - len);
      madvise(reinterpret_cast<void*>(aligned), len, MADV_HUGEPAGE);  // advice: may be ignored
      p_ = reinterpret_cast<T*>(aligned);
      mapped_ = len;
    } else if (n) {
      p_ = static_cast<T*>(::operator new[](bytes, std::align_val_t{64}));
      std::memset(static_cast<void*>(p_), 0, bytes);
    }
  }
  ~BigArray() { release(); }
  BigArray(const BigArray&) = delete;
  BigArray& operator=(const BigArray&) = delete;
  BigArray(BigArray&& o) noexcept { swap(o); }
  BigArray& operator=(BigArray&& o) noexcept {
    if (this != &o) {
      release();
      swap(o);
    }
    return *this;
  }
  void swap(BigArray& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    std::swap(mapped_, o.mapped_);
  }

  T& operator[](size_t i) { return p_[i]; }
  const T& operator[](size_t i) const { return p_[i]; }
  T* data() { return p_; }
  const T* data() const { return p_; }
  size_t size() const { return n_; }
  size_t bytes() const { return n_ * sizeof(T); }

 private:
  void release() {
    if (mapped_)
      munmap(p_, mapped_);
    else if (p_)
      ::operator delete[](p_, std::align_val_t{64});
    p_ = nullptr;
    n_ = mapped_ = 0;
  }
  T* p_ = nullptr;
  size_t n_ = 0;
  size_t mapped_ = 0;  // bytes mapped (0: heap)
};

}  // namespace nfpark
