// Packet records and SimBuffer (the parking logic's buffer operations in the simulator), the
// latency histogram and the collector's batched latencies.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

#include "core/packet_builder.h"
#include "sim/collector.h"
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

// A record: a 64 B header, then the carried parse and hash, then the headroom, then the bytes
// from a cache line on; every record finds its pool from its address (no pointer of its own).
TEST(PacketPool, RecordsAreSmallAndFindTheirPoolFromTheirAddress) {
  static_assert(sizeof(Packet) == 64);
  PacketPool a(192), b(192, 1ull << 24, PacketPool::kHeaderBytes);
  EXPECT_EQ(a.stride(), 320u) << "128 B in front of 192 bytes";
  EXPECT_EQ(b.stride(), 256u) << "a headers-only source's records: 128 bytes";
  std::vector<Packet*> v;
  for (int i = 0; i < 20000; ++i) v.push_back(i % 2 ? a.alloc() : b.alloc());  // several chunks
  for (size_t i = 0; i < v.size(); ++i) {
    Packet* p = v[i];
    EXPECT_EQ(p->pool(), i % 2 ? &a : &b);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p->data()) % 64, 0u) << "headers on a cache line";
    EXPECT_EQ(p->data() - reinterpret_cast<uint8_t*>(p), int(Packet::kDataAt));
    EXPECT_EQ(p->headroom(), PacketPool::kHeadroom);
    EXPECT_EQ(p->tailroom(), (i % 2 ? a : b).stride() - Packet::kDataAt);
    // the carried parse and hash lie between the header and the headroom
    EXPECT_GE(reinterpret_cast<uint8_t*>(&p->layout()), reinterpret_cast<uint8_t*>(p) + 64);
    EXPECT_LE(reinterpret_cast<uint8_t*>(&p->key_hash() + 1), p->buf());
    std::memset(p->data() - PacketPool::kHeadroom, 0xEE, PacketPool::kHeadroom + 128);
    EXPECT_EQ(p->layout().ip_version, 0) << "bytes written never reach the carried parse";
    EXPECT_EQ(p->key_hash(), 0u);
  }
  EXPECT_EQ(a.live() + b.live(), 20000u);
  for (Packet* p : v) PacketPool::release(p);
  EXPECT_EQ(a.live() + b.live(), 0u);
}

// Header packets come from 128 B records when they fit and from records as large as the run's
// otherwise; what a split may make is decided by the run's record size (the 96 B-header layout's
// 224 B for 192 B records), whichever pool the original or the header comes from.
TEST(SimBuffer, HeaderPacketsComeFromTheSmallestPoolTheyFitAndTheLimitIsTheRunsRecordSize) {
  PacketPool pool(192, 1ull << 24, PacketPool::kHeaderBytes);
  EXPECT_EQ(pool.limit(), 224u);
  const auto f = testing::udp_frame(1000);
  Packet* o = pool.make(f.data(), 1000, 1000);
  EXPECT_EQ(o->head, 128u) << "a headers-only pool holds 128 bytes";
  Packet* small = SimBuffer::make_header(o, 42, 24, 42, 0, nullptr);
  ASSERT_NE(small, nullptr);
  EXPECT_NE(small->pool(), &pool);
  EXPECT_EQ(small->pool()->stride(), 256u);
  Packet* big = SimBuffer::make_header(o, 42, 24, 42 + 10, 76, nullptr);  // 42 + 24 + 76 = 142
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(big->head, 142u);
  EXPECT_GE(big->pool()->room(), 224u);
  EXPECT_EQ(0, std::memcmp(big->data() + 66, f.data() + 52, 76));
  // a header packet's own split follows the same rule (the 224 B limit, not its 128 B record)
  Packet* again = SimBuffer::make_header(big, 42, 24, 42 + 24, 200, nullptr);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->head, 142u);
  PacketPool full(192);
  const auto g = testing::udp_frame(300);
  Packet* q = full.make(g.data(), 300, 300);
  EXPECT_EQ(q->head, 192u);
  // a NIC's view of the record reaches as far as a 192 B record's buffer did, tag pushed or not
  EXPECT_EQ(q->reach(), 224u);
  ASSERT_NE(SimBuffer::open_gap(q, 42, 24), nullptr);
  EXPECT_EQ(q->reach(), 248u);
  SimBuffer::close_gap(q, 42, 24);
  Packet* fits = SimBuffer::make_header(q, 42, 32, 42, 150, nullptr);  // 42 + 32 + 150 = 224
  ASSERT_NE(fits, nullptr);
  EXPECT_EQ(SimBuffer::make_header(q, 42, 33, 42, 150, nullptr), nullptr) << "225 > 224";
  EXPECT_EQ(pool.live(), 4u) << "the companions' records count as the pool's";
  EXPECT_EQ(full.live(), 2u);
  for (Packet* p : {o, small, big, again}) SimBuffer::free(p);
  for (Packet* p : {q, fits}) SimBuffer::free(p);
  EXPECT_EQ(pool.live(), 0u);
  EXPECT_EQ(full.live(), 0u);
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
  EXPECT_EQ(0, std::memcmp(h->data(), f.data(), hdr));
  // a tail the record holds is copied
  Packet* h2 = SimBuffer::make_header(o, hdr, 8, 100, 50, nullptr);
  EXPECT_EQ(h2->head, hdr + 8 + 50);
  EXPECT_EQ(0, std::memcmp(h2->data() + hdr + 8, f.data() + 100, 50));
  SimBuffer::free(h2);
  // the NF rewrites a header byte and pushes 4 bytes (a VLAN tag): the merge takes them
  SimBuffer::trim(h, hdr);
  uint8_t* gap = SimBuffer::open_gap(h, 12, 4);
  ASSERT_NE(gap, nullptr);
  std::memset(gap, 0xAB, 4);
  h->data()[30] ^= 0xFF;
  SimBuffer::Lent lent;
  ASSERT_EQ(SimBuffer::rejoin(o, hdr, lent, h, hdr + 4), park::Rejoin::kOk);
  EXPECT_EQ(o->len, 1004u);
  EXPECT_EQ(o->head, 196u);
  EXPECT_EQ(o->data()[12], 0xAB);
  EXPECT_EQ(o->data()[30], uint8_t(f[26] ^ 0xFF)) << "byte 26, 4 bytes later after the push";
  EXPECT_EQ(0, std::memcmp(o->data() + hdr + 4, f.data() + hdr, 192 - hdr)) << "payload untouched";
  // open_gap then close_gap is the identity
  uint8_t* g = SimBuffer::open_gap(o, hdr + 4, 24);
  ASSERT_NE(g, nullptr);
  SimBuffer::close_gap(o, hdr + 4, 24);
  EXPECT_EQ(o->len, 1004u);
  EXPECT_EQ(o->data()[12], 0xAB);
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

// The collector batches latencies (collector.h): the run's and every interval's histograms are
// those of one add a frame, sums included (the same order), with reads between batches, frames
// whose intervals alternate near a boundary and intervals taken as they complete.
TEST(Collector, BatchedLatenciesEqualOneAddAFrame) {
  std::mt19937_64 rng(7);
  const Picos interval = 50000;
  Collector c(2, false, 0, interval);
  PacketPool pool(64);
  LatencyHistogram all;
  std::map<uint64_t, LatencyHistogram> by_interval;
  auto same = [](const LatencyHistogram& a, const LatencyHistogram& b) {
    if (a.count() != b.count() || a.mean() != b.mean()) return false;  // exact: same sum
    for (double q = 0.05; q <= 1.0; q += 0.05)
      if (a.quantile(q) != b.quantile(q)) return false;
    return true;
  };
  Picos t = 0;
  uint64_t taken = 0;
  for (int i = 0; i < 20000; ++i) {
    t += Picos(rng() % 400);
    const Picos at = t + Picos(rng() % 3000);  // two links' frames interleave out of order
    Packet* p = pool.alloc();
    p->len = 100;
    p->seq = uint64_t(i);
    p->t_in = at - Picos(rng() % 2000000) - 1000;
    all.add(at - p->t_in);
    by_interval[uint64_t(at / interval)].add(at - p->t_in);
    c.arrive(p, at, uint16_t(i & 1));
    if (rng() % 500 == 0) {
      ASSERT_TRUE(same(c.latency(), all)) << "a read flushes the batch, frame " << i;
    }
    for (; Picos(taken + 1) * interval + 3000 <= t; ++taken) {  // complete: no frame goes there
      const OutBucket b = c.take_bucket(taken);
      ASSERT_TRUE(same(b.latency, by_interval[taken])) << "interval " << taken;
      EXPECT_EQ(b.latency.count(), b.packets);
    }
  }
  EXPECT_TRUE(same(c.latency(), all));
  EXPECT_GT(taken, 30u);
  EXPECT_EQ(pool.live(), 0u);
}

}  // namespace
}  // namespace nfpark::sim
