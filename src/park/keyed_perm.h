// KeyedPermutation: a keyed bijection on `bits`-bit values — the keyed generations of NFSlicer's
// token (56 - log2 N bits) and of PayloadPark's 7-byte tag (16 bits).
//
// A four-round Feistel network (Luby–Rackoff: a pseudorandom permutation when its round
// functions are pseudorandom). The value is cut into a high half of bits/2 and a low half of
// bits - bits/2; rounds alternate the halves (unbalanced when bits is odd), each one xoring the
// round function of one half into the other, so every round — and the whole — is invertible.
// Round function i: SipHash-1-3 under its own key, derive_key(key, "feistel i"), truncated to the
// half's width; with halves of at most 8 bits it is read from a 256-entry table made at
// construction (the 7-byte tag's 16-bit generations cost four lookups).
//
// Why: generation = P_k(insert counter) keeps the counter's guarantee — distinct for 2^bits
// inserts, so a stale tag can never match a reused slot within that — while a party that saw
// any number of generations cannot tell the next one without the key.
//
// API: KeyedPermutation(bits 2..64, key) · operator()(x) · inverse(y) · bits(). Inputs are
// taken modulo 2^bits.
#pragma once
#include <cstdint>

#include "park/siphash.h"

namespace nfpark::park {

class KeyedPermutation {
 public:
  static constexpr int kRounds = 4;
  KeyedPermutation(uint32_t bits, const Key128& key);
  uint32_t bits() const { return bits_; }
  uint64_t operator()(uint64_t x) const;
  uint64_t inverse(uint64_t y) const;

 private:
  static uint64_t mask(uint32_t w) { return w >= 64 ? ~uint64_t(0) : (uint64_t(1) << w) - 1; }
  uint64_t f(int round, uint64_t half) const {
    return small_ ? table_[round][half] : sip13_1(keys_[round], half);
  }
  uint32_t bits_, hi_, lo_;  // widths: hi_ = bits/2, lo_ = bits - hi_
  bool small_;               // both halves <= 8 bits: round functions are tables
  SipKey keys_[kRounds];
  uint8_t table_[kRounds][256] = {};
};

}  // namespace nfpark::park
