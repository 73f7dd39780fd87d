// MapCache: a process-wide, bounded cache of freed anonymous mappings (HugeArray's), so a table
// built again (a router reloading its routes, a flow table made anew, peers_lib_bench's rebuilds)
// writes into pages already backed instead of mapping fresh ones that the kernel must zero and
// fault in inside the build (on this VM ~30 us a 2 MiB page, ~1.1 us a 4 KiB one, and now and
// then a 10-100 ms stall compacting memory for a 2 MiB page) — what malloc and DPDK's heap do
// with freed memory.
//
// Parameters: the bound (bytes kept at most; the process's cache: 64 MiB, or
// NFPARK_MAP_CACHE_MIB MiB read once, 0 = off). Memory: what it keeps, at most the bound,
// resident (bytes() tells; a table's memory_bytes() counts the mapping it holds, not the cache).
// Theory of operation. put() takes a mapping its owner no longer needs, zeroes the pages it wrote
// (those of the written extent that are resident, per mincore(): a sparse array's untouched pages
// are not backed and read zero already) and keeps it, evicting (unmapping) the oldest mappings
// while the total is above the bound; a mapping larger than the bound, or one that would evict a
// larger one than itself, is unmapped at once (not zeroed). So
// the zeroing a fresh mapping gets from the kernel when first written happens here at free time
// instead, as DPDK's rte_free zeroes on free. take() hands out the first `bytes` of the smallest
// kept mapping of the same kind (huge: 2 MiB-aligned, advised for transparent huge pages; or
// small: 4 KiB pages) that holds them, reading zero everywhere like a fresh one; the rest stays
// kept (so a table holds what a fresh mapping would give it, no more), and an array that grows
// later claims it in place (take_at: a rebuild growing as the previous build did, no move).
// Thread-safe (one mutex; allocation is control path only). Not for AddressSanitizer builds'
// HugeArray (heap memory there), but usable on its own.
#pragma once
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace nfpark::nf {

class MapCache {
 public:
  static constexpr size_t kDefaultBound = size_t(64) << 20;
  static constexpr size_t kMaxKept = 64;  // mappings kept at most (the oldest is evicted past it)

  explicit MapCache(size_t bound) : bound_(bound) {}
  MapCache(const MapCache&) = delete;
  MapCache& operator=(const MapCache&) = delete;
  ~MapCache() { drain(); }

  // The process's cache (never destroyed: tables in static objects may free into it at exit).
  static MapCache& global();

  // `bytes` (a multiple of the kind's page) of a kept mapping of the kind asked for, the smallest
  // that holds them (the rest stays kept), reading zero throughout; nullptr if none does.
  void* take(size_t bytes, bool huge);
  // The first `bytes` of a kept mapping that starts at `at`, if there is one: an array growing in
  // place over the rest of the mapping it was taken from. False if none.
  bool take_at(void* at, size_t bytes, bool huge);
  // Hands over mapping [p, p + len) (page-aligned; huge: 2 MiB-aligned and advised): bytes from
  // `written` on were never written since it was mapped (or taken). Keeps or unmaps it.
  void put(void* p, size_t len, bool huge, size_t written);
  // Unmaps everything kept.
  void drain();
  size_t bytes() const;  // kept now
  size_t count() const;  // mappings kept now
  size_t bound() const { return bound_; }

 private:
  struct Kept {
    uint8_t* p;
    size_t len;
    uint64_t seq;  // put order: the smallest is the oldest
    bool huge;
  };
  uint8_t* claim(size_t i, size_t bytes);  // the first `bytes` of kept_[i] (locked)
  // False if keeping a mapping of `len` bytes would evict a larger one (a table's small array
  // freed after its big one must not push the big one out: the big one saves more faults).
  bool worth_keeping(size_t len) const;
  // Zeroes what was written of [p, p + written): the resident pages only.
  static void zero_written(uint8_t* p, size_t written);

  const size_t bound_;
  mutable std::mutex mu_;
  Kept kept_[kMaxKept] = {};
  size_t n_ = 0, bytes_ = 0;
  uint64_t seq_ = 0;
};

}  // namespace nfpark::nf
