#include "nf/lpm.h"

#include <array>
#include <cstring>

#include "nf/lpm_prefix.h"

namespace nfpark::nf {

Lpm::Lpm(int key_bytes) : key_bytes_(key_bytes == 4 ? 4 : 16), root_(1u << 16, 0) {}

void Lpm::fill(int64_t base, uint32_t first, uint32_t n, uint32_t entry, int len) {
  for (uint32_t i = first; i < first + n; ++i) {
    uint32_t e = at(base, i);
    if (e & kExt) {
      fill(int64_t(e & kValMask), 0, 256, entry, len);
    } else if (!(e & kValid) || int(depth(e)) <= len) {
      at(base, i) = entry;
    }
  }
}

bool Lpm::insert(const uint8_t* prefix, int len, uint32_t value) {
  if (value > kMaxValue || len < 0 || len > 8 * key_bytes_) return false;
  std::array<uint8_t, 16> key{};
  std::memcpy(key.data(), prefix, size_t(key_bytes_));
  mask_prefix(key.data(), key_bytes_, len);
  const uint32_t entry = kValid | uint32_t(len) << 22 | value;

  int64_t base = -1;  // the table we are in
  uint32_t index = uint32_t(key[0]) << 8 | key[1];
  int stride = 16, consumed = 16, pos = 2;
  while (len > consumed) {
    uint32_t e = at(base, index);
    if (!(e & kExt)) {  // refine: a child group holding the old entry everywhere
      size_t g = groups_.size() / 256;
      if (g > kValMask) return false;
      groups_.resize(groups_.size() + 256, e);
      at(base, index) = kExt | uint32_t(g);
      e = at(base, index);
    }
    base = int64_t(e & kValMask);
    index = key[pos++];
    stride = 8;
    consumed += 8;
  }
  // `len` ends inside this level: expand it over 2^(consumed - len) entries.
  uint32_t span = 1u << (consumed - len);
  uint32_t first = index & ~(span - 1) & ((1u << stride) - 1);
  fill(base, first, span, entry, len);
  return true;
}

}  // namespace nfpark::nf
