// MaglevTable: Maglev consistent hashing — a lookup table of M (prime) entries, each naming a
// backend, filled from one permutation of [0, M) per backend.
//
// Config:   size M (prime, default 65537) · per backend: an identity (64-bit, e.g. its address;
//           the permutation depends only on it, not on the backend's position) and a weight
//           (0 = absent).
// State:    M * 4 B (256 KiB for 65537), built on the control path (allocates), read-only on
//           the data path.
// Cost:     lookup = one multiply-shift + one load.
// Refs:     Eisenbud et al., "Maglev: A Fast and Reliable Software Network Load Balancer",
//           NSDI'16, §3.4 Pseudocode 1; weights as in Katran's MaglevHash (turns in proportion
//           to weight).
//
// Theory of operation. Backend i has offset = h1(id) mod M and skip = h2(id) mod (M-1) + 1; its
// permutation is (offset + j*skip) mod M, a full cycle because M is prime. Backends take turns
// claiming their next unclaimed preferred entry until the table is full; a backend of weight w
// earns w credits per round and claims one entry per max_weight credits, so its share is
// w / sum(w) (±1 entry per backend with equal weights). Because each backend's preferences do
// not depend on the others, removing one of N backends reassigns its ~M/N entries and moves only
// a small fraction of the rest (the paper's Fig. 12; tests/nf/maglev_test.cc measures it).
#pragma once
#include <cstdint>
#include <span>
#include <vector>

namespace nfpark::nf {

class MaglevTable {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  explicit MaglevTable(uint32_t size = 65537) : size_(size), entries_(size, kNone) {}

  // Fills the table; backend i is named by index i in the result. Entries are kNone when every
  // weight is 0. ids.size() == weights.size().
  void build(std::span<const uint64_t> ids, std::span<const uint32_t> weights);

  // Backend for a flow hash (the hash's low 32 bits mapped onto [0, M) by multiply-shift).
  uint32_t lookup(uint64_t flow_hash) const {
    return entries_[uint32_t((uint64_t(uint32_t(flow_hash)) * size_) >> 32)];
  }
  uint32_t size() const { return size_; }
  const std::vector<uint32_t>& entries() const { return entries_; }

  static bool is_prime(uint32_t n);

 private:
  uint32_t size_;
  std::vector<uint32_t> entries_;
};

}  // namespace nfpark::nf
