// Parse once, carry, on real mbufs (dp/mbuf_ops.h: take_layout / carry_layout in a dynamic
// field under an ol_flags bit): a carried parse is exactly parse_packet of the mbuf's bytes
// whenever one is carried — after the switch's parse for the NF chain (nf_read_len), a split,
// a whole packet's tag, and the NF burst's survivors — every byte- or length-changing MbufOps
// operation forgets it, and an mbuf recycled through its pool never shows an old one.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <cstring>
#include <vector>

#include "core/packet_builder.h"
#include "core/parse.h"
#include "dp/mbuf_env.h"
#include "dp/mbuf_ops.h"
#include "park/nf_endpoint.h"
#include "park/nic_split.h"
#include "park/payload_park.h"

namespace nfpark::dp {
namespace {

class CarriedParse : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fixture::setup_mbuf_env();
    ASSERT_NE(MbufMeta::layout_flag, 0u) << "the flag and field register";
  }
  void TearDown() override { EXPECT_TRUE(fixture::pools_full()); }
  static rte_mbuf* make(const std::vector<uint8_t>& f) {
    rte_mbuf* m = rte_pktmbuf_alloc(MbufOps::pools.packets);
    std::memcpy(rte_pktmbuf_append(m, uint16_t(f.size())), f.data(), f.size());
    return m;
  }
};

std::vector<std::vector<uint8_t>> frames() {
  return {
      PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).payload_size(900).build(),
      PacketBuilder().vlan(5).ipv4("10.0.0.1", "10.0.0.2").tcp(3, 4).payload_size(300).build(),
      PacketBuilder()
          .ipv6("fd00::1", "fd00::2")
          .ipv6_ext_hop_by_hop()
          .udp(5, 6)
          .payload_size(700)
          .build(),
  };
}

// Takes m's carried parse (it must carry one) and compares it with parse_packet of its bytes.
void expect_carries_its_parse(rte_mbuf* m) {
  PacketLayout L;
  ASSERT_TRUE(MbufOps::take_layout(m, L));
  const PacketLayout P = parse_packet(rte_pktmbuf_mtod(m, uint8_t*), m->data_len);
  EXPECT_EQ(L.status, P.status);
  EXPECT_EQ(L.vlans, P.vlans);
  EXPECT_EQ(L.ip_version, P.ip_version);
  EXPECT_EQ(L.l4_proto, P.l4_proto);
  EXPECT_EQ(L.fragment, P.fragment);
  EXPECT_EQ(L.ethertype, P.ethertype);
  EXPECT_EQ(L.l3_off, P.l3_off);
  EXPECT_EQ(L.l4_off, P.l4_off);
  EXPECT_EQ(L.payload_off, P.payload_off);
  EXPECT_EQ(L.ip_end, P.ip_end);
  EXPECT_EQ(L.captured, P.captured);
  EXPECT_FALSE(MbufOps::take_layout(m, L)) << "taken once: the taker may rewrite bytes";
}
void carry_own_parse(rte_mbuf* m) {
  MbufOps::carry_layout(m, parse_packet(rte_pktmbuf_mtod(m, uint8_t*), m->data_len));
}
bool carries(rte_mbuf* m) {
  return (m->ol_flags & MbufMeta::layout_flag) != 0;
}

TEST_F(CarriedParse, TheSwitchsParseReachesTheNfViewExactly) {
  for (const auto& f : frames()) {
    rte_mbuf* m = make(f);
    EXPECT_FALSE(carries(m)) << "a fresh mbuf carries nothing";
    const uint32_t touched = park::nf_read_len<MbufOps>(ViewNeed::kHeaders, m);
    EXPECT_EQ(touched, park::l4_header_len(f.data(), uint32_t(f.size())));
    ASSERT_TRUE(carries(m));
    // The NF view takes it instead of parsing; its layout is parse_packet's.
    park::NfEndpoint<MbufOps> ep(std::nullopt, false);
    PacketView v;
    uint32_t tag_at = 1;
    ep.view(m, v, tag_at);
    EXPECT_FALSE(carries(m)) << "the view took it";
    const PacketLayout P = parse_packet(f.data(), uint32_t(f.size()));
    EXPECT_EQ(v.layout.payload_off, P.payload_off);
    EXPECT_EQ(v.layout.l4_off, P.l4_off);
    EXPECT_EQ(v.layout.ip_end, P.ip_end);
    EXPECT_EQ(v.layout.captured, P.captured);
    // A chain that reads no parse: nothing parsed, nothing carried.
    EXPECT_EQ(park::nf_read_len<MbufOps>(ViewNeed::kLengths, m), 0u);
    EXPECT_FALSE(carries(m));
    rte_pktmbuf_free(m);
  }
  // Not carried: a fragment or a packet that does not parse is parsed again by its taker.
  rte_mbuf* icmp = make(PacketBuilder().ipv4("1.1.1.1", "2.2.2.2").icmp_echo(1, 1).build());
  park::nf_read_len<MbufOps>(ViewNeed::kHeaders, icmp);
  EXPECT_FALSE(carries(icmp));
  rte_pktmbuf_free(icmp);
}

TEST_F(CarriedParse, EveryByteOrLengthChangeForgetsIt) {
  const auto f = frames()[0];
  const uint32_t hdr = parse_packet(f.data(), uint32_t(f.size())).payload_off;
  auto fresh = [&] {
    rte_mbuf* m = make(f);
    carry_own_parse(m);
    EXPECT_TRUE(carries(m));
    return m;
  };
  rte_mbuf* m = fresh();
  ASSERT_NE(MbufOps::open_gap(m, hdr, 24), nullptr);
  EXPECT_FALSE(carries(m)) << "open_gap";
  carry_own_parse(m);
  MbufOps::close_gap(m, hdr, 24);
  EXPECT_FALSE(carries(m)) << "close_gap";
  carry_own_parse(m);
  MbufOps::trim(m, hdr + 10);
  EXPECT_FALSE(carries(m)) << "trim";
  carry_own_parse(m);
  ASSERT_TRUE(MbufOps::replace_head(m, hdr, f.data(), hdr));
  EXPECT_FALSE(carries(m)) << "replace_head";
  rte_pktmbuf_free(m);
  // make_header, in place and lent as a tail: the original forgets; the header packet starts
  // with nothing (park carries what it knows); rejoin forgets what the NF's packet carried.
  for (uint32_t park : {0u, 160u}) {
    rte_mbuf* o = fresh();
    MbufOps::Lent lent;
    const uint32_t tail_off = park ? hdr + park : uint32_t(f.size());
    rte_mbuf* h = MbufOps::make_header(o, hdr, 24, tail_off, uint32_t(f.size()) - tail_off, &lent);
    ASSERT_NE(h, nullptr);
    EXPECT_FALSE(carries(o)) << park;
    EXPECT_FALSE(carries(h)) << park;
    carry_own_parse(h);
    carry_own_parse(o);
    const std::vector<uint8_t> hb = fixture::bytes(h);
    ASSERT_EQ(MbufOps::rejoin(o, hdr, lent, h, hdr), park::Rejoin::kOk) << park;
    EXPECT_FALSE(carries(o)) << "rejoin " << park;
    EXPECT_EQ(fixture::bytes(o), f);
    rte_pktmbuf_free(o);
  }
  // A referenced tail (chained original): the indirect segments never show a parse.
  rte_mbuf* a = fresh();
  rte_mbuf* b = make(std::vector<uint8_t>(200, 7));
  ASSERT_EQ(rte_pktmbuf_chain(a, b), 0);
  carry_own_parse(a);
  carry_own_parse(b);  // nonsense bytes do not parse: nothing carried
  MbufOps::Lent lent;
  rte_mbuf* h = MbufOps::make_header(a, hdr, 24, hdr + 160, a->pkt_len - hdr - 160, &lent);
  ASSERT_NE(h, nullptr);
  for (rte_mbuf* s = h; s; s = s->next) EXPECT_TRUE(s == a || !carries(s));
  rte_pktmbuf_free(h);
  rte_pktmbuf_free(a);
}

TEST_F(CarriedParse, PayloadParkCarriesExactlyItsHeaderPacketsParse) {
  for (uint32_t park : {0u, 160u}) {
    park::ParkConfig cfg;
    cfg.park_bytes = park;
    park::PayloadPark<MbufOps> pp(cfg);
    for (const auto& f : frames()) {
      rte_mbuf* m = make(f);
      park::nf_read_len<MbufOps>(ViewNeed::kHeaders, m);  // a parse carried in: split takes it
      rte_mbuf* h = pp.split(m, 0);
      ASSERT_NE(h, nullptr);
      expect_carries_its_parse(h);
      carry_own_parse(h);  // what the NF burst carries back: the merge takes it
      rte_mbuf* out = pp.merge(h, 0);
      ASSERT_NE(out, nullptr);
      EXPECT_FALSE(carries(out));
      EXPECT_EQ(fixture::bytes(out), f);
      rte_pktmbuf_free(out);
    }
    // Sent whole (payload below min_payload): the tag goes after the headers, parse carried.
    const auto small =
        PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).payload_size(8).build();
    rte_mbuf* w = pp.split(make(small), 0);
    ASSERT_NE(w, nullptr);
    expect_carries_its_parse(w);
    rte_mbuf* out = pp.merge(w, 0);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(fixture::bytes(out), small);
    rte_pktmbuf_free(out);
    pp.drain();
  }
}

// The stamp: carry a parse on every mbuf of the pool, free them all, take them all again
// (one by one and in bulk, as PMDs' rx do): none shows a parse.
TEST_F(CarriedParse, ARecycledMbufNeverCarriesAnOldParse) {
  rte_mempool* pool = MbufOps::pools.packets;
  const unsigned n = rte_mempool_avail_count(pool);
  std::vector<rte_mbuf*> all(n);
  const auto f = frames()[1];
  for (int round = 0; round < 2; ++round) {
    for (auto& m : all) {
      m = make(f);
      carry_own_parse(m);
      ASSERT_TRUE(carries(m));
    }
    for (auto* m : all) rte_pktmbuf_free(m);
    if (round == 0) {
      for (auto& m : all) m = rte_pktmbuf_alloc(pool);
    } else {
      ASSERT_EQ(rte_pktmbuf_alloc_bulk(pool, all.data(), n), 0);
    }
    PacketLayout L;
    for (auto* m : all) EXPECT_FALSE(MbufOps::take_layout(m, L)) << round;
    for (auto* m : all) rte_pktmbuf_free(m);
  }
}

}  // namespace
}  // namespace nfpark::dp
