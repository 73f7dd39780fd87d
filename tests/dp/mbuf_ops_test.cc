// MbufOps on real DPDK mbufs (EAL without hugepages): header packets borrow or reference the
// payload instead of copying it, tag gaps move only headers, and every mbuf returns to its pool.
#include "dp/mbuf_ops.h"

#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <cstring>

#include "core/packet_builder.h"
#include "core/parse.h"
#include "dp/eal.h"
#include "dp/mbuf_env.h"
#include "park/payload_park.h"

namespace nfpark::dp {
namespace {

class MbufOpsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { fixture::setup_mbuf_env(); }
  void TearDown() override {
    EXPECT_TRUE(rte_mempool_full(MbufOps::pools.packets));
    EXPECT_TRUE(rte_mempool_full(MbufOps::pools.headers));
    EXPECT_TRUE(rte_mempool_full(MbufOps::pools.indirect));
  }
  static rte_mbuf* make(const std::vector<uint8_t>& bytes) {
    rte_mbuf* m = rte_pktmbuf_alloc(MbufOps::pools.packets);
    std::memcpy(rte_pktmbuf_append(m, uint16_t(bytes.size())), bytes.data(), bytes.size());
    MbufMeta::seq(m) = 7;
    return m;
  }
};
using fixture::bytes;
using fixture::push_vlan;
using fixture::with_vlan;

TEST_F(MbufOpsTest, HeaderPacketBorrowsTheOriginalAsItsTail) {
  auto pkt = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).payload_size(1000).packet_id(5).build();
  rte_mbuf* m = make(pkt);
  uint8_t* const frame = rte_pktmbuf_mtod(m, uint8_t*);
  const uint32_t hdr = parse_packet(pkt.data(), uint32_t(pkt.size())).payload_off;
  MbufOps::Lent lent;
  rte_mbuf* h =
      MbufOps::make_header(m, hdr, 24, hdr + 160, uint32_t(pkt.size()) - hdr - 160, &lent);
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->pkt_len, pkt.size() - 160 + 24);
  ASSERT_EQ(h->nb_segs, 2);
  // The tail segment is the original mbuf itself: the payload was not copied, and no indirect
  // mbuf was taken.
  EXPECT_EQ(h->next, m);
  EXPECT_EQ(rte_pktmbuf_mtod(h->next, uint8_t*), frame + hdr + 160);
  EXPECT_EQ(rte_mbuf_refcnt_read(m), 2);
  EXPECT_EQ(rte_mempool_avail_count(MbufOps::pools.indirect), 1024u);
  EXPECT_EQ(MbufMeta::seq(h), 7u);
  // Back from the NF: reclaim unchains the original and gives it its own view again.
  ASSERT_TRUE(MbufOps::reclaim(m, lent, h));
  EXPECT_EQ(h->nb_segs, 1);
  EXPECT_EQ(h->next, nullptr);
  EXPECT_EQ(h->pkt_len, hdr + 24);
  EXPECT_EQ(rte_mbuf_refcnt_read(m), 1);
  EXPECT_EQ(rte_pktmbuf_mtod(m, uint8_t*), frame);
  EXPECT_EQ(bytes(m), pkt);
  rte_pktmbuf_free(h);
  rte_pktmbuf_free(m);
}

TEST_F(MbufOpsTest, LentOriginalSurvivesItsHeaderPacketAndRejectsDuplicates) {
  auto pkt = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").tcp(1, 2).payload_size(900).build();
  rte_mbuf* m = make(pkt);
  MbufOps::Lent lent;
  rte_mbuf* h = MbufOps::make_header(m, 54, 24, 54 + 160, 900 - 160, &lent);
  ASSERT_EQ(h->next, m);
  // A deep copy of the header packet (what an NF that duplicates sends) holds no reference:
  // while the real header packet is in flight the original cannot be taken back for it.
  rte_mbuf* dup = rte_pktmbuf_copy(h, MbufOps::pools.packets, 0, UINT32_MAX);
  ASSERT_NE(dup, nullptr);
  EXPECT_FALSE(MbufOps::reclaim(m, lent, dup));
  rte_pktmbuf_free(dup);
  // The header packet left the process (memif copies then frees): the original is the slot's
  // alone again and comes back whole for a returned copy of its header packet.
  rte_mbuf* copy = rte_pktmbuf_copy(h, MbufOps::pools.packets, 0, UINT32_MAX);
  rte_pktmbuf_free(h);
  EXPECT_EQ(rte_mbuf_refcnt_read(m), 1);
  ASSERT_TRUE(MbufOps::reclaim(m, lent, copy));
  EXPECT_EQ(bytes(m), pkt);
  rte_pktmbuf_free(copy);
  rte_pktmbuf_free(m);
}

TEST_F(MbufOpsTest, EvictedWhileLentFreesWithTheHeaderPacket) {
  auto pkt = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).payload_size(600).build();
  rte_mbuf* m = make(pkt);
  MbufOps::Lent lent;
  rte_mbuf* h = MbufOps::make_header(m, 42, 24, 42 + 160, 600 - 160, &lent);
  rte_pktmbuf_free(m);  // the slot evicts it: the header packet keeps it alive
  EXPECT_EQ(rte_mbuf_refcnt_read(m), 1);
  EXPECT_FALSE(rte_mempool_full(MbufOps::pools.packets));
  rte_pktmbuf_free(h);  // TearDown checks both pools are full again
}

TEST_F(MbufOpsTest, ChainedOriginalIsReferencedThroughIndirectMbufs) {
  auto pkt = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).payload_size(1000).build();
  // The original in two segments: 600 bytes, then the rest.
  rte_mbuf* m = make(std::vector<uint8_t>(pkt.begin(), pkt.begin() + 600));
  rte_mbuf* m2 = make(std::vector<uint8_t>(pkt.begin() + 600, pkt.end()));
  ASSERT_EQ(rte_pktmbuf_chain(m, m2), 0);
  MbufOps::Lent lent;
  rte_mbuf* h = MbufOps::make_header(m, 42, 24, 42 + 160, uint32_t(pkt.size()) - 42 - 160, &lent);
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->nb_segs, 3);  // header + one indirect per original segment
  EXPECT_NE(h->next, m);
  EXPECT_EQ(rte_mempool_avail_count(MbufOps::pools.indirect), 1022u);
  std::vector<uint8_t> want(pkt.begin(), pkt.begin() + 42);
  want.resize(42 + 24);
  std::memcpy(rte_pktmbuf_mtod_offset(h, uint8_t*, 42), want.data() + 42, 24);
  want.insert(want.end(), pkt.begin() + 42 + 160, pkt.end());
  EXPECT_EQ(bytes(h), want);
  EXPECT_TRUE(MbufOps::reclaim(m, lent, h));  // nothing was lent
  EXPECT_EQ(bytes(m), pkt);
  rte_pktmbuf_free(h);
  rte_pktmbuf_free(m);
}

// Lent tail back in this process: the NF's headers (here 4 bytes longer, a pushed VLAN tag) go
// in front of the parked bytes, the original gets its whole view back and the header mbuf is
// freed; a deep copy arriving while the header packet is out is refused and changes nothing.
TEST_F(MbufOpsTest, LentTailRejoinsInPlaceWithTheNfsHeaders) {
  auto pkt =
      PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).payload_size(900).packet_id(3).build();
  rte_mbuf* m = make(pkt);
  uint8_t* const parked = rte_pktmbuf_mtod(m, uint8_t*) + 42;
  MbufOps::Lent lent;
  rte_mbuf* h = MbufOps::make_header(m, 42, 24, 42 + 160, 900 - 160, &lent);
  ASSERT_EQ(h->next, m);
  ASSERT_EQ(lent.kind, MbufOps::Lent::kTail);
  rte_mbuf* dup = rte_pktmbuf_copy(h, MbufOps::pools.packets, 0, UINT32_MAX);
  ASSERT_NE(dup, nullptr);
  EXPECT_EQ(MbufOps::rejoin(m, 42, lent, dup, 42), park::Rejoin::kLent) << "original still out";
  EXPECT_EQ(lent.kind, MbufOps::Lent::kTail);
  rte_pktmbuf_free(dup);
  // The NF pushes a VLAN tag on the header packet.
  ASSERT_TRUE(push_vlan(h));
  ASSERT_EQ(MbufOps::rejoin(m, 42, lent, h, 46), park::Rejoin::kOk);
  EXPECT_EQ(lent.kind, MbufOps::Lent::kNone);
  EXPECT_EQ(rte_mbuf_refcnt_read(m), 1);
  EXPECT_EQ(m->nb_segs, 1);
  EXPECT_EQ(rte_pktmbuf_mtod(m, uint8_t*) + 46, parked) << "parked bytes must not move";
  EXPECT_EQ(bytes(m), with_vlan(pkt));
  EXPECT_EQ(rte_mempool_avail_count(MbufOps::pools.headers), 1024u) << "header mbuf freed";
  rte_pktmbuf_free(m);
}

// Nothing of the payload travels: the original itself is the header packet, cut down to
// headers + tag, its payload untouched past the end.
TEST_F(MbufOpsTest, WholePayloadParkedLendsTheOriginalInPlace) {
  auto pkt = PacketBuilder()
                 .ipv4("10.0.0.1", "10.0.0.2")
                 .udp(1, 2)
                 .payload_size(1000)
                 .packet_id(9)
                 .build();
  rte_mbuf* m = make(pkt);
  uint8_t* const payload = rte_pktmbuf_mtod(m, uint8_t*) + 42;
  MbufOps::Lent lent;
  rte_mbuf* h = MbufOps::make_header(m, 42, 24, 42 + 1000, 0, &lent);
  ASSERT_EQ(h, m);
  EXPECT_EQ(h->pkt_len, 42u + 24);
  EXPECT_EQ(h->nb_segs, 1);
  EXPECT_EQ(rte_pktmbuf_mtod(h, uint8_t*) + 42 + 24, payload) << "payload must not move";
  EXPECT_EQ(std::memcmp(rte_pktmbuf_mtod(h, uint8_t*), pkt.data(), 42), 0);
  EXPECT_EQ(rte_mbuf_refcnt_read(m), 2);
  EXPECT_EQ(rte_mempool_avail_count(MbufOps::pools.headers), 1024u) << "no header mbuf taken";
  // The NF pushes a VLAN tag (4 more header bytes in front): the merge follows.
  ASSERT_TRUE(push_vlan(h));
  ASSERT_EQ(MbufOps::rejoin(m, 42, lent, h, 46), park::Rejoin::kOk);
  EXPECT_EQ(rte_mbuf_refcnt_read(m), 1);
  EXPECT_EQ(bytes(m), with_vlan(pkt));
  EXPECT_EQ(rte_pktmbuf_mtod(m, uint8_t*) + 46, payload);
  rte_pktmbuf_free(m);
}

// The header packet left the process (memif, af_packet: the port copied it and freed the mbuf)
// and came back as another mbuf; a copy arriving while the original is still out is refused.
TEST_F(MbufOpsTest, InPlaceHeaderPacketComingBackAsACopy) {
  auto pkt = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").tcp(1, 2).payload_size(700).build();
  rte_mbuf* m = make(pkt);
  MbufOps::Lent lent;
  rte_mbuf* h = MbufOps::make_header(m, 54, 24, 54 + 700, 0, &lent);
  ASSERT_EQ(h, m);
  rte_mbuf* copy = rte_pktmbuf_copy(h, MbufOps::pools.packets, 0, UINT32_MAX);
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(MbufOps::rejoin(m, 54, lent, copy, 54), park::Rejoin::kLent) << "original still out";
  rte_pktmbuf_free(h);  // the port is done with it
  uint8_t* c = rte_pktmbuf_mtod(copy, uint8_t*);
  c[0] ^= 0xFF;  // the NF rewrote a header byte
  ASSERT_EQ(MbufOps::rejoin(m, 54, lent, copy, 54), park::Rejoin::kOk);
  std::vector<uint8_t> want = pkt;
  want[0] ^= 0xFF;
  EXPECT_EQ(bytes(m), want);
  rte_pktmbuf_free(m);
}

// PayloadPark on mbufs, whole payload parked: the header packet is the original; explicit drops,
// evictions and copies all end with every mbuf back in its pool (TearDown).
TEST_F(MbufOpsTest, PayloadParkInPlaceLifecycles) {
  park::ParkConfig c;
  c.park_bytes = 0;
  c.slots = 2;
  park::PayloadPark<MbufOps> pp(c);
  auto pkt =
      PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(9, 9).frame_size(1200).packet_id(1).build();
  // Round trip.
  rte_mbuf* h = pp.split(make(pkt), 0);
  ASSERT_EQ(h->pkt_len, 42u + 24);
  rte_mbuf* out = pp.merge(h, 0);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(bytes(out), pkt);
  rte_pktmbuf_free(out);
  // Explicit drop from the NF.
  h = pp.split(make(pkt), 0);
  park::TagCodec::set_drop(rte_pktmbuf_mtod(h, uint8_t*) + 42, park::TagFormat::kNfpark);
  EXPECT_EQ(pp.merge(h, 0), nullptr);
  EXPECT_EQ(pp.counters().explicit_drops, 1u);
  // Evicted while its header packet is out (two slots, EXP 1: the third split evicts the
  // first), then the late header comes back and is dropped.
  rte_mbuf* a = pp.split(make(pkt), 0);
  rte_mbuf* b = pp.split(make(pkt), 0);
  rte_mbuf* d = pp.split(make(pkt), 0);
  EXPECT_EQ(pp.counters().evictions, 1u);
  EXPECT_EQ(pp.merge(a, 0), nullptr);
  EXPECT_EQ(pp.counters().premature_evictions, 1u);
  // A duplicate of b comes back before b: refused, b still merges.
  rte_mbuf* dup = rte_pktmbuf_copy(b, MbufOps::pools.packets, 0, UINT32_MAX);
  EXPECT_EQ(pp.merge(dup, 0), nullptr);
  EXPECT_EQ(pp.counters().duplicate_headers, 1u);
  for (rte_mbuf* x : {b, d}) {
    out = pp.merge(x, 0);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(bytes(out), pkt);
    rte_pktmbuf_free(out);
  }
  EXPECT_EQ(pp.parked(), 0u);
}

// The merge finds the tag without parsing only on a packet that carries its own parked payload.
// A whole packet whose payload ends with a copy of another packet's valid tag is not merged
// with that packet's payload.
TEST_F(MbufOpsTest, TagLookalikeAtTheEndOfAWholePacketIsNotMerged) {
  park::ParkConfig c;
  c.park_bytes = 0;
  park::PayloadPark<MbufOps> pp(c);
  auto big =
      PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(9, 9).payload_size(800).packet_id(1).build();
  rte_mbuf* h = pp.split(make(big), 0);
  std::vector<uint8_t> tag(rte_pktmbuf_mtod(h, uint8_t*) + 42, rte_pktmbuf_mtod(h, uint8_t*) + 66);
  auto small =
      PacketBuilder().ipv4("10.0.0.3", "10.0.0.4").udp(7, 7).payload_size(100).packet_id(2).build();
  std::copy(tag.begin(), tag.end(), small.end() - 24);  // its last 24 payload bytes
  rte_mbuf* w = pp.split(make(small), 0);               // below min_payload: goes whole
  ASSERT_EQ(pp.counters().not_split_small, 1u);
  rte_mbuf* out = pp.merge(w, 0);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(bytes(out), small);
  EXPECT_EQ(pp.counters().returned_unsplit, 1u);
  EXPECT_EQ(pp.counters().merges, 0u);
  rte_pktmbuf_free(out);
  out = pp.merge(h, 0);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(bytes(out), big);
  rte_pktmbuf_free(out);
}

TEST_F(MbufOpsTest, GapsMoveHeadersOnly) {
  auto pkt = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").tcp(1, 2).payload_size(100).build();
  rte_mbuf* m = make(pkt);
  uint8_t* payload_before = rte_pktmbuf_mtod(m, uint8_t*) + 54;
  uint8_t* gap = MbufOps::open_gap(m, 54, 24);
  ASSERT_NE(gap, nullptr);
  std::memset(gap, 0xAB, 24);
  EXPECT_EQ(gap + 24, payload_before) << "payload must stay where it was";
  EXPECT_EQ(m->pkt_len, pkt.size() + 24);
  MbufOps::close_gap(m, 54, 24);
  EXPECT_EQ(bytes(m), pkt);
  rte_pktmbuf_free(m);
}

TEST_F(MbufOpsTest, PayloadParkRoundTripOnMbufs) {
  park::ParkConfig c;
  park::PayloadPark<MbufOps> pp(c);
  for (uint32_t size : {100u, 300u, 1500u}) {
    auto pkt = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(9, 9).frame_size(size).packet_id(size).build();
    rte_mbuf* to_nf = pp.split(make(pkt), 0);
    ASSERT_NE(to_nf, nullptr);
    rte_mbuf* out = pp.merge(to_nf, 0);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(bytes(out), pkt) << size;
    rte_pktmbuf_free(out);
  }
  EXPECT_EQ(pp.counters().splits, 2u);
  EXPECT_EQ(pp.counters().merges, 2u);
}

TEST_F(MbufOpsTest, TrimDropsTailSegments) {
  auto pkt = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).payload_size(800).build();
  rte_mbuf* m = make(pkt);
  MbufOps::Lent lent;
  rte_mbuf* h = MbufOps::make_header(m, 42, 24, 42 + 160, 800 - 160, &lent);
  MbufOps::trim(h, 42 + 24);
  EXPECT_EQ(h->nb_segs, 1);
  EXPECT_EQ(h->pkt_len, 66u);
  EXPECT_EQ(rte_mbuf_refcnt_read(m), 1);
  rte_pktmbuf_free(h);
  rte_pktmbuf_free(m);
}

}  // namespace
}  // namespace nfpark::dp
