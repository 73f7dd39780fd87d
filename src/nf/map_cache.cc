#include "nf/map_cache.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace nfpark::nf {

namespace {

constexpr size_t kPage = 4096;

bool page_is_zero(const uint8_t* q) {
  const auto* w = reinterpret_cast<const uint64_t*>(q);
  for (size_t i = 0; i < kPage / 8; i += 8) {  // a cache line a step: one branch per line
    if (w[i] | w[i + 1] | w[i + 2] | w[i + 3] | w[i + 4] | w[i + 5] | w[i + 6] | w[i + 7])
      return false;
  }
  return true;
}

}  // namespace

MapCache& MapCache::global() {
  static MapCache* const cache = [] {
    size_t bound = kDefaultBound;
    if (const char* mib = std::getenv("NFPARK_MAP_CACHE_MIB"))
      bound = size_t(std::atoll(mib)) << 20;
    return new MapCache(bound);
  }();
  return *cache;
}

void MapCache::zero_written(uint8_t* p, size_t written) {
  static constexpr size_t kChunk = 1024;  // pages asked of mincore() at a time
  unsigned char resident[kChunk];
  const size_t pages = (written + kPage - 1) / kPage;
  for (size_t first = 0; first < pages; first += kChunk) {
    const size_t n = std::min(kChunk, pages - first);
    const bool known = mincore(p + first * kPage, n * kPage, resident) == 0;
    for (size_t i = 0; i < n; ++i) {
      if (known && !(resident[i] & 1)) continue;  // never backed: reads zero
      // Pages read but never written map the kernel's zero page: writing them would back them.
      uint8_t* q = p + (first + i) * kPage;
      if (!page_is_zero(q)) std::memset(q, 0, kPage);
    }
  }
}

void* MapCache::take(size_t bytes, bool huge) {
  std::lock_guard<std::mutex> lock(mu_);
  size_t best = n_;
  for (size_t i = 0; i < n_; ++i) {
    const Kept& k = kept_[i];
    if (k.huge == huge && k.len >= bytes && (best == n_ || k.len < kept_[best].len)) best = i;
  }
  return best == n_ ? nullptr : claim(best, bytes);
}

bool MapCache::take_at(void* at, size_t bytes, bool huge) {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < n_; ++i) {
    const Kept& k = kept_[i];
    if (k.p == at && k.huge == huge && k.len >= bytes) return claim(i, bytes) != nullptr;
  }
  return false;
}

uint8_t* MapCache::claim(size_t i, size_t bytes) {
  Kept& k = kept_[i];
  uint8_t* p = k.p;
  bytes_ -= bytes;
  if (k.len > bytes) {  // the rest stays kept, as its own mapping
    k.p += bytes, k.len -= bytes;
  } else {
    k = kept_[--n_];
  }
  return p;
}

void MapCache::put(void* p, size_t len, bool huge, size_t written) {
  auto* m = static_cast<uint8_t*>(p);
  if (len > bound_) {
    munmap(m, len);
    return;
  }
  if (!worth_keeping(len)) {
    munmap(m, len);
    return;
  }
  zero_written(m, std::min(written, len));
  Kept evicted[kMaxKept];
  size_t n_evicted = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    while (n_ && (bytes_ + len > bound_ || n_ == kMaxKept)) {
      size_t oldest = 0;
      for (size_t i = 1; i < n_; ++i)
        if (kept_[i].seq < kept_[oldest].seq) oldest = i;
      evicted[n_evicted++] = kept_[oldest];
      bytes_ -= kept_[oldest].len;
      kept_[oldest] = kept_[--n_];
    }
    kept_[n_++] = Kept{m, len, seq_++, huge};
    bytes_ += len;
  }
  for (size_t i = 0; i < n_evicted; ++i) munmap(evicted[i].p, evicted[i].len);
}

bool MapCache::worth_keeping(size_t len) const {
  std::lock_guard<std::mutex> lock(mu_);
  // The mappings put() would evict, oldest first: none larger than this one.
  bool taken[kMaxKept] = {};
  size_t bytes = bytes_, n = n_;
  while (n && (bytes + len > bound_ || n == kMaxKept)) {
    size_t oldest = kMaxKept;
    for (size_t i = 0; i < n_; ++i)
      if (!taken[i] && (oldest == kMaxKept || kept_[i].seq < kept_[oldest].seq)) oldest = i;
    if (kept_[oldest].len > len) return false;
    taken[oldest] = true, bytes -= kept_[oldest].len, --n;
  }
  return true;
}

void MapCache::drain() {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < n_; ++i) munmap(kept_[i].p, kept_[i].len);
  n_ = bytes_ = 0;
}

size_t MapCache::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

size_t MapCache::count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return n_;
}

}  // namespace nfpark::nf
