// DynamicThreshold: the switch's dynamic-threshold test (Choudhury-Hahne; switch.h admit) in
// integers, exactly equal to its double form
//
//     double(x) > alpha * double(free)        x = the queue's bytes with the packet, free = the
//                                             buffer's bytes still free
//
// for every alpha > 0 and every x, free below 2^53 (switch_test.cc sweeps it against the double
// form). Per packet it is one 64 x 64 -> 128-bit multiply, a shift and a compare instead of two
// unsigned-to-double conversions and a multiply (~40 instructions a packet in the simulator's
// QUEUE-MEM loop, docs/sim.md §9).
//
// How. alpha = m * 2^-s exactly (m an odd integer, or m < 2^64 and s = 0). With p = alpha * free
// the exact product, the double form compares x with fl(p), p rounded to 53 bits:
//   x <= p  =>  fl(p) >= x (rounding is monotone and x is a double): not above;
//   x >  p  =>  above unless fl(p) == x, i.e. p rounds up to x: x - p is at most half of the
//               spacing of doubles just below x (exactly half: a tie, rounded to the even of the
//               two, x when x's last significant bit is 0).
// The first test is (x << s) > m * free in 128 bits; the rounding case runs only for packets the
// threshold refuses. Parameters outside the integer form's range (s > 64, m >= 2^64: alpha below
// 2^-11 or above 2^64 with a fraction; alpha not finite; a buffer of 2^53 bytes or more) keep the
// double form, which is then the definition.
#pragma once
#include <cmath>
#include <cstdint>

namespace nfpark::sim {

class DynamicThreshold {
 public:
  using u128 = unsigned __int128;

  // alpha <= 0 (or NaN): off, above() is false. `max_bytes`: the largest x or free the caller
  // passes (the switch's buffer size).
  DynamicThreshold(double alpha, uint64_t max_bytes) : alpha_(alpha) {
    if (!(alpha > 0)) return;  // off
    mode_ = Mode::kDouble;
    if (!std::isfinite(alpha) || max_bytes >= (uint64_t(1) << 53)) return;
    int e = 0;
    const double f = std::frexp(alpha, &e);    // alpha = f * 2^e, f in [0.5, 1)
    uint64_t m = uint64_t(std::ldexp(f, 53));  // exact: f has 53 significant bits
    int s = 53 - e;
    while (!(m & 1) && s > 0) m >>= 1, --s;  // smallest exponent (m odd) or s = 0
    if (s < 0) {                             // an integer alpha >= 2^53: m << -s if it fits
      if (s < -10 || (m >> (64 + s)) != 0) return;
      m <<= -s;
      s = 0;
    }
    if (s > 64) return;
    m_ = m;
    s_ = unsigned(s);
    // 64 bits suffice when max_bytes << s and m * max_bytes do (alpha = 1: x > free)
    const int bits = 64 - __builtin_clzll(max_bytes | 1);
    const int mbits = 64 - __builtin_clzll(m);
    mode_ = bits + s <= 64 && bits + mbits <= 64 ? Mode::k64 : Mode::k128;
  }

  bool enabled() const { return mode_ != Mode::kOff; }
  bool integer() const { return mode_ == Mode::k64 || mode_ == Mode::k128; }

  // double(x) > alpha * double(free), for x, free <= max_bytes (< 2^53); false when off.
  bool above(uint64_t x, uint64_t free) const {
    if (mode_ == Mode::k64) [[likely]] {
      const uint64_t lhs = x << s_, rhs = m_ * free;
      return lhs > rhs && !rounds_to(x, lhs - rhs);  // lhs <= rhs: x <= p, not above
    }
    if (mode_ == Mode::k128) {
      const u128 lhs = u128(x) << s_, rhs = u128(m_) * free;
      return lhs > rhs && !rounds_to(x, lhs - rhs);
    }
    if (mode_ == Mode::kDouble) return double(x) > alpha_ * double(free);
    return false;
  }

 private:
  // x > p with (x - p) * 2^s = d: does p round to x? x is an integer below 2^53, p >= 0.
  bool rounds_to(uint64_t x, u128 d) const {
    if (x == 0) return false;  // p < 0 impossible: never
    // the spacing of doubles just below x: 2^(k - 52), k = floor(log2 x); half that when x is a
    // power of two (the binade below is finer)
    const int k = 63 - __builtin_clzll(x);
    int below = k - 52 - ((x & (x - 1)) == 0 ? 1 : 0);  // log2 of the spacing below x
    // half the spacing, in units of 2^-s: 2^(below - 1 + s)
    const int half = below - 1 + int(s_);
    if (half < 0) return false;  // below p's resolution: x - p >= 2^-s is more than half
    const u128 h = u128(1) << half;
    if (d < h) return true;
    if (d > h) return false;
    // a tie: to the even one; x is even in its last significant place iff bit (k - 52) is 0
    // (for x < 2^52 every integer has a zero last bit in the binade: a tie needs below >= 0)
    const int last = k - 52;
    return last < 0 ? true : ((x >> last) & 1) == 0;
  }

  enum class Mode : uint8_t { kOff, k64, k128, kDouble };
  uint64_t m_ = 0;
  unsigned s_ = 0;
  Mode mode_ = Mode::kOff;
  double alpha_;
};

}  // namespace nfpark::sim
