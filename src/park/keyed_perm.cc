#include "park/keyed_perm.h"

#include <algorithm>
#include <string>

#include "park/secret.h"

namespace nfpark::park {

KeyedPermutation::KeyedPermutation(uint32_t bits, const Key128& key)
    : bits_(std::clamp<uint32_t>(bits, 2, 64)),
      hi_(bits_ / 2),
      lo_(bits_ - bits_ / 2),
      small_(bits_ <= 16) {
  for (int r = 0; r < kRounds; ++r) {
    keys_[r] = SipKey::from(derive_key(key, "feistel " + std::to_string(r)));
    if (small_)
      for (uint32_t v = 0; v < 256; ++v) table_[r][v] = uint8_t(sip13_1(keys_[r], v));
  }
}

// State (L, R) of widths (wl, wr); a round maps it to (R, L ^ f(R)) of widths (wr, wl).
uint64_t KeyedPermutation::operator()(uint64_t x) const {
  uint64_t l = (x >> lo_) & mask(hi_), r = x & mask(lo_);
  uint32_t wl = hi_, wr = lo_;
  for (int i = 0; i < kRounds; ++i) {
    const uint64_t nr = (l ^ f(i, r)) & mask(wl);
    l = r;
    r = nr;
    std::swap(wl, wr);
  }
  return (l << lo_ | r) & mask(bits_);  // an even number of rounds: widths are (hi_, lo_) again
}

uint64_t KeyedPermutation::inverse(uint64_t y) const {
  uint64_t l = (y >> lo_) & mask(hi_), r = y & mask(lo_);
  uint32_t wl = hi_, wr = lo_;
  for (int i = kRounds - 1; i >= 0; --i) {  // (L, R) = (Rp, Lp ^ f(Rp)): Lp = R ^ f(L)
    const uint64_t pl = (r ^ f(i, l)) & mask(wr);
    r = l;
    l = pl;
    std::swap(wl, wr);
  }
  return (l << lo_ | r) & mask(bits_);
}

}  // namespace nfpark::park
