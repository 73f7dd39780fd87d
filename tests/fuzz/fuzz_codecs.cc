// Fuzz target `codecs`: every tag and token codec. The first byte picks the codec:
//   0 nfpark tag, CRC-32C check      1 nfpark tag, SipHash-2-4 MAC under a key
//   2 PayloadPark's 7-byte tag, the P4 code's checksum (unkeyed)
//   3 QUEUE-MEM's tag (the codec QueueMem builds for itself, keyed or not)
//   4 NFSlicer's token layout and its keyed generations (KeyedPermutation, 2..64 bits)
//   5 PayloadPark's 7-byte tag, keyed (16-bit MAC, keyed clock) — what every run uses
// then the rest drives it: bytes to decode, fields to encode, a bit to flip, keys.
//
// Properties (tags):
//  - canonical: decode() accepts only what encode() writes — an accepted input re-encodes to
//    exactly its own bytes (so nothing was accepted that was not encoded under this codec's key,
//    and no two byte strings carry the same tag);
//  - decode() of fewer bytes than the tag is kShort; decode(encode(t)) == t for every field the
//    format carries;
//  - any single bit flipped in an encoded tag is rejected, except the drop flag (an NF may set
//    it without the key), which keeps every other field (the keyed 7-byte tag: its 16-bit MAC
//    lets one flip in 2^16 through, so only the flag byte's six must-be-zero bits are checked
//    there — flipping ENB turns a header of zeros into a parked tag that only the MAC guards,
//    and the fuzzer finds keys whose MAC of a zero index and clock is zero);
//  - nfpark tags: a tag encoded under one key is rejected under another, and keyed and unkeyed
//    tags never accept each other; peek() reads what decode() reads.
// Properties (token): make/core/index/generation round trip for every index width; the keyed
// permutation is a bijection on its bits (inverse(p(x)) == x); no ring token is the escape
// token.
#include <array>
#include <cstdint>
#include <cstring>
#include <optional>

#include "fuzz/check.h"
#include "fuzz/input.h"
#include "park/keyed_perm.h"
#include "park/queue_mem.h"
#include "park/slicer_token.h"
#include "park/tag.h"
#include "park/vec_buffer.h"

namespace nfpark::fuzz {
namespace {

using park::ParkTag;
using park::TagCodec;
using park::TagError;
using park::TagFormat;
using Key = std::array<uint8_t, 16>;

Key key_from(Input& in) {
  Key k;
  in.fill(k.data(), k.size());
  return k;
}

ParkTag tag_from(Input& in, TagFormat f, uint8_t slice) {
  ParkTag t;
  t.parked = in.flag();
  t.drop = in.flag();
  if (f == TagFormat::kPayloadPark) {
    if (t.parked) {
      t.slice = slice;  // not on the wire: the link it comes back on, bound by the MAC
      t.index = in.u16();
      t.generation = in.u16();
    }
    return t;  // the 7-byte format carries nothing else
  }
  t.slice = in.u8();
  t.index = in.u32();
  t.generation = in.u32();
  t.orig_len = in.u16();
  t.parked_len = in.u16();
  return t;
}

bool same(const ParkTag& a, const ParkTag& b) {
  return a.parked == b.parked && a.drop == b.drop && a.slice == b.slice && a.index == b.index &&
         a.generation == b.generation && a.orig_len == b.orig_len && a.parked_len == b.parked_len;
}

// The drop flag's bit in an encoded tag (byte, mask).
std::pair<uint32_t, uint8_t> drop_bit(TagFormat f) {
  return f == TagFormat::kNfpark ? std::pair<uint32_t, uint8_t>{1, 0x02}
                                 : std::pair<uint32_t, uint8_t>{0, 0x40};
}

void check_tag_codec(const TagCodec& c, Input& in, const std::optional<Key>& key) {
  const TagFormat f = c.format();
  const uint32_t size = c.size();
  FUZZ_CHECK(size == (f == TagFormat::kNfpark ? 24u : 7u), "tag size %u", size);

  const uint8_t slice = in.u8();  // the NF link a packet comes back on
  const bool weak = f == TagFormat::kPayloadPark && c.keyed();  // a 16-bit MAC

  // 1. Arbitrary bytes: accepted only if canonical.
  const uint32_t avail = in.range(0, size + 8);
  std::vector<uint8_t> raw = in.bytes(avail);
  ParkTag t;
  const TagError e = c.decode(raw.data(), avail, t, slice);
  if (avail < size) FUZZ_CHECK(e == TagError::kShort, "short input accepted (%u bytes)", avail);
  if (e == TagError::kNone) {
    uint8_t re[24];
    c.encode(t, re);
    FUZZ_CHECK(std::memcmp(re, raw.data(), size) == 0,
               "decode accepted bytes that encode() does not write (format %u)", unsigned(f));
    if (f == TagFormat::kNfpark) {
      ParkTag p;
      FUZZ_CHECK(c.peek(raw.data(), p) && same(p, t), "peek disagrees with decode");
    }
  }

  // 2. Round trip.
  const ParkTag want = tag_from(in, f, slice);
  uint8_t enc[24];
  c.encode(want, enc);
  ParkTag got;
  FUZZ_CHECK(c.decode(enc, size, got, slice) == TagError::kNone, "own tag rejected");
  FUZZ_CHECK(same(got, want), "round trip changed the tag");

  // 3. One bit flipped: rejected, unless it is the drop flag.
  const uint32_t bit = in.range(0, size * 8 - 1);
  uint8_t flipped[24];
  std::memcpy(flipped, enc, size);
  flipped[bit / 8] ^= uint8_t(1u << (bit % 8));
  const auto [db, dm] = drop_bit(f);
  const TagError fe = c.decode(flipped, size, got, slice);
  if (bit / 8 == db && (1u << (bit % 8)) == dm) {
    FUZZ_CHECK(fe == TagError::kNone && got.drop != want.drop, "drop flag flip not accepted");
    got.drop = want.drop;
    FUZZ_CHECK(same(got, want), "drop flag flip changed another field");
  } else if (!weak || bit < 6) {  // bits 0-5 of the flag byte: unused, must be zero
    FUZZ_CHECK(fe != TagError::kNone, "bit %u flipped and still accepted (format %u)", bit,
               unsigned(f));
  }

  // 4. set_drop: valid, drop set, nothing else changed.
  std::memcpy(flipped, enc, size);
  TagCodec::set_drop(flipped, f);
  FUZZ_CHECK(c.decode(flipped, size, got, slice) == TagError::kNone && got.drop,
             "set_drop broke it");
  got.drop = want.drop;
  FUZZ_CHECK(same(got, want), "set_drop changed another field");

  // 5. Keys: another key rejects; keyed and unkeyed never accept each other's tags.
  if (f != TagFormat::kNfpark) return;
  const Key other = key_from(in);
  if (key) {
    if (other != *key) {
      FUZZ_CHECK(TagCodec(f, other).decode(enc, size, got) != TagError::kNone,
                 "a tag encoded under one key accepted under another");
    }
    FUZZ_CHECK(TagCodec(f).decode(enc, size, got) != TagError::kNone,
               "a keyed tag accepted by the unkeyed codec");
  } else {
    FUZZ_CHECK(TagCodec(f, other).decode(enc, size, got) != TagError::kNone,
               "an unkeyed tag accepted by a keyed codec");
  }
}

void check_token(Input& in) {
  const uint32_t bits = in.range(0, park::kMaxIndexBits);
  const park::TokenLayout lay(bits);
  FUZZ_CHECK(lay.generation_bits() >= 32, "only %u generation bits", lay.generation_bits());
  const uint8_t core = uint8_t(in.range(0, park::kMaxSlicerCores - 1));
  const uint64_t gen = in.u64() & lay.generation_mask();
  const uint32_t idx = in.u32() & uint32_t((uint64_t(1) << bits) - 1);
  const uint64_t tok = lay.make(core, gen, idx);
  FUZZ_CHECK(
      park::TokenLayout::core(tok) == core && lay.generation(tok) == gen && lay.index(tok) == idx,
      "token round trip (bits %u)", bits);
  FUZZ_CHECK(tok != park::kEscapeToken, "a ring token equals the escape token");

  // The keyed permutation behind generations: a bijection on `pbits` bits.
  const uint32_t pbits = in.range(2, 64);
  Key key;
  in.fill(key.data(), key.size());
  const park::KeyedPermutation p(pbits, key);
  const uint64_t mask = pbits == 64 ? ~uint64_t(0) : (uint64_t(1) << pbits) - 1;
  const uint64_t x = in.u64() & mask;
  const uint64_t y = p(x);
  FUZZ_CHECK(y <= mask, "permuted value wider than %u bits", pbits);
  FUZZ_CHECK(p.inverse(y) == x, "inverse(p(x)) != x at %u bits", pbits);
}

}  // namespace
}  // namespace nfpark::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nfpark;
  using namespace nfpark::fuzz;
  Input in(data, size);
  switch (in.u8() % 6) {
    case 0:
      check_tag_codec(park::TagCodec(park::TagFormat::kNfpark), in, std::nullopt);
      break;
    case 1: {
      const Key k = key_from(in);
      check_tag_codec(park::TagCodec(park::TagFormat::kNfpark, k), in, k);
      break;
    }
    case 2:
      check_tag_codec(park::TagCodec(park::TagFormat::kPayloadPark), in, std::nullopt);
      break;
    case 3: {
      park::QueueMemConfig qc;
      qc.queues = 2;
      qc.slices = 1;
      qc.header_array = 4;
      std::optional<Key> k;
      if (in.flag()) k = key_from(in);
      qc.key = k;
      park::QueueMem<park::testing::VecBuffer> qm(qc);
      check_tag_codec(qm.codec(), in, k);
      break;
    }
    case 5: {
      const Key k = key_from(in);
      check_tag_codec(park::TagCodec(park::TagFormat::kPayloadPark, k), in, k);
      break;
    }
    default:
      check_token(in);
  }
  return 0;
}
