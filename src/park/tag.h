// ParkTag: the label a header packet carries so its parked payload can be found again.
//
// Two wire formats, both placed right after the L4 header (where the parked payload began):
//
//  nfpark (24 bytes, default)
//    0      magic 'N' (0x4E)
//    1      version (high nibble, 1) | flags (low nibble): 0x1 parked (ENB), 0x2 drop (OP),
//                                                          0x4 keyed check
//    2      slice (NF server)            3  reserved, 0
//    4..7   slot index (be32)            8..11  generation (be32)
//    12..13 original frame length (be16) 14..15 parked byte count (be16)
//    16..23 check: SipHash-2-4 MAC under the codec's key (keyed), else CRC-32C, over bytes 0..15
//           with the drop flag cleared — so an NF may set "drop" without knowing the key, and
//           any other change (index, generation, slice, lengths) is detected.
//
//  payloadpark (7 bytes, the P4 code's pp_h + tag + clock, field for field):
//    0      ENB(bit 7) | OP(bit 6) | 6 unused bits (zero)
//    1..2   check              3..4 table index (be16)            5..6 clock / generation (be16)
//    With ENB=0 all seven bytes are zero except OP, as the P4 code emits them.
//    Keyed (every run): check = the low 16 bits of SipHash-2-4 over (slice, ENB, index, wire
//    clock), and the wire clock = P(generation), P a keyed permutation of 16-bit values
//    (keyed_perm.h): a forger who saw any number of tags can predict neither the next clock nor
//    a check. Unkeyed (unit tests, interop with the P4 code's own tags): the P4 code's
//    ones'-complement checksum over byte 0 (OP masked) and bytes 3..6, clock as is. (The P4 code
//    sets the checksum but never checks it; nfpark checks either form.) 16 bits of check are a
//    weak MAC alone (a blind forger succeeds once in 2^16 tries) — see docs/security.md for what
//    else a forged 7-byte tag must match.
//
// A tag that fails its check, has the wrong magic/version, names another slice, or is cut short
// is rejected by decode(): the merge side counts and drops it and never touches a slot.
//
// API (stable; the fuzz targets drive it):
//   TagCodec(format, key)    key: 16 bytes (keyed: what every run uses, from --tag-key or the
//                            run's secret) or nullopt (unkeyed: CRC-32C / ones' complement)
//   size()                   24 or 7 bytes
//   encode(tag, out)         writes size() bytes; the 7-byte format keys its check with tag.slice
//   decode(in, avail, tag, slice)  kNone or why not; `slice` is the NF server the packet came
//                            back from (the 7-byte format has no slice field: it is checked
//                            through the MAC; the nfpark format carries it, the caller compares)
//   peek(in, tag)            nfpark format: the fields without the check (see below)
//   set_drop(tag, format)    sets OP in place; the tag stays valid
#pragma once
#include <array>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

#include "core/hot_path.h"
#include "park/keyed_perm.h"
#include "park/siphash.h"

#if defined(__SSE4_2__)
#include <nmmintrin.h>
#endif

namespace nfpark::park {

// The longest frame a tag can describe (orig_len is 16 bits): longer ones go whole.
constexpr uint32_t kMaxTaggedFrame = 0xFFFF;

enum class TagFormat : uint8_t { kNfpark, kPayloadPark };
std::optional<TagFormat> parse_tag_format(std::string_view s);
std::string_view to_string(TagFormat f);

struct ParkTag {
  bool parked = false;  // ENB: the payload (or its first park_len bytes) waits in a slot
  bool drop = false;    // OP: explicit drop notification from the NF side
  uint8_t slice = 0;
  uint32_t index = 0;
  uint32_t generation = 0;
  uint16_t orig_len = 0;    // frame length before the split (nfpark format only; 16 bits, so a
                            // frame above kMaxTaggedFrame is never parked)
  uint16_t parked_len = 0;  // bytes parked (nfpark format only)
};

enum class TagError : uint8_t { kNone, kShort, kMagic, kCheck };

class TagCodec {
 public:
  // key: 16 bytes (keyed) or nullopt (unkeyed).
  explicit TagCodec(TagFormat f, std::optional<Key128> key = std::nullopt);
  TagFormat format() const { return format_; }
  bool keyed() const { return keyed_; }
  uint32_t size() const { return format_ == TagFormat::kNfpark ? 24 : 7; }
  // Largest index / generation the format can carry (+1): the store must wrap below these.
  uint64_t index_limit() const { return format_ == TagFormat::kNfpark ? (1ull << 32) : (1u << 16); }
  uint64_t generation_limit() const { return index_limit(); }

  // The nfpark format's encode and peek are inline: they run once per split and merge.
  void encode(const ParkTag& t, uint8_t* out) const {
    if (format_ != TagFormat::kNfpark) return encode_payloadpark(t, out);
    encode_nfpark(t, out);
  }
  // encode() for a codec of the nfpark format (QueueMem's): always inlined into its caller.
  NFPARK_HOT_INLINE void encode_nfpark(const ParkTag& t, uint8_t* out) const {
    assert(format_ == TagFormat::kNfpark);
    const uint8_t flags = uint8_t(kVersion << 4 | (t.parked ? kFlagParked : 0) |
                                  (t.drop ? kFlagDrop : 0) | (keyed_ ? kFlagKeyed : 0));
    const uint64_t w0 = uint64_t(kMagic) | uint64_t(flags) << 8 | uint64_t(t.slice) << 16 |
                        uint64_t(__builtin_bswap32(t.index)) << 32;
    const uint64_t w1 = uint64_t(__builtin_bswap32(t.generation)) |
                        uint64_t(__builtin_bswap16(t.orig_len)) << 32 |
                        uint64_t(__builtin_bswap16(t.parked_len)) << 48;
    const uint64_t c = __builtin_bswap64(check(w0, w1));
    std::memcpy(out, &w0, 8);  // two words in wire order, then the check
    std::memcpy(out + 8, &w1, 8);
    std::memcpy(out + 16, &c, 8);
  }
  TagError decode(const uint8_t* in, uint32_t avail, ParkTag& t, uint8_t slice = 0) const;
  // decode() for a codec of the nfpark format (QueueMem's merge): always inlined into its caller
  // (out of line it cost ~60 instructions a packet in the simulator's QUEUE-MEM loop).
  NFPARK_HOT_INLINE TagError decode_nfpark(const uint8_t* in, uint32_t avail, ParkTag& t) const {
    assert(format_ == TagFormat::kNfpark);
    if (avail < 24) [[unlikely]]
      return TagError::kShort;
    if (!peek(in, t)) [[unlikely]] {
      t = ParkTag{};
      return (in[0] != kMagic || (in[1] >> 4) != kVersion) ? TagError::kMagic : TagError::kCheck;
    }
    uint64_t w0, w1, c;
    std::memcpy(&w0, in, 8);
    std::memcpy(&w1, in + 8, 8);
    std::memcpy(&c, in + 16, 8);
    if (__builtin_bswap64(c) != check(w0, w1)) [[unlikely]] {
      t = ParkTag{};
      return TagError::kCheck;
    }
    return TagError::kNone;
  }
  // nfpark format only: reads the fields of a complete tag (size() bytes) without verifying its
  // check — for callers that prove the tag by other means (PayloadPark's merge fast path).
  // False unless magic, version, key flag and reserved byte are as encode() writes them.
  bool peek(const uint8_t* in, ParkTag& t) const {
    uint64_t w0, w1;
    std::memcpy(&w0, in, 8);
    std::memcpy(&w1, in + 8, 8);
    const uint8_t flags = uint8_t(w0 >> 8);
    if (uint8_t(w0) != kMagic || (flags >> 4) != kVersion || uint8_t(w0 >> 24) != 0) return false;
    if (bool(flags & kFlagKeyed) != keyed_) return false;
    t.parked = flags & kFlagParked;
    t.drop = flags & kFlagDrop;
    t.slice = uint8_t(w0 >> 16);
    t.index = __builtin_bswap32(uint32_t(w0 >> 32));
    t.generation = __builtin_bswap32(uint32_t(w1));
    t.orig_len = __builtin_bswap16(uint16_t(w1 >> 32));
    t.parked_len = __builtin_bswap16(uint16_t(w1 >> 48));
    return true;
  }
  // Marks an encoded tag as an explicit drop in place (the OP bit), keeping it valid.
  static void set_drop(uint8_t* tag, TagFormat f);

 private:
  static constexpr uint8_t kMagic = 0x4E, kVersion = 1;
  static constexpr uint8_t kFlagParked = 0x1, kFlagDrop = 0x2, kFlagKeyed = 0x4;
  // The check over bytes 0..15 given as two little-endian words (x86), the drop flag cleared.
  // Works on registers: a byte-wise copy to a scratch buffer costs store-forwarding stalls.
  uint64_t check(uint64_t w0, uint64_t w1) const {
    w0 &= ~(uint64_t(kFlagDrop) << 8);
    if (keyed_) return sip24_2(sip_, w0, w1);  // == siphash24 of bytes 0..15
#if defined(__SSE4_2__)
    return uint32_t(~_mm_crc32_u64(_mm_crc32_u64(0xFFFFFFFFu, w0), w1));
#else
    return check_slow(w0, w1);
#endif
  }
  uint64_t check_slow(uint64_t w0, uint64_t w1) const;  // CRC-32C without SSE4.2
  void encode_payloadpark(const ParkTag& t, uint8_t* out) const;
  TagError decode_payloadpark(const uint8_t* in, ParkTag& t, uint8_t slice) const;
  uint16_t check7(bool parked, uint8_t slice, uint16_t index, uint16_t wire_clock) const;
  TagFormat format_;
  bool keyed_;
  SipKey sip_;                             // the MAC key (keyed only)
  std::optional<KeyedPermutation> clock_;  // 7-byte format, keyed: generation <-> wire clock
};

uint32_t crc32c(const uint8_t* data, size_t len, uint32_t crc = 0);

}  // namespace nfpark::park
