#include "park/tag.h"

#include <bit>
#include <cstring>

#include "core/bytes.h"
#include "core/checksum.h"

namespace nfpark::park {

// The codec moves the tag as little-endian 64-bit words (SipHash reads them so too).
static_assert(std::endian::native == std::endian::little);

std::optional<TagFormat> parse_tag_format(std::string_view s) {
  if (s == "nfpark") return TagFormat::kNfpark;
  if (s == "payloadpark") return TagFormat::kPayloadPark;
  return std::nullopt;
}

std::string_view to_string(TagFormat f) {
  return f == TagFormat::kNfpark ? "nfpark" : "payloadpark";
}

namespace {
inline uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }
inline uint64_t le64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;  // x86 is little-endian; SipHash reads little-endian words
}
}  // namespace

uint64_t siphash24(const std::array<uint8_t, 16>& key, const uint8_t* in, size_t len) {
  uint64_t k0 = le64(key.data()), k1 = le64(key.data() + 8);
  uint64_t v0 = 0x736f6d6570736575ULL ^ k0, v1 = 0x646f72616e646f6dULL ^ k1;
  uint64_t v2 = 0x6c7967656e657261ULL ^ k0, v3 = 0x7465646279746573ULL ^ k1;
  auto round = [&] {
    v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32);
    v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;
    v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;
    v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32);
  };
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t m = le64(in + i);
    v3 ^= m; round(); round(); v0 ^= m;
  }
  uint64_t b = uint64_t(len) << 56;
  for (size_t j = 0; i + j < len; ++j) b |= uint64_t(in[i + j]) << (8 * j);
  v3 ^= b; round(); round(); v0 ^= b;
  v2 ^= 0xff;
  round(); round(); round(); round();
  return v0 ^ v1 ^ v2 ^ v3;
}

uint32_t crc32c(const uint8_t* d, size_t len, uint32_t crc) {
  crc = ~crc;
#if defined(__SSE4_2__)
  size_t i = 0;
  for (; i + 8 <= len; i += 8) crc = uint32_t(_mm_crc32_u64(crc, le64(d + i)));
  for (; i < len; ++i) crc = _mm_crc32_u8(crc, d[i]);
#else
  for (size_t i = 0; i < len; ++i) {
    crc ^= d[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
#endif
  return ~crc;
}

uint64_t TagCodec::check_slow(uint64_t w0, uint64_t w1) const {
  uint8_t b[16];
  std::memcpy(b, &w0, 8);
  std::memcpy(b + 8, &w1, 8);
  return key_ ? siphash24(*key_, b, 16) : crc32c(b, 16);
}

void TagCodec::encode_payloadpark(const ParkTag& t, uint8_t* o) const {
  o[0] = uint8_t((t.parked ? 0x80 : 0) | (t.drop ? 0x40 : 0));
  if (!t.parked) {  // the P4 code zeroes the whole header when Split is disabled
    std::memset(o + 1, 0, 6);
    return;
  }
  store_be16(o + 3, uint16_t(t.index));
  store_be16(o + 5, uint16_t(t.generation));
  uint32_t s = uint32_t(o[0] & 0x80) << 8;
  s = csum_partial(o + 3, 4, s);
  store_be16(o + 1, csum_finish(s));
}

TagError TagCodec::decode(const uint8_t* in, uint32_t avail, ParkTag& t) const {
  if (avail < size()) return TagError::kShort;
  t = ParkTag{};
  if (format_ == TagFormat::kNfpark) {
    uint64_t c;
    std::memcpy(&c, in + 16, 8);
    if (!peek(in, t)) {
      t = ParkTag{};
      return (in[0] != kMagic || (in[1] >> 4) != kVersion) ? TagError::kMagic : TagError::kCheck;
    }
    uint64_t w0, w1;
    std::memcpy(&w0, in, 8);
    std::memcpy(&w1, in + 8, 8);
    if (__builtin_bswap64(c) != check(w0, w1)) {
      t = ParkTag{};
      return TagError::kCheck;
    }
    return TagError::kNone;
  }
  if (in[0] & 0x3F) return TagError::kMagic;  // unused bits must be zero
  if (!(in[0] & 0x80)) {  // ENB=0: nothing parked, the rest of the header is zero
    for (int i = 1; i < 7; ++i)
      if (in[i]) return TagError::kCheck;
    t.drop = in[0] & 0x40;
    return TagError::kNone;
  }
  uint32_t s = uint32_t(in[0] & 0x80) << 8;
  s = csum_partial(in + 3, 4, s);
  if (csum_finish(s) != load_be16(in + 1)) return TagError::kCheck;
  t.parked = in[0] & 0x80;
  t.drop = in[0] & 0x40;
  t.index = load_be16(in + 3);
  t.generation = load_be16(in + 5);
  return TagError::kNone;
}

void TagCodec::set_drop(uint8_t* tag, TagFormat f) {
  if (f == TagFormat::kNfpark) tag[1] |= kFlagDrop;
  else tag[0] |= 0x40;
}

}  // namespace nfpark::park
