#include "park/siphash.h"

#include <bit>

namespace nfpark::park {

static_assert(std::endian::native == std::endian::little);

uint64_t siphash24(const Key128& key, const uint8_t* in, size_t len) {
  auto le64 = [](const uint8_t* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
  };
  sip_detail::State s(SipKey::from(key));
  size_t i = 0;
  for (; i + 8 <= len; i += 8) s.absorb<2>(le64(in + i));
  uint64_t b = uint64_t(len) << 56;
  for (size_t j = 0; i + j < len; ++j) b |= uint64_t(in[i + j]) << (8 * j);
  s.absorb<2>(b);
  return s.finish<4>();
}

}  // namespace nfpark::park
