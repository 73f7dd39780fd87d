// Input: the fuzz input read as a stream of decisions, front to back. Past the end every read
// returns zeros, so any prefix of an input is itself a valid input (libFuzzer's mutations stay
// meaningful) and the harness never reads outside it. (FuzzedDataProvider is clang-only; the
// replay build uses GCC.)
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace nfpark::fuzz {

class Input {
 public:
  Input(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  bool empty() const { return pos_ >= n_; }
  size_t left() const { return pos_ < n_ ? n_ - pos_ : 0; }

  uint8_t u8() { return pos_ < n_ ? d_[pos_++] : 0; }
  uint16_t u16() { return uint16_t(u8() | u8() << 8); }
  uint32_t u32() { return uint32_t(u16()) | uint32_t(u16()) << 16; }
  uint64_t u64() { return uint64_t(u32()) | uint64_t(u32()) << 32; }
  bool flag() { return u8() & 1; }
  // A value in [lo, hi] (one byte of input when the range fits in a byte).
  uint32_t range(uint32_t lo, uint32_t hi) {
    const uint64_t span = uint64_t(hi) - lo + 1;
    const uint64_t v = span <= 256 ? u8() : span <= 65536 ? u16() : u32();
    return uint32_t(lo + v % span);
  }
  // n bytes (zeros past the end).
  std::vector<uint8_t> bytes(size_t n) {
    std::vector<uint8_t> b(n, 0);
    const size_t take = n < left() ? n : left();
    if (take) std::memcpy(b.data(), d_ + pos_, take);
    pos_ += take;
    return b;
  }
  void fill(uint8_t* out, size_t n) {
    std::vector<uint8_t> b = bytes(n);
    if (n) std::memcpy(out, b.data(), n);
  }

 private:
  const uint8_t* d_;
  size_t n_;
  size_t pos_ = 0;
};

}  // namespace nfpark::fuzz
