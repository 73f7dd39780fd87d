// HotPolicy: which items become hot, automatically, by access frequency.
//
// The paper leaves hot-item selection open ("e.g., using a heavy hitters algorithm"). nfpark
// uses TinyLFU-style admission: a count-min sketch (4 rows x `width` 32-bit counters,
// conservative update) estimates each key's recent GET frequency; every `decay_every` accesses
// all counters are halved, so the estimate follows a shifting popularity (a key's weight halves
// every decay period). A cold item is promoted when its estimate reaches `promote_min` and
// either the hot set has room or its estimate beats the coldest of `samples` hot entries drawn
// at random (that entry is demoted). Why: O(1) fixed memory per access (no per-key state for
// cold keys), robust to one-off scans (a key read once never displaces a popular one), and
// sampling avoids keeping a heap ordered by a frequency that changes on every access.
// Pinned keys (configured with --hot-keys) are never chosen as victims. While a key is hot its
// accesses are counted in its hot-set entry (decayed by the same epochs) instead of the
// sketch: the entry is touched anyway, the sketch's four random counters are not. A candidate
// that lost against a sample sets an admission floor: until the next decay or promotion, a
// candidate no more frequent than that floor is refused without drawing a new sample (so a
// full hot set under uniform traffic costs one comparison per cold GET, not eight lookups).
#pragma once
#include <cstdint>
#include <vector>

namespace nfpark::kvs {

struct HotPolicyConfig {
  uint32_t width = 1u << 16;  // counters per row (rounded up to a power of two)
  uint32_t promote_min = 3;   // accesses (estimated, decayed) before a key may become hot
  uint32_t decay_every = 0;   // accesses between halvings; 0: 10 x width
  uint32_t samples = 8;       // hot entries compared when the hot set is full
};

class HotPolicy {
 public:
  explicit HotPolicy(const HotPolicyConfig& cfg);
  // Counts one access of the key with this hash; returns its estimated frequency after it.
  uint32_t touch(uint64_t hash);
  uint32_t estimate(uint64_t hash) const;
  uint32_t promote_min() const { return cfg_.promote_min; }
  uint32_t samples() const { return cfg_.samples; }
  uint64_t next_random();  // for sampling victims (xorshift64*, fixed seed: runs repeat)
  uint32_t epoch() const { return uint32_t(decays_); }  // halvings so far
  uint64_t decays() const { return decays_; }

 private:
  static constexpr int kRows = 4;
  uint32_t index(uint64_t hash, int row) const;
  HotPolicyConfig cfg_;
  uint32_t mask_;
  std::vector<uint32_t> counts_;  // kRows x width
  uint64_t since_decay_ = 0, decays_ = 0, rng_ = 0x9E3779B97F4A7C15ull;
};

}  // namespace nfpark::kvs
