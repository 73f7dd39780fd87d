// What a switch with several NF servers does when one goes down (park/server_choice.h decides
// when): PayloadPark reclaims the server's slice, QUEUE-MEM releases its port's batches; a header
// that still comes back is dropped, never merged; the other servers' packets are untouched; a
// tag that comes back on another server's link is refused and counted.
#include <gtest/gtest.h>

#include "core/packet_builder.h"
#include "park/payload_park.h"
#include "park/queue_mem.h"
#include "park/vec_buffer.h"

namespace nfpark::park {
namespace {

using testing::VecBuffer;
using testing::VecPkt;

// Packets 100..199 are one flow (one QUEUE-MEM slice); the others spread over flows.
std::vector<uint8_t> udp(uint64_t id, uint32_t payload = 500) {
  return PacketBuilder()
      .ipv4("10.0.0.1", "10.0.0.2")
      .udp(uint16_t(id >= 100 && id < 200 ? 5000 : 1000 + id % 50), 80)
      .payload_size(payload)
      .packet_id(id)
      .build();
}

class ServerDown : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_EQ(VecBuffer::live, 0) << "packets leaked"; }
};

TEST_F(ServerDown, PayloadParkReclaimsTheDownServersSliceOnly) {
  ParkConfig c;
  c.slices = 2;
  c.key = Key128{1, 2, 3};
  PayloadPark<VecBuffer> pp(c);
  std::vector<VecPkt*> to0, to1;
  for (uint64_t id = 0; id < 10; ++id) {
    to0.push_back(pp.split(VecBuffer::make(udp(id), id), 0));
    to1.push_back(pp.split(VecBuffer::make(udp(100 + id), 100 + id), 1));
  }
  ASSERT_EQ(pp.parked(), 20u);
  pp.reclaim(1);  // server 1 went down
  EXPECT_EQ(pp.counters().reclaimed, 10u);
  EXPECT_EQ(pp.parked(), 10u);
  for (VecPkt* h : to1) EXPECT_EQ(pp.merge(h, 1), nullptr);  // late: never merged
  EXPECT_EQ(pp.counters().premature_evictions, 10u);
  for (VecPkt* h : to0) {  // server 0's packets are untouched
    VecPkt* out = pp.merge(h, 0);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->bytes, udp(out->id));
    VecBuffer::free(out);
  }
  EXPECT_EQ(pp.parked(), 0u);
  // Slice 1 works again once its server is taken back.
  VecPkt* h = pp.split(VecBuffer::make(udp(7), 7), 1);
  VecPkt* out = pp.merge(h, 1);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->bytes, udp(7));
  VecBuffer::free(out);
}

TEST_F(ServerDown, PayloadParkRefusesATagFromAnotherServersLink) {
  ParkConfig c;
  c.slices = 2;
  c.key = Key128{1, 2, 3};
  PayloadPark<VecBuffer> pp(c);
  VecPkt* h = pp.split(VecBuffer::make(udp(1), 1), 0);
  EXPECT_EQ(pp.merge(h, 1), nullptr);
  EXPECT_EQ(pp.counters().wrong_slice, 1u);
  pp.drain();
}

QueueMemConfig qm_config() {
  QueueMemConfig c;
  c.ports = 2;
  c.port_per_server = true;
  c.queues = 8;
  c.slices = 2;
  c.batch = 4;
  c.header_array = 64;
  c.key = Key128{4, 5, 6};
  return c;
}

TEST_F(ServerDown, QueueMemReleasesTheDownServersBatches) {
  QueueMem<VecBuffer> qm(qm_config());
  Emitter<VecPkt*> nf(64), out(64);
  for (uint64_t id = 1; id <= 6; ++id) {  // 6 payloads for server 1, 4 (a batch) for server 0
    ASSERT_TRUE(qm.split(VecBuffer::make(udp(id), id), 1, nf, out));
    if (id <= 4) {
      ASSERT_TRUE(qm.split(VecBuffer::make(udp(100 + id), 100 + id), 0, nf, out));
    }
  }
  ASSERT_EQ(nf.size(), 10u);
  ASSERT_EQ(out.size(), 0u);
  // Server 1 answered its first two headers, then went down.
  std::vector<VecPkt*> to0;
  int back1 = 0;
  for (size_t i = 0; i < nf.size(); ++i) {
    VecPkt* h = nf[i];
    const uint64_t id = h->id;
    if (id >= 100) {
      to0.push_back(h);
    } else if (back1 < 2) {
      ++back1;
      qm.merge(h, 1, out);
    } else {
      VecBuffer::free(h);  // lost with the server
    }
  }
  nf.clear();
  EXPECT_EQ(out.size(), 0u);  // its batch is not complete: nothing leaves yet
  qm.release_port(1, out);
  EXPECT_EQ(qm.counters().recoveries_down, qm.counters().recoveries);
  EXPECT_GE(qm.counters().recoveries_down, 1u);
  EXPECT_EQ(qm.counters().released, 2u);  // the two whose header was back leave
  EXPECT_EQ(qm.counters().drop_header_lost, 4u);
  ASSERT_EQ(out.size(), 2u);
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i]->bytes, udp(out[i]->id));
    VecBuffer::free(out[i]);
  }
  out.clear();
  // Server 0's (full) batch still waits for its headers, and leaves when they are back.
  for (VecPkt* h : to0) qm.merge(h, 0, out);
  ASSERT_EQ(out.size(), 4u);
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i]->bytes, udp(out[i]->id));
    VecBuffer::free(out[i]);
  }
  out.clear();
  qm.drain(out);
  EXPECT_EQ(out.size(), 0u);
  EXPECT_EQ(qm.paused_queues(), 0u);
}

TEST_F(ServerDown, QueueMemRefusesATagFromAnotherServersLink) {
  QueueMem<VecBuffer> qm(qm_config());
  Emitter<VecPkt*> nf(8), out(8);
  ASSERT_TRUE(qm.split(VecBuffer::make(udp(1), 1), 0, nf, out));      // parked
  ASSERT_TRUE(qm.split(VecBuffer::make(udp(2, 10), 2), 0, nf, out));  // small: whole, tagged
  ASSERT_EQ(nf.size(), 2u);
  qm.merge(nf[0], 1, out);
  qm.merge(nf[1], 1, out);
  EXPECT_EQ(qm.counters().wrong_port, 2u);
  EXPECT_EQ(out.size(), 0u);
  EXPECT_EQ(qm.counters().packet_drops(), 2u);
  qm.drain(out);  // the parked payload: stranded
  EXPECT_EQ(out.size(), 0u);
  EXPECT_EQ(qm.counters().stranded_at_exit, 1u);
}

}  // namespace
}  // namespace nfpark::park
