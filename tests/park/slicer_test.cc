// Slicer (NFSlicer) on VecBuffer: splice equivalence through a NAT-like rewrite, THR boundary,
// TTL in wrap-arounds, busy entries, generation mismatch, partial slicing, per-core rings.
// Forged tokens, wire DSCP 63 and fault injection are in slicer_fault_test.cc.
#include "park/slicer.h"

#include <gtest/gtest.h>

#include <functional>
#include <optional>

#include "core/bytes.h"
#include "core/checksum.h"
#include "core/packet_builder.h"
#include "nf/rewrite.h"
#include "park/slicer_fixtures.h"
#include "park/vec_buffer.h"

namespace nfpark::park {
namespace {

using testing::VecBuffer;
using testing::VecPkt;
using H = VecPkt*;
using S = Slicer<VecBuffer>;
using Bytes = std::vector<uint8_t>;

using testing::udp4;

// A NAT-like NF on header bytes only: source address (IPv4) and source port rewritten, ECN set
// to CE; every checksum patched incrementally (RFC 1624), never recomputed.
void nat_like(uint8_t* d, uint32_t len) {
  PacketView v;
  v.data = d;
  v.len = len;
  v.layout = parse_packet(d, len);
  ASSERT_TRUE(v.layout.ok());
  uint8_t* ip = d + v.layout.l3_off;
  if (v.layout.ip_version == 4) {
    nf::set_ipv4_src(v, 0xC6120001);
    const uint16_t old_w = load_be16(ip);
    ip[1] |= 0x03;
    store_be16(ip + 10, csum_update16(load_be16(ip + 10), old_w, load_be16(ip)));
  } else {
    ip[1] |= 0x30;  // IPv6 traffic class ECN bits
  }
  if (v.layout.has_ports()) nf::set_l4_u16(v, 0, 40000);
}

class SlicerTest : public ::testing::Test {
 protected:
  void SetUp() override { live0_ = VecBuffer::live; }
  void TearDown() override { EXPECT_EQ(VecBuffer::live, live0_) << "leaked packets"; }

  static H take(Emitter<H>& e) {
    EXPECT_EQ(e.size(), 1u);
    if (e.size() != 1) return nullptr;
    H h = e[0];
    e.clear();
    return h;
  }
  static Bytes consume(H h) {
    Bytes b = h->bytes;
    VecBuffer::free(h);
    return b;
  }
  H split(S& s, Bytes b, uint8_t core = 0) {
    s.split(VecBuffer::make(std::move(b)), core, host_, wire_);
    EXPECT_TRUE(wire_.empty());
    return take(host_);
  }
  // Returns what left on the wire, or nullopt when the splice dropped the packet.
  std::optional<Bytes> merge(S& s, H h) {
    s.merge(h, wire_);
    if (wire_.empty()) return std::nullopt;
    return consume(take(wire_));
  }
  std::optional<Bytes> roundtrip(S& s, Bytes b, const std::function<void(H)>& nf,
                                 uint8_t core = 0) {
    H h = split(s, std::move(b), core);
    nf(h);
    return merge(s, h);
  }

  int64_t live0_ = 0;
  Emitter<H> host_, wire_;
};

struct Variant {
  const char* name;
  Bytes pkt;
};

std::vector<Variant> variants() {
  return {
      {"v4 udp 1518", udp4(1518, 1)},
      {"v4 tcp 1000 dscp 46", PacketBuilder()
                                  .ipv4("10.1.0.1", "10.2.0.2")
                                  .tcp(5555, 443)
                                  .dscp(46)
                                  .frame_size(1000)
                                  .packet_id(2)
                                  .build()},
      {"v6 udp 800 dscp 10", PacketBuilder()
                                 .ipv6("2001:db8::1", "2001:db8::2")
                                 .udp(53, 5353)
                                 .dscp(10)
                                 .frame_size(800)
                                 .packet_id(3)
                                 .build()},
      {"v4 vlan udp 600", PacketBuilder()
                              .vlan(7)
                              .ipv4("10.0.0.9", "10.0.0.8")
                              .udp(9, 10)
                              .frame_size(600)
                              .packet_id(4)
                              .build()},
      {"v4 options tcp 1518", PacketBuilder()
                                  .ipv4("10.0.0.1", "10.0.0.3")
                                  .ipv4_options(3)
                                  .tcp(1, 2, 0x10, 7, 9, 2)
                                  .frame_size(1518)
                                  .packet_id(5)
                                  .build()},
      {"v4 udp wire dscp 63", udp4(1400, 6, 63)},
      {"v6 tcp wire dscp 63", PacketBuilder()
                                  .ipv6("2001:db8::5", "2001:db8::6")
                                  .tcp(80, 8080)
                                  .dscp(63)
                                  .frame_size(1300)
                                  .packet_id(7)
                                  .build()},
  };
}

TEST_F(SlicerTest, SpliceIsByteIdenticalToUnslicedThroughNatRewrite) {
  S s(SlicerConfig{});
  for (const Variant& v : variants()) {
    SCOPED_TRACE(v.name);
    Bytes expect = v.pkt;
    nat_like(expect.data(), uint32_t(expect.size()));

    H h = split(s, v.pkt);
    ASSERT_NE(h, nullptr);
    const PacketLayout L = parse_packet(h->bytes.data(), uint32_t(h->bytes.size()));
    ASSERT_TRUE(L.ok());
    EXPECT_EQ(h->bytes.size(), L.payload_off + kTokenBytes);  // whole payload sliced
    EXPECT_EQ(read_dscp(h->bytes.data(), L), 63);
    if (L.ip_version == 4) {  // the mark's checksum update is right
      const uint8_t* ip = h->bytes.data() + L.l3_off;
      EXPECT_EQ(ipv4_header_checksum(ip, (ip[0] & 0xF) * 4u), load_be16(ip + 10));
    }
    const SliceInfo info =
        inspect_slice(h->bytes.data(), uint32_t(h->bytes.size()), uint32_t(h->bytes.size()), L);
    EXPECT_EQ(info.mark, SliceMark::kSliced);
    EXPECT_EQ(info.token_at, L.payload_off);
    EXPECT_EQ(info.wire_len, v.pkt.size());

    nat_like(h->bytes.data(), uint32_t(h->bytes.size()));
    auto out = merge(s, h);
    ASSERT_TRUE(out);
    EXPECT_EQ(*out, expect);
    EXPECT_TRUE(verify_checksums(out->data(), parse_packet(out->data(), uint32_t(out->size()))));
  }
  EXPECT_EQ(s.counters().sliced, variants().size());
  EXPECT_EQ(s.counters().spliced, variants().size());
  EXPECT_EQ(s.live(), 0u);
  s.drain();
  EXPECT_EQ(s.counters().stranded_at_exit, 0u);
}

TEST_F(SlicerTest, NfMayChangeHeaderLength) {
  S s(SlicerConfig{});
  auto push_vlan = [](Bytes& b) {
    const uint8_t tag[4] = {0x81, 0x00, 0x00, 0x2A};
    b.insert(b.begin() + 12, tag, tag + 4);
  };
  Bytes expect = udp4(1200, 9);
  push_vlan(expect);
  auto out = roundtrip(s, udp4(1200, 9), [&](H h) { push_vlan(h->bytes); });
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, expect);
  s.drain();
}

TEST_F(SlicerTest, ThresholdIsStrictlyGreater) {
  SlicerConfig c;
  c.thr = 500;
  S s(c);
  H at = split(s, udp4(500, 1));  // == THR: not slice-worthy (paper: "size > THR")
  EXPECT_EQ(at->bytes, udp4(500, 1));
  EXPECT_EQ(s.counters().unsliced_small, 1u);
  EXPECT_EQ(s.ring(0).next_index(), 0u);  // did not probe the ring
  H above = split(s, udp4(501, 2));
  EXPECT_EQ(s.counters().sliced, 1u);
  EXPECT_EQ(s.ring(0).next_index(), 1u);
  EXPECT_EQ(*merge(s, at), udp4(500, 1));
  EXPECT_EQ(*merge(s, above), udp4(501, 2));
  EXPECT_EQ(s.counters().passed, 1u);
  EXPECT_EQ(s.counters().spliced, 1u);
  s.drain();
}

TEST_F(SlicerTest, BusyEntryMeansWholeNeverDrop) {
  SlicerConfig c;
  c.entries = 4;
  c.ttl = 2;
  S s(c);
  std::vector<H> held;
  for (uint64_t i = 0; i < 4; ++i) held.push_back(split(s, udp4(1000, i)));
  EXPECT_EQ(s.live(), 4u);
  H whole = split(s, udp4(1000, 99));  // index 0 again: live, ttl 2 -> 1
  EXPECT_EQ(whole->bytes, udp4(1000, 99));
  EXPECT_EQ(s.counters().unsliced_busy, 1u);
  EXPECT_EQ(s.counters().expired, 0u);
  EXPECT_EQ(*merge(s, whole), udp4(1000, 99));
  for (uint64_t i = 0; i < 4; ++i) EXPECT_EQ(*merge(s, held[i]), udp4(1000, i));
  EXPECT_EQ(s.counters().spliced, 4u);
  s.drain();
}

// TTL = 3: an entry left alone is visited by the index once per wrap-around; visits 1 and 2
// decrement it (those packets go whole), visit 3 discards it, visit 4 reuses it.
TEST_F(SlicerTest, TtlCountsWrapArounds) {
  SlicerConfig c;
  c.entries = 4;
  c.ttl = 3;
  for (int wraps_before_return = 0; wraps_before_return <= 4; ++wraps_before_return) {
    SCOPED_TRACE(wraps_before_return);
    S s(c);
    H a = split(s, udp4(900, 1000));  // entry 0
    uint64_t id = 0;
    H visit = nullptr;     // the last packet that visited entry 0
    auto one_wrap = [&] {  // entries 1..3 sliced and returned at once, then a visit to entry 0
      for (int k = 1; k < 4; ++k) ASSERT_TRUE(roundtrip(s, udp4(900, ++id), [](H) {}));
      if (visit) {
        ASSERT_TRUE(merge(s, visit));
      }
      visit = split(s, udp4(900, ++id));
    };
    for (int w = 0; w < wraps_before_return; ++w) one_wrap();
    auto out = merge(s, a);
    if (visit) {
      EXPECT_EQ(*merge(s, visit), udp4(900, id));  // whole, or its own slice
    }
    EXPECT_EQ(s.counters().sliced, 1u + 3u * wraps_before_return + (wraps_before_return == 4));
    if (wraps_before_return < 3) {
      ASSERT_TRUE(out);
      EXPECT_EQ(*out, udp4(900, 1000));
      EXPECT_EQ(s.counters().unsliced_busy, uint64_t(wraps_before_return));
    } else if (wraps_before_return == 3) {
      EXPECT_FALSE(out);
      EXPECT_EQ(s.counters().expired, 1u);
      EXPECT_EQ(s.counters().drop_expired, 1u);
    } else {
      EXPECT_FALSE(out);  // entry 0 holds another packet now
      EXPECT_EQ(s.counters().drop_generation, 1u);
    }
    s.drain();
  }
}

TEST_F(SlicerTest, GenerationMismatchDrops) {
  S s(SlicerConfig{});
  H h = split(s, udp4(1000, 1));
  const uint32_t at = parse_packet(h->bytes.data(), uint32_t(h->bytes.size())).payload_off;
  const uint64_t tok = load_be64(h->bytes.data() + at);
  const TokenLayout& tl = s.token_layout();
  store_be64(h->bytes.data() + at, tl.make(0, tl.generation(tok) + 1, tl.index(tok)));
  EXPECT_FALSE(merge(s, h));
  EXPECT_EQ(s.counters().drop_generation, 1u);
  EXPECT_EQ(s.live(), 1u);  // the real entry is untouched
  s.drain();
  EXPECT_EQ(s.counters().stranded_at_exit, 1u);
}

TEST_F(SlicerTest, PartialSlicingKeepsTailInHeaderPacket) {
  for (uint32_t cut : {160u, 320u, 5000u}) {
    SCOPED_TRACE(cut);
    SlicerConfig c;
    c.slice_bytes = cut;
    S s(c);
    const Bytes orig = udp4(1518, 77);
    H h = split(s, orig);
    const uint32_t hdr = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).header_bytes();
    const uint32_t sliced = std::min<uint32_t>(cut, 1518 - hdr);
    ASSERT_EQ(h->bytes.size(), hdr + kTokenBytes + (1518 - hdr - sliced));
    EXPECT_TRUE(std::equal(h->bytes.begin() + hdr + kTokenBytes, h->bytes.end(),
                           orig.begin() + hdr + sliced));
    Bytes expect = orig;
    nat_like(expect.data(), uint32_t(expect.size()));
    nat_like(h->bytes.data(), uint32_t(h->bytes.size()));
    EXPECT_EQ(*merge(s, h), expect);
    s.drain();
  }
}

TEST_F(SlicerTest, TruncatedHeaderPacketIsDropped) {
  SlicerConfig c;
  c.slice_bytes = 160;
  S s(c);
  H h = split(s, udp4(1518, 1));
  h->bytes.resize(h->bytes.size() - 1);  // tail cut short: cannot be the packet we sent
  EXPECT_FALSE(merge(s, h));
  EXPECT_EQ(s.counters().drop_bad_length, 1u);
  s.drain();
  EXPECT_EQ(s.counters().stranded_at_exit, 1u);
}

TEST_F(SlicerTest, PerCoreRingsAndCoreIdInToken) {
  SlicerConfig c;
  c.cores = 3;
  c.entries = 8;
  S s(c);
  std::vector<std::pair<H, uint64_t>> back;
  for (uint64_t i = 0; i < 12; ++i) {
    const uint8_t core = uint8_t(i % 3);
    H h = split(s, udp4(700, i), core);
    const uint32_t at = parse_packet(h->bytes.data(), uint32_t(h->bytes.size())).payload_off;
    EXPECT_EQ(TokenLayout::core(load_be64(h->bytes.data() + at)), core);
    back.push_back({h, i});
  }
  EXPECT_EQ(s.ring(0).live(), 4u);
  EXPECT_EQ(s.ring(2).live(), 4u);
  for (size_t k = back.size(); k-- > 0;)
    EXPECT_EQ(*merge(s, back[k].first), udp4(700, back[k].second));
  EXPECT_EQ(s.counters().spliced, 12u);
  H whole = split(s, udp4(700, 50), 3);  // core the engine should never pass: whole, counted
  EXPECT_EQ(s.counters().unsliced_bad_core, 1u);
  EXPECT_EQ(*merge(s, whole), udp4(700, 50));
  s.drain();
}

TEST_F(SlicerTest, DrainFreesStrandedPayloads) {
  S s(SlicerConfig{});
  for (uint64_t i = 0; i < 5; ++i) VecBuffer::free(split(s, udp4(1500, i)));  // NF dropped
  EXPECT_EQ(s.live(), 5u);
  s.drain();
  EXPECT_EQ(s.live(), 0u);
  EXPECT_EQ(s.counters().stranded_at_exit, 5u);
}

}  // namespace
}  // namespace nfpark::park
