// SliceRing — NFSlicer's per-core payload table: N entries in FIFO order, TTL in wrap-arounds.
//
// Theory of operation (NFSlicer §III-C/D, Fig. 4; shared/research/seed000_nfslicer.md §2.3–2.7)
//  - Two tables of N entries (N a power of two here): metadata {generation, ttl; ttl 0 = empty}
//    and payloads {whatever the caller stores: the packet handle, its original DSCP, ...}, plus
//    one index pointing at the next entry to use.
//  - probe() is called once per slice-worthy packet and always advances the index by one:
//      * entry empty (ttl == 0): claim it — generation = scramble(++counter), ttl = ttl_init;
//        the caller slices the packet under (index, generation).
//      * entry live (ttl != 0): decrement ttl; the packet goes unsliced ("not finding readily
//        available space ... does not cause a packet drop"). If ttl reaches 0 the stored payload
//        is discarded at once and handed back (expired) for the caller to free.
//    So an entry stored with ttl_init = T survives T wrap-arounds of the index: the T-th visit
//    after its insertion discards it, the (T+1)-th reuses it. Every visit costs that packet its
//    slicing, as in the paper (a busy entry is never skipped over).
//  - find()/erase() at splice: a token matches only if the entry is live and its generation is
//    equal; success clears the ttl only, as the emulation does (the paper's text resets the
//    whole entry; with ttl checked first the stale generation can never match either way).
//  - Generations come from a per-core insert counter through a keyed permutation, so they are
//    unique per core for 2^(56 - log2 N) inserts (>= 2^32): a stale token can never match.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "park/slicer_token.h"

namespace nfpark::park {

template <typename P>
class SliceRing {
 public:
  struct Probe {
    bool claimed = false;
    uint32_t index = 0;
    uint64_t generation = 0;
    std::optional<P> expired;  // a payload discarded by this probe (caller frees it)
  };
  enum class Lookup : uint8_t { kOk, kEmpty, kGeneration };

  // entries: a power of two <= 2^kMaxIndexBits; ttl_init >= 1.
  SliceRing(uint32_t entries, uint8_t ttl_init, const KeyedPermutation& scramble)
      : meta_(entries),
        payloads_(entries),
        mask_(entries - 1),
        ttl_init_(ttl_init ? ttl_init : 1),
        scramble_(scramble) {}

  uint32_t size() const { return uint32_t(meta_.size()); }
  uint32_t live() const { return live_; }
  uint32_t next_index() const { return idx_; }

  Probe probe(const P& payload) {
    Probe p;
    p.index = idx_;
    idx_ = (idx_ + 1) & mask_;
    Meta& m = meta_[p.index];
    if (m.ttl != 0) {
      if (--m.ttl == 0) {
        p.expired = payloads_[p.index];
        --live_;
      }
      return p;
    }
    m.generation = scramble_(++counter_);
    m.ttl = ttl_init_;
    payloads_[p.index] = payload;
    ++live_;
    p.claimed = true;
    p.generation = m.generation;
    return p;
  }

  // Gives back an entry just claimed (the caller could not slice after all).
  void abort(uint32_t index) {
    meta_[index].ttl = 0;
    --live_;
  }

  // The entry a probe just claimed, for the caller to complete.
  P& at(uint32_t index) { return payloads_[index & mask_]; }

  // The payload stored under (index, generation), or nullptr with the reason.
  const P* find(uint32_t index, uint64_t generation, Lookup& why) const {
    const Meta& m = meta_[index & mask_];
    if (m.ttl == 0) {
      why = Lookup::kEmpty;
      return nullptr;
    }
    if (m.generation != generation) {
      why = Lookup::kGeneration;
      return nullptr;
    }
    why = Lookup::kOk;
    return &payloads_[index & mask_];
  }

  // Frees a live entry after a successful find() (the splice took its payload).
  void erase(uint32_t index) {
    meta_[index & mask_].ttl = 0;
    --live_;
  }

  // Hands every stored payload to `f` and empties the ring (shutdown).
  template <typename F>
  void drain(F&& f) {
    for (uint32_t i = 0; i < meta_.size(); ++i) {
      if (meta_[i].ttl) {
        meta_[i].ttl = 0;
        f(payloads_[i]);
      }
    }
    live_ = 0;
  }

 private:
  struct Meta {
    uint64_t generation = 0;
    uint8_t ttl = 0;  // 0 = empty
  };
  std::vector<Meta> meta_;
  std::vector<P> payloads_;
  uint32_t mask_;
  uint8_t ttl_init_;
  KeyedPermutation scramble_;  // generation = scramble_(insert counter)
  uint32_t idx_ = 0;
  uint64_t counter_ = 0;
  uint32_t live_ = 0;
};

}  // namespace nfpark::park
