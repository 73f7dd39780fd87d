#include "park/tag.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "core/bytes.h"
#include "park/slot_table.h"

namespace nfpark::park {
namespace {

TEST(Tag, RoundTripsBothFormats) {
  for (auto f : {TagFormat::kNfpark, TagFormat::kPayloadPark}) {
    TagCodec c(f);
    ParkTag t;
    t.parked = true;
    t.slice = f == TagFormat::kNfpark ? 3 : 0;
    t.index = 0xBEEF;
    t.generation = 0x1234;
    t.orig_len = f == TagFormat::kNfpark ? 1500 : 0;
    t.parked_len = f == TagFormat::kNfpark ? 160 : 0;
    uint8_t buf[24] = {};
    c.encode(t, buf);
    ParkTag u;
    ASSERT_EQ(c.decode(buf, c.size(), u), TagError::kNone);
    EXPECT_EQ(u.parked, true);
    EXPECT_EQ(u.index, t.index);
    EXPECT_EQ(u.generation, t.generation);
    EXPECT_EQ(u.slice, t.slice);
    EXPECT_EQ(u.orig_len, t.orig_len);
    EXPECT_EQ(c.decode(buf, c.size() - 1, u), TagError::kShort);
    TagCodec::set_drop(buf, f);
    ASSERT_EQ(c.decode(buf, c.size(), u), TagError::kNone) << "drop flag keeps the tag valid";
    EXPECT_TRUE(u.drop);
  }
}

TEST(Tag, PayloadParkLayoutIsByteExact) {
  TagCodec c(TagFormat::kPayloadPark);
  ParkTag t;
  t.parked = true;
  t.index = 0x0102;
  t.generation = 0x0304;
  uint8_t b[7];
  c.encode(t, b);
  EXPECT_EQ(b[0], 0x80);  // ENB=1, OP=0: what the ONVM patch looks for
  EXPECT_EQ(b[3], 0x01);
  EXPECT_EQ(b[4], 0x02);
  EXPECT_EQ(b[5], 0x03);
  EXPECT_EQ(b[6], 0x04);
  // ones'-complement checksum over 0x8000 + 0x0102 + 0x0304 = 0x8406 -> ~ = 0x7BF9
  EXPECT_EQ(b[1], 0x7B);
  EXPECT_EQ(b[2], 0xF9);
  TagCodec::set_drop(b, TagFormat::kPayloadPark);
  EXPECT_EQ(b[0], 0xC0);  // the ONVM explicit-drop rewrite
  ParkTag z;
  uint8_t zero[7] = {};
  ASSERT_EQ(c.decode(zero, 7, z), TagError::kNone);  // disabled split: all zero
  EXPECT_FALSE(z.parked);
}

TEST(Tag, EverySingleBitFlipIsDetected) {
  for (auto f : {TagFormat::kNfpark, TagFormat::kPayloadPark})
    for (bool keyed : {false, true}) {
      TagCodec c(f, keyed ? std::optional<Key128>(Key128{3, 1, 4}) : std::nullopt);
      ParkTag t;
      t.parked = true;
      t.index = 77;
      t.generation = 99;
      uint8_t buf[24];
      c.encode(t, buf);
      for (unsigned bit = 0; bit < c.size() * 8; ++bit) {
        if (f == TagFormat::kNfpark && bit == 14) continue;      // the drop flag (0x02 of byte 1)
        if (f == TagFormat::kPayloadPark && bit == 1) continue;  // OP (bit 6 of byte 0)
        uint8_t x[24];
        std::memcpy(x, buf, sizeof x);
        x[bit / 8] ^= uint8_t(0x80u >> (bit % 8));
        ParkTag u;
        TagError e = c.decode(x, c.size(), u);
        bool same = e == TagError::kNone && u.parked && u.index == 77 && u.generation == 99;
        EXPECT_FALSE(same) << to_string(f) << (keyed ? " keyed" : "") << " bit " << bit;
      }
    }
}

TEST(Tag, KeyedAndUnkeyedDoNotMix) {
  std::array<uint8_t, 16> k{};
  k[0] = 1;
  TagCodec keyed(TagFormat::kNfpark, k), plain(TagFormat::kNfpark);
  ParkTag t;
  t.parked = true;
  uint8_t b[24];
  plain.encode(t, b);
  ParkTag u;
  EXPECT_NE(keyed.decode(b, 24, u), TagError::kNone);
  keyed.encode(t, b);
  EXPECT_EQ(keyed.decode(b, 24, u), TagError::kNone);
  std::array<uint8_t, 16> k2 = k;
  k2[15] = 9;
  EXPECT_NE(TagCodec(TagFormat::kNfpark, k2).decode(b, 24, u), TagError::kNone);
}

// Keyed 7-byte tags: the clock on the wire is a keyed permutation of the generation (not the
// slot table's counter), the check is a MAC that binds the slice, and the P4 layout stays.
TEST(Tag, KeyedSevenByteTagsHideTheClockAndBindTheSlice) {
  TagCodec c(TagFormat::kPayloadPark, Key128{7});
  int same_clock = 0;
  for (uint32_t g = 0; g < 1000; ++g) {
    ParkTag t;
    t.parked = true;
    t.slice = 2;
    t.index = 0x0102;
    t.generation = g;
    uint8_t b[7];
    c.encode(t, b);
    EXPECT_EQ(b[0], 0x80);
    EXPECT_EQ(load_be16(b + 3), 0x0102);
    same_clock += load_be16(b + 5) == g;
    ParkTag u;
    ASSERT_EQ(c.decode(b, 7, u, 2), TagError::kNone);
    EXPECT_EQ(u.generation, g);
    EXPECT_EQ(u.slice, 2);
    EXPECT_NE(c.decode(b, 7, u, 3), TagError::kNone) << "issued to slice 2, back on slice 3";
  }
  EXPECT_LT(same_clock, 5);
}

// Tags of another run (another secret, so another key) are rejected: the nfpark format always,
// the 7-byte format but for its 16-bit MAC's chance (none here, over 20,000 tags).
TEST(Tag, TagsOfAnotherRunAreRejected) {
  for (auto f : {TagFormat::kNfpark, TagFormat::kPayloadPark}) {
    TagCodec run1(f, Key128{1}), run2(f, Key128{2});
    int accepted = 0;
    for (uint32_t i = 0; i < 20000; ++i) {
      ParkTag t;
      t.parked = true;
      t.index = i % 65536;
      t.generation = i * 7 % 65536;
      t.orig_len = 1500;
      uint8_t b[24];
      run1.encode(t, b);
      ParkTag u;
      accepted += run2.decode(b, run2.size(), u) == TagError::kNone;
    }
    EXPECT_EQ(accepted, 0) << to_string(f);
  }
}

TEST(SipHash, MatchesReferenceVector) {
  // Reference: SipHash-2-4, key 00..0f, message 00..0e (15 bytes) = 0xa129ca6149be45e5.
  std::array<uint8_t, 16> key;
  for (int i = 0; i < 16; ++i) key[size_t(i)] = uint8_t(i);
  uint8_t msg[15];
  for (int i = 0; i < 15; ++i) msg[i] = uint8_t(i);
  EXPECT_EQ(siphash24(key, msg, 15), 0xa129ca6149be45e5ULL);
  EXPECT_EQ(siphash24(key, msg, 0), 0x726fdb47dd0e0e31ULL);
}

TEST(Crc32c, MatchesReferenceVector) {
  const char* s = "123456789";
  EXPECT_EQ(crc32c(reinterpret_cast<const uint8_t*>(s), 9), 0xE3069283u);
}

TEST(SlotTable, ExpCountsTraversalsAndGenerationsGuardReuse) {
  SlotTable<int> t(3, 2, 1u << 16);
  auto a = t.claim(1);  // slot 0
  ASSERT_TRUE(a.ok);
  EXPECT_EQ(a.index, 0u);
  t.claim(2);
  t.claim(3);           // slots 1, 2
  auto d = t.claim(4);  // slot 0 again: EXP 2 -> 1, busy
  EXPECT_FALSE(d.ok);
  EXPECT_FALSE(d.evicted);
  t.claim(5);
  t.claim(6);           // slots 1, 2 busy too
  auto e = t.claim(7);  // slot 0: EXP 1 -> 0, evicts payload 1
  ASSERT_TRUE(e.ok);
  ASSERT_TRUE(e.evicted);
  EXPECT_EQ(*e.evicted, 1);
  EXPECT_FALSE(t.take(0, a.generation)) << "old generation must not match";
  auto got = t.take(0, e.generation);
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, 7);
  EXPECT_FALSE(t.take(0, e.generation)) << "a slot is taken once";
  EXPECT_FALSE(t.take(99, 0));
  int drained = 0;
  t.drain([&](int) { ++drained; });
  EXPECT_EQ(drained, 2);
  EXPECT_EQ(t.occupied(), 0u);
}

TEST(SlotTable, GenerationWraps) {
  SlotTable<int> t(4, 1, 8);
  std::vector<uint32_t> gens;
  for (int i = 0; i < 20; ++i) {
    auto c = t.claim(i);
    ASSERT_TRUE(c.ok);
    gens.push_back(c.generation);
    ASSERT_TRUE(t.take(c.index, c.generation));
  }
  for (auto g : gens) EXPECT_LT(g, 8u);
}

TEST(TagCodec, PeekReadsFieldsWithoutTheCheckButRejectsWhatEncodeNeverWrites) {
  TagCodec c(TagFormat::kNfpark);
  ParkTag t;
  t.parked = true;
  t.slice = 3;
  t.index = 0x01020304;
  t.generation = 0xA0B0C0D0;
  t.orig_len = 1500;
  t.parked_len = 1458;
  uint8_t b[24];
  c.encode(t, b);
  ParkTag got;
  ASSERT_TRUE(c.peek(b, got));
  EXPECT_EQ(got.index, t.index);
  EXPECT_EQ(got.generation, t.generation);
  EXPECT_EQ(got.slice, 3);
  EXPECT_EQ(got.orig_len, 1500);
  EXPECT_EQ(got.parked_len, 1458);
  EXPECT_TRUE(got.parked);
  b[20] ^= 1;  // the check: peek does not look at it, decode does
  EXPECT_TRUE(c.peek(b, got));
  EXPECT_EQ(c.decode(b, 24, got), TagError::kCheck);
  b[20] ^= 1;
  b[3] = 1;  // reserved byte
  EXPECT_FALSE(c.peek(b, got));
  EXPECT_EQ(c.decode(b, 24, got), TagError::kCheck);
  b[3] = 0;
  b[0] = 'X';
  EXPECT_FALSE(c.peek(b, got));
  EXPECT_EQ(c.decode(b, 24, got), TagError::kMagic);
  b[0] = 0x4E;
  TagCodec keyed(TagFormat::kNfpark, std::array<uint8_t, 16>{1, 2, 3});
  EXPECT_FALSE(keyed.peek(b, got)) << "an unkeyed tag where a keyed one is expected";
}

TEST(SlotTable, FindLeavesTheSlotOccupiedUntilRelease) {
  SlotTable<int> t(4, 1, 1u << 16);
  auto c = t.claim(5);
  ASSERT_TRUE(c.ok);
  const int* p = t.find(c.index, c.generation);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p, 5);
  EXPECT_EQ(t.find(c.index, c.generation + 1), nullptr);
  EXPECT_EQ(t.occupied(), 1u);
  t.release(c.index);
  EXPECT_EQ(t.occupied(), 0u);
  EXPECT_EQ(t.find(c.index, c.generation), nullptr);
}

}  // namespace
}  // namespace nfpark::park
