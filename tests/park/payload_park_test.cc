// PayloadPark split/merge on VecBuffer: equivalence with no split, NF rewrites, evictions,
// explicit drops, stale/forged/corrupted tags, store full, both tag formats.
#include "park/payload_park.h"

#include <gtest/gtest.h>

#include <random>

#include "core/bytes.h"
#include "core/checksum.h"
#include "core/packet_builder.h"
#include "park/nf_endpoint.h"
#include "park/vec_buffer.h"

namespace nfpark::park {
namespace {

using testing::VecBuffer;
using testing::VecPkt;
using PP = PayloadPark<VecBuffer>;

std::vector<uint8_t> udp_packet(uint64_t id, uint32_t payload, bool v6 = false) {
  PacketBuilder b;
  if (v6)
    b.ipv6("2001:db8::1", "2001:db8::2");
  else
    b.ipv4("10.0.0.1", "10.0.0.2");
  return b.udp(1000 + uint16_t(id % 100), 80).payload_size(payload).packet_id(id).build();
}

// A tiny stand-in for an NF that rewrites the source address and port with RFC 1624 updates,
// working only on the header bytes (as a NAT does).
void rewrite_source(uint8_t* d) {
  PacketLayout L = parse_packet(d, 200);
  ASSERT_TRUE(L.ok());
  uint8_t* ip = d + L.l3_off;
  uint8_t* l4 = d + L.l4_off;
  uint16_t csum_at = L.is_tcp() ? 16 : 6;
  if (L.ip_version == 4) {
    uint32_t old_a = load_be32(ip + 12), new_a = 0xC6120001;
    store_be32(ip + 12, new_a);
    store_be16(ip + 10, csum_update32(load_be16(ip + 10), old_a, new_a));
    store_be16(l4 + csum_at, csum_update32(load_be16(l4 + csum_at), old_a, new_a));
  }
  uint16_t old_p = load_be16(l4), new_p = 40000;
  store_be16(l4, new_p);
  store_be16(l4 + csum_at, csum_update16(load_be16(l4 + csum_at), old_p, new_p));
}

// Keyed, as every run is (the run's secret or --tag-key), unless the test sets its own key.
ParkConfig keyed(ParkConfig c) {
  if (!c.key) c.key = Key128{0xA5, 0x5A, 1, 2, 3};
  return c;
}

struct Harness {
  explicit Harness(ParkConfig c) : pp(keyed(c)), ep(c.format, true) {}
  PP pp;
  NfEndpoint<VecBuffer> ep;
};

class PayloadParkTest : public ::testing::TestWithParam<TagFormat> {
 protected:
  void TearDown() override { EXPECT_EQ(VecBuffer::live, 0) << "packets leaked"; }
};

TEST_P(PayloadParkTest, SplitMergeIsByteIdenticalToNoSplitWithRewrite) {
  ParkConfig c;
  c.format = GetParam();
  for (uint32_t park_bytes : {160u, 352u, 0u}) {
    c.park_bytes = park_bytes;
    Harness h(c);
    for (uint64_t id = 0; id < 200; ++id) {
      uint32_t pay = 100 + uint32_t(id * 37 % 1400);
      auto orig = udp_packet(id, pay, id % 3 == 0);
      auto expect = orig;
      rewrite_source(expect.data());
      auto* p = VecBuffer::make(orig, id);
      VecPkt* to_nf = h.pp.split(p, 0);
      ASSERT_NE(to_nf, nullptr);
      if (pay >= 160) {
        EXPECT_NE(to_nf, p) << "an eligible packet should go as a header packet";
        uint32_t hdr = parse_packet(orig.data(), uint32_t(orig.size())).payload_off;
        uint32_t parked = park_bytes ? std::min(park_bytes, pay) : pay;
        EXPECT_EQ(to_nf->bytes.size(), orig.size() - parked + h.pp.codec().size());
        EXPECT_EQ(0, std::memcmp(to_nf->bytes.data(), orig.data(), hdr));
      }
      PacketView v;
      uint32_t tag_at = 0;
      h.ep.view(to_nf, v, tag_at);
      EXPECT_EQ(v.wire_len, orig.size()) << "the NF must see the original length";
      rewrite_source(to_nf->bytes.data());
      VecPkt* out = h.pp.merge(to_nf, 0);
      ASSERT_NE(out, nullptr);
      ASSERT_EQ(out->bytes, expect) << "packet " << id << " park_bytes " << park_bytes;
      PacketLayout L = parse_packet(out->bytes.data(), uint32_t(out->bytes.size()));
      EXPECT_TRUE(verify_checksums(out->bytes.data(), L));
      VecBuffer::free(out);
    }
    EXPECT_EQ(h.pp.parked(), 0u);
    EXPECT_EQ(h.pp.counters().drops(), 0u);
  }
}

TEST_P(PayloadParkTest, SmallPacketsGoWholeWithTagAndComeBackUnchanged) {
  ParkConfig c;
  c.format = GetParam();
  Harness h(c);
  auto orig = udp_packet(1, 100);
  VecPkt* p = h.pp.split(VecBuffer::make(orig), 0);
  EXPECT_EQ(p->bytes.size(), orig.size() + h.pp.codec().size());
  EXPECT_EQ(h.pp.counters().not_split_small, 1u);
  VecPkt* out = h.pp.merge(p, 0);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->bytes, orig);
  EXPECT_EQ(h.pp.counters().returned_unsplit, 1u);
  VecBuffer::free(out);
}

TEST_P(PayloadParkTest, StoreFullSendsWholeNeverDrops) {
  ParkConfig c;
  c.format = GetParam();
  c.slots = 4;
  c.max_exp = 3;
  Harness h(c);
  std::vector<VecPkt*> held;
  for (uint64_t id = 0; id < 12; ++id)
    held.push_back(h.pp.split(VecBuffer::make(udp_packet(id, 500), id), 0));
  // 4 slots claimed; the next probes find them occupied (EXP 3 -> 2 -> 1) and send whole.
  EXPECT_EQ(h.pp.counters().splits, 4u);
  EXPECT_EQ(h.pp.counters().not_split_busy, 8u);
  EXPECT_EQ(h.pp.counters().evictions, 0u);
  for (auto* p : held) {
    VecPkt* out = h.pp.merge(p, 0);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->bytes, udp_packet(out->id, 500));
    VecBuffer::free(out);
  }
}

TEST_P(PayloadParkTest, EvictionThenLateHeaderIsDroppedNeverMisMerged) {
  ParkConfig c;
  c.format = GetParam();
  c.slots = 2;
  c.max_exp = 1;
  Harness h(c);
  VecPkt* a = h.pp.split(VecBuffer::make(udp_packet(1, 500), 1), 0);   // slot 0
  VecPkt* b = h.pp.split(VecBuffer::make(udp_packet(2, 500), 2), 0);   // slot 1
  VecPkt* cc = h.pp.split(VecBuffer::make(udp_packet(3, 500), 3), 0);  // slot 0: EXP 1->0, evict a
  EXPECT_EQ(h.pp.counters().evictions, 1u);
  EXPECT_EQ(h.pp.merge(a, 0), nullptr);  // a's payload is gone: generation mismatch
  EXPECT_EQ(h.pp.counters().premature_evictions, 1u);
  for (VecPkt* p : {b, cc}) {
    VecPkt* out = h.pp.merge(p, 0);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->bytes, udp_packet(out->id, 500));
    VecBuffer::free(out);
  }
}

TEST_P(PayloadParkTest, ExplicitDropFreesTheSlot) {
  ParkConfig c;
  c.format = GetParam();
  Harness h(c);
  VecPkt* p = h.pp.split(VecBuffer::make(udp_packet(1, 800), 1), 0);
  PacketView v;
  uint32_t tag_at = 0;
  h.ep.view(p, v, tag_at);
  ASSERT_NE(tag_at, 0u);
  VecPkt* back = h.ep.on_drop(p, tag_at);
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(h.pp.merge(back, 0), nullptr);
  EXPECT_EQ(h.pp.counters().explicit_drops, 1u);
  EXPECT_EQ(h.pp.parked(), 0u);
}

TEST_P(PayloadParkTest, CorruptedReplayedAndTruncatedTagsAreDropped) {
  ParkConfig c;
  c.format = GetParam();
  Harness h(c);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 300; ++i) {
    VecPkt* p = h.pp.split(VecBuffer::make(udp_packet(uint64_t(i), 600), uint64_t(i)), 0);
    uint32_t at = parse_packet(p->bytes.data(), uint32_t(p->bytes.size())).payload_off;
    VecPkt* copy = VecBuffer::make(p->bytes, p->id);  // a replay of the same tag
    switch (i % 3) {
      case 0: {  // flip one bit of the tag (not the flags byte)
        unsigned bit = unsigned(rng() % 40);
        p->bytes[at + 2 + bit / 8] ^= uint8_t(1u << (bit % 8));
        EXPECT_EQ(h.pp.merge(p, 0), nullptr);
        break;
      }
      case 1:  // truncated inside the tag
        p->bytes.resize(at + 3);
        EXPECT_EQ(h.pp.merge(p, 0), nullptr);
        break;
      default: {
        VecPkt* out = h.pp.merge(p, 0);
        ASSERT_NE(out, nullptr);
        VecBuffer::free(out);
      }
    }
    // The replayed copy: if the original merged, the slot is free -> dropped. If the original was
    // rejected, the copy is intact and merges — but only onto its own payload.
    VecPkt* r = h.pp.merge(copy, 0);
    if (r) {
      EXPECT_EQ(r->bytes, udp_packet(r->id, 600));
      VecBuffer::free(r);
    }
  }
  const auto& k = h.pp.counters();
  EXPECT_EQ(k.bad_tag + k.premature_evictions, 300u);
  EXPECT_EQ(k.merges, 300u);  // 100 good + 200 intact replays of rejected originals
  h.pp.drain();
}

INSTANTIATE_TEST_SUITE_P(Formats, PayloadParkTest,
                         ::testing::Values(TagFormat::kNfpark, TagFormat::kPayloadPark),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(PayloadParkKeyed, ForgedTagsWithoutTheKeyAreRejected) {
  ParkConfig c;
  c.key = std::array<uint8_t, 16>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  PayloadPark<VecBuffer> pp(c);
  VecPkt* p = pp.split(VecBuffer::make(udp_packet(1, 600), 1), 0);
  VecPkt* q = pp.split(VecBuffer::make(udp_packet(2, 600), 2), 0);
  // The NF forges q's tag to point at p's slot and recomputes the unkeyed check (CRC-32C).
  uint32_t at = parse_packet(q->bytes.data(), uint32_t(q->bytes.size())).payload_off;
  TagCodec unkeyed(TagFormat::kNfpark);
  ParkTag t;
  t.parked = true;
  t.index = 0;
  t.generation = 1;
  t.orig_len = uint16_t(udp_packet(2, 600).size());
  unkeyed.encode(t, q->bytes.data() + at);
  EXPECT_EQ(pp.merge(q, 0), nullptr);
  EXPECT_EQ(pp.counters().bad_tag, 1u);
  VecPkt* out = pp.merge(p, 0);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->bytes, udp_packet(1, 600));
  VecBuffer::free(out);
  pp.drain();
  EXPECT_EQ(pp.counters().stranded_at_exit, 1u);
  EXPECT_EQ(VecBuffer::live, 0);
}

// Header packets of another run (another secret: another key) are never merged, in either
// format, even though their index and generation name live slots of this run; this run's own
// headers still find their payloads afterwards. Replays of merged headers are dropped too.
TEST(PayloadParkKeyed, HeadersOfAnotherRunOrReplayedNeverMerge) {
  for (TagFormat f : {TagFormat::kNfpark, TagFormat::kPayloadPark}) {
    ParkConfig c;
    c.format = f;
    c.key = Key128{1};
    PayloadPark<VecBuffer> run1(c);
    c.key = Key128{2};
    PayloadPark<VecBuffer> run2(c);
    std::vector<VecPkt*> h1, h2;
    for (uint64_t id = 0; id < 500; ++id) {
      h1.push_back(run1.split(VecBuffer::make(udp_packet(id, 600), id), 0));
      h2.push_back(run2.split(VecBuffer::make(udp_packet(1000 + id, 600), 1000 + id), 0));
    }
    for (VecPkt* h : h1) EXPECT_EQ(run2.merge(h, 0), nullptr) << to_string(f);
    EXPECT_EQ(run2.counters().merges, 0u);
    EXPECT_EQ(run2.counters().bad_tag + run2.counters().premature_evictions, 500u);
    const uint64_t late0 = run2.counters().premature_evictions;
    for (VecPkt* h : h2) {
      VecPkt* replay = VecBuffer::make(h->bytes, h->id);
      VecPkt* out = run2.merge(h, 0);
      ASSERT_NE(out, nullptr);
      EXPECT_EQ(out->bytes, udp_packet(out->id, 600));
      VecBuffer::free(out);
      EXPECT_EQ(run2.merge(replay, 0), nullptr) << "replayed after its merge";
    }
    EXPECT_EQ(run2.counters().premature_evictions - late0, 500u);
    run1.drain();
    run2.drain();
    EXPECT_EQ(run1.counters().stranded_at_exit, 500u);
  }
  EXPECT_EQ(VecBuffer::live, 0);
}

TEST(PayloadParkFilter, NoSplitFilterSendsWhole) {
  ParkConfig c;
  std::string err;
  Prefix pre;
  ASSERT_TRUE(parse_prefix("10.0.0.0/24", pre, err));
  c.no_split.dst_prefixes.push_back(pre);
  PayloadPark<VecBuffer> pp(c);
  VecPkt* p = pp.split(VecBuffer::make(udp_packet(1, 600), 1), 0);
  EXPECT_EQ(pp.counters().not_split_filtered, 1u);
  VecPkt* out = pp.merge(p, 0);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->bytes, udp_packet(1, 600));
  VecBuffer::free(out);
  EXPECT_EQ(VecBuffer::live, 0);
}

TEST(PayloadParkUntaggable, NonIpAndFragmentsPassUntouched) {
  PayloadPark<VecBuffer> pp(ParkConfig{});
  std::vector<uint8_t> arp(60, 0);
  arp[12] = 0x08;
  arp[13] = 0x06;
  VecPkt* p = pp.split(VecBuffer::make(arp), 0);
  EXPECT_EQ(p->bytes, arp);
  VecPkt* out = pp.merge(p, 0);
  EXPECT_EQ(out->bytes, arp);
  VecBuffer::free(out);
  EXPECT_EQ(pp.counters().not_split_untaggable, 1u);
  EXPECT_EQ(pp.counters().untagged_returned, 1u);
  EXPECT_EQ(VecBuffer::live, 0);
}

}  // namespace
}  // namespace nfpark::park
