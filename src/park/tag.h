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
//    16..23 check: SipHash-2-4 under the configured key (keyed), else CRC-32C, over bytes 0..15
//           with the drop flag cleared — so an NF may set "drop" without knowing the key, and
//           any other change (index, generation, slice, lengths) is detected.
//
//  payloadpark (7 bytes, byte-compatible with the P4 code's pp_h + tag + clock):
//    0      ENB(bit 7) | OP(bit 6) | 6 unused bits
//    1..2   16-bit ones'-complement checksum over bytes 0 (OP masked), 3..6
//    3..4   table index (be16)           5..6   clock / generation (be16)
//    With ENB=0 all seven bytes are zero except OP, as the P4 code emits them.
//    (The P4 code sets the checksum but never checks it; nfpark checks it.)
//
// A tag that fails its check, has the wrong magic/version, names another slice, or is cut short
// is rejected by decode(): the merge side counts and drops it and never touches a slot.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace nfpark::park {

enum class TagFormat : uint8_t { kNfpark, kPayloadPark };
std::optional<TagFormat> parse_tag_format(std::string_view s);
std::string_view to_string(TagFormat f);

struct ParkTag {
  bool parked = false;      // ENB: the payload (or its first park_len bytes) waits in a slot
  bool drop = false;        // OP: explicit drop notification from the NF side
  uint8_t slice = 0;
  uint32_t index = 0;
  uint32_t generation = 0;
  uint16_t orig_len = 0;    // frame length before the split (nfpark format only)
  uint16_t parked_len = 0;  // bytes parked (nfpark format only)
};

enum class TagError : uint8_t { kNone, kShort, kMagic, kCheck };

class TagCodec {
 public:
  // key: 16 bytes for SipHash (keyed) or nullopt for CRC-32C.
  explicit TagCodec(TagFormat f, std::optional<std::array<uint8_t, 16>> key = std::nullopt)
      : format_(f), key_(key) {}
  TagFormat format() const { return format_; }
  uint32_t size() const { return format_ == TagFormat::kNfpark ? 24 : 7; }
  // Largest index / generation the format can carry (+1): the store must wrap below these.
  uint64_t index_limit() const { return format_ == TagFormat::kNfpark ? (1ull << 32) : (1u << 16); }
  uint64_t generation_limit() const { return index_limit(); }

  void encode(const ParkTag& t, uint8_t* out) const;
  TagError decode(const uint8_t* in, uint32_t avail, ParkTag& t) const;
  // nfpark format only: reads the fields of a complete tag (size() bytes) without verifying its
  // check — for callers that prove the tag by other means (PayloadPark's merge fast path).
  // False unless magic, version, key flag and reserved byte are as encode() writes them.
  bool peek(const uint8_t* in, ParkTag& t) const;
  // Marks an encoded tag as an explicit drop in place (the OP bit), keeping it valid.
  static void set_drop(uint8_t* tag, TagFormat f);

 private:
  uint64_t check(uint64_t w0, uint64_t w1) const;  // bytes 0..15 as little-endian words
  TagFormat format_;
  std::optional<std::array<uint8_t, 16>> key_;
};

uint64_t siphash24(const std::array<uint8_t, 16>& key, const uint8_t* data, size_t len);
uint32_t crc32c(const uint8_t* data, size_t len, uint32_t crc = 0);

}  // namespace nfpark::park
