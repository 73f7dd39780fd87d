#include "park/tag.h"

#include <bit>
#include <cstring>

#include "core/bytes.h"
#include "core/checksum.h"
#include "park/secret.h"

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
inline uint64_t le64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;  // x86 is little-endian
}
// The derived key of the 7-byte format's clock permutation: the MAC key itself stays the
// check's.
constexpr std::string_view kLabelClock = "nfpark/payloadpark-7B-clock";
}  // namespace

TagCodec::TagCodec(TagFormat f, std::optional<Key128> key)
    : format_(f), keyed_(key.has_value()), sip_(key ? SipKey::from(*key) : SipKey{}) {
  if (keyed_ && f == TagFormat::kPayloadPark) clock_.emplace(16, derive_key(*key, kLabelClock));
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
  return crc32c(b, 16);
}

uint16_t TagCodec::check7(bool parked, uint8_t slice, uint16_t index, uint16_t clock) const {
  const uint64_t m = uint64_t(0x7B) << 56 | uint64_t(slice) << 40 | uint64_t(parked) << 32 |
                     uint64_t(index) << 16 | clock;
  return uint16_t(sip24_1(sip_, m));
}

void TagCodec::encode_payloadpark(const ParkTag& t, uint8_t* o) const {
  o[0] = uint8_t((t.parked ? 0x80 : 0) | (t.drop ? 0x40 : 0));
  if (!t.parked) {  // the P4 code zeroes the whole header when Split is disabled
    std::memset(o + 1, 0, 6);
    return;
  }
  store_be16(o + 3, uint16_t(t.index));
  if (keyed_) {
    const uint16_t clock = uint16_t((*clock_)(t.generation & 0xFFFF));
    store_be16(o + 5, clock);
    store_be16(o + 1, check7(true, t.slice, uint16_t(t.index), clock));
    return;
  }
  store_be16(o + 5, uint16_t(t.generation));
  uint32_t s = uint32_t(o[0] & 0x80) << 8;
  s = csum_partial(o + 3, 4, s);
  store_be16(o + 1, csum_finish(s));
}

TagError TagCodec::decode(const uint8_t* in, uint32_t avail, ParkTag& t, uint8_t slice) const {
  if (avail < size()) return TagError::kShort;
  if (format_ == TagFormat::kNfpark) return decode_nfpark(in, avail, t);
  t = ParkTag{};
  return decode_payloadpark(in, t, slice);
}

TagError TagCodec::decode_payloadpark(const uint8_t* in, ParkTag& t, uint8_t slice) const {
  if (in[0] & 0x3F) return TagError::kMagic;  // unused bits must be zero
  if (!(in[0] & 0x80)) {  // ENB=0: nothing parked, the rest of the header is zero
    for (int i = 1; i < 7; ++i)
      if (in[i]) return TagError::kCheck;
    t.drop = in[0] & 0x40;
    return TagError::kNone;
  }
  const uint16_t index = load_be16(in + 3), clock = load_be16(in + 5);
  if (keyed_) {
    if (check7(true, slice, index, clock) != load_be16(in + 1)) return TagError::kCheck;
    t.generation = uint32_t(clock_->inverse(clock));
  } else {
    uint32_t s = uint32_t(in[0] & 0x80) << 8;
    s = csum_partial(in + 3, 4, s);
    if (csum_finish(s) != load_be16(in + 1)) return TagError::kCheck;
    t.generation = clock;
  }
  t.parked = true;
  t.drop = in[0] & 0x40;
  t.slice = slice;
  t.index = index;
  return TagError::kNone;
}

void TagCodec::set_drop(uint8_t* tag, TagFormat f) {
  if (f == TagFormat::kNfpark)
    tag[1] |= kFlagDrop;
  else
    tag[0] |= 0x40;
}

}  // namespace nfpark::park
