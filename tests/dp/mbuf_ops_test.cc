// MbufOps on real DPDK mbufs (EAL without hugepages): header packets reference the payload
// instead of copying it, tag gaps move only headers, and every mbuf returns to its pool.
#include "dp/mbuf_ops.h"

#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <cstring>

#include "core/packet_builder.h"
#include "core/parse.h"
#include "dp/eal.h"
#include "park/payload_park.h"

namespace nfpark::dp {
namespace {

class MbufOpsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string err;
    EalOptions o;
    o.mem_mb = 256;
    ASSERT_TRUE(eal_init(o, err)) << err;
    ASSERT_TRUE(MbufMeta::register_meta());
    MbufOps::pools.packets = rte_pktmbuf_pool_create("t_pkts", 1024, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
    MbufOps::pools.headers = rte_pktmbuf_pool_create("t_hdrs", 1024, 0, 0, 384, 0);
    MbufOps::pools.indirect = rte_pktmbuf_pool_create("t_ind", 1024, 0, 0, 0, 0);
    ASSERT_NE(MbufOps::pools.packets, nullptr);
  }
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
  static std::vector<uint8_t> bytes(rte_mbuf* m) {
    std::vector<uint8_t> v(m->pkt_len);
    const void* p = rte_pktmbuf_read(m, 0, m->pkt_len, v.data());
    if (p != v.data()) std::memcpy(v.data(), p, m->pkt_len);
    return v;
  }
};

TEST_F(MbufOpsTest, HeaderPacketReferencesTheTailWithoutCopying) {
  auto pkt = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).payload_size(1000).packet_id(5).build();
  rte_mbuf* m = make(pkt);
  const uint32_t hdr = parse_packet(pkt.data(), uint32_t(pkt.size())).payload_off;
  rte_mbuf* h = MbufOps::make_header(m, hdr, 24, hdr + 160, uint32_t(pkt.size()) - hdr - 160);
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->pkt_len, pkt.size() - 160 + 24);
  ASSERT_EQ(h->nb_segs, 2);
  // The tail segment points into the original buffer: the payload was not copied.
  EXPECT_EQ(rte_pktmbuf_mtod(h->next, uint8_t*), rte_pktmbuf_mtod(m, uint8_t*) + hdr + 160);
  EXPECT_EQ(rte_mbuf_refcnt_read(m), 2);
  EXPECT_EQ(MbufMeta::seq(h), 7u);
  rte_pktmbuf_free(h);
  EXPECT_EQ(rte_mbuf_refcnt_read(m), 1);
  rte_pktmbuf_free(m);
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
  rte_mbuf* h = MbufOps::make_header(m, 42, 24, 42 + 160, 800 - 160);
  MbufOps::trim(h, 42 + 24);
  EXPECT_EQ(h->nb_segs, 1);
  EXPECT_EQ(h->pkt_len, 66u);
  EXPECT_EQ(rte_mbuf_refcnt_read(m), 1);
  rte_pktmbuf_free(h);
  rte_pktmbuf_free(m);
}

}  // namespace
}  // namespace nfpark::dp
