// Packet records and SimBuffer (the parking logic's buffer operations in the simulator), and the
// latency histogram.
#include <gtest/gtest.h>

#include <vector>

#include "core/packet_builder.h"
#include "sim/latency_histogram.h"
#include "sim/sim_buffer.h"
#include "sim_fixtures.h"

namespace nfpark::sim {
namespace {

TEST(PacketPool, GrowsReusesAndCountsLiveRecords) {
  PacketPool pool(192, 5000);
  std::vector<Packet*> v;
  for (int i = 0; i < 5000; ++i) v.push_back(pool.alloc());
  EXPECT_EQ(pool.alloc(), nullptr) << "bounded by max_records";
  EXPECT_EQ(pool.live(), 5000u);
  for (Packet* p : v) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << "records start on cache lines";
    EXPECT_GE(p->tailroom(), 192u);
    EXPECT_EQ(p->headroom(), PacketPool::kHeadroom);
    pool.free(p);
  }
  EXPECT_EQ(pool.live(), 0u);
  EXPECT_EQ(pool.capacity(), 5000u);
  const auto f = testing::udp_frame(1000);
  Packet* p = pool.make(f.data(), 1000, 1000);
  EXPECT_EQ(p->head, 192u) << "the first bytes; the rest is a length";
  EXPECT_EQ(p->len, 1000u);
  pool.free(p);
}

TEST(SimBuffer, HeaderPacketGapRejoinAndTrim) {
  PacketPool pool(192);
  const auto f = testing::udp_frame(1000, 1234, 42);
  Packet* o = pool.make(f.data(), 1000, 1000);
  o->seq = 42;
  o->flow = 9;
  o->t_in = 777;
  const uint32_t hdr = 42;
  // headers + 24-byte gap + a 300 B tail of which the record holds none (past byte 192)
  Packet* h = SimBuffer::make_header(o, hdr, 24, hdr + 500, 300, nullptr);
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->head, hdr + 24);
  EXPECT_EQ(h->len, hdr + 24 + 300);
  EXPECT_EQ(h->seq, 42u);
  EXPECT_EQ(h->flow, 9u);
  EXPECT_EQ(h->t_in, 777);
  EXPECT_EQ(0, std::memcmp(h->data, f.data(), hdr));
  // a tail the record holds is copied
  Packet* h2 = SimBuffer::make_header(o, hdr, 8, 100, 50, nullptr);
  EXPECT_EQ(h2->head, hdr + 8 + 50);
  EXPECT_EQ(0, std::memcmp(h2->data + hdr + 8, f.data() + 100, 50));
  SimBuffer::free(h2);
  // the NF rewrites a header byte and pushes 4 bytes (a VLAN tag): the merge takes them
  SimBuffer::trim(h, hdr);
  uint8_t* gap = SimBuffer::open_gap(h, 12, 4);
  ASSERT_NE(gap, nullptr);
  std::memset(gap, 0xAB, 4);
  h->data[30] ^= 0xFF;
  SimBuffer::Lent lent;
  ASSERT_EQ(SimBuffer::rejoin(o, hdr, lent, h, hdr + 4), park::Rejoin::kOk);
  EXPECT_EQ(o->len, 1004u);
  EXPECT_EQ(o->head, 196u);
  EXPECT_EQ(o->data[12], 0xAB);
  EXPECT_EQ(o->data[30], uint8_t(f[26] ^ 0xFF)) << "byte 26, 4 bytes later after the push";
  EXPECT_EQ(0, std::memcmp(o->data + hdr + 4, f.data() + hdr, 192 - hdr)) << "payload untouched";
  // open_gap then close_gap is the identity
  uint8_t* g = SimBuffer::open_gap(o, hdr + 4, 24);
  ASSERT_NE(g, nullptr);
  SimBuffer::close_gap(o, hdr + 4, 24);
  EXPECT_EQ(o->len, 1004u);
  EXPECT_EQ(o->data[12], 0xAB);
  SimBuffer::free(o);
  EXPECT_EQ(pool.live(), 0u);
}

TEST(SimBuffer, NoHeadroomIsRefused) {
  PacketPool pool(192);
  const auto f = testing::udp_frame(200);
  Packet* p = pool.make(f.data(), 200, 200);
  EXPECT_EQ(SimBuffer::open_gap(p, 42, PacketPool::kHeadroom + 1), nullptr);
  EXPECT_EQ(p->len, 200u) << "unchanged";
  SimBuffer::free(p);
}

TEST(LatencyHistogram, QuantilesWithinItsResolution) {
  LatencyHistogram h;
  for (Picos v = 1; v <= 100000; ++v) h.add(v * 1000);  // 1 ns .. 100 us, uniform
  EXPECT_NEAR(double(h.quantile(0.5)), 50e6, 50e6 * 0.008);
  EXPECT_NEAR(double(h.quantile(0.99)), 99e6, 99e6 * 0.008);
  EXPECT_DOUBLE_EQ(h.mean(), 50000.5 * 1000);
  LatencyHistogram small;
  for (Picos v : {3, 3, 5, 100}) small.add(v);
  EXPECT_EQ(small.quantile(0.5), 3) << "exact below 128 ps";
  EXPECT_EQ(small.quantile(1.0), 100);
  for (size_t b = 0; b < 4000; ++b)
    EXPECT_EQ(LatencyHistogram::bucket(uint64_t(LatencyHistogram::midpoint(b))), b);
}

}  // namespace
}  // namespace nfpark::sim
