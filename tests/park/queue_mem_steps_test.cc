// QueueMem step-by-step cases, hand-computed: batch completion, header-drop recovery (the HEAD
// that finds its queue PAUSED does not leave with the stale batch), late/replayed/duplicate/
// forged headers, header-array reuse (id mismatch), drain of a partial batch, and the paths of
// packets that are not split.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/packet_builder.h"
#include "park/queue_mem.h"
#include "park/vec_buffer.h"

namespace nfpark::park {
namespace {

using testing::VecBuffer;
using testing::VecPkt;
using Out = std::vector<uint64_t>;  // handle ids

std::vector<uint8_t> udp_bytes(uint64_t id, uint32_t payload = 500, uint16_t dport = 4789) {
  auto b = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1111, dport).payload_size(payload);
  return b.packet_id(id).build();
}
VecPkt* udp(uint64_t id, uint32_t payload = 500, uint16_t dport = 4789) {
  return VecBuffer::make(udp_bytes(id, payload, dport), id);
}
VecPkt* copy(VecPkt* p) {
  return VecBuffer::make(p->bytes, p->id);
}

struct QueueMemSteps : ::testing::Test {
  void SetUp() override { VecBuffer::live = 0; }
  void TearDown() override {
    take(to_nf);
    take(to_out);
    EXPECT_EQ(VecBuffer::live, 0);
  }
  // Moves what an emitter holds out (ids in order) and frees it.
  static Out take(Emitter<VecPkt*>& e) {
    Out ids;
    for (size_t i = 0; i < e.size(); ++i) {
      ids.push_back(e[i]->id);
      VecBuffer::free(e[i]);
    }
    e.clear();
    return ids;
  }
  // Splits packets ids [a, b] and returns their header packets by id.
  std::map<uint64_t, VecPkt*> split(QueueMem<VecBuffer>& qm, uint64_t a, uint64_t b) {
    std::map<uint64_t, VecPkt*> h;
    for (uint64_t i = a; i <= b; ++i) {
      qm.split(udp(i), 0, to_nf, to_out);
      h[i] = to_nf[to_nf.size() - 1];
    }
    to_nf.clear();
    return h;
  }
  Emitter<VecPkt*> to_nf, to_out;
};

QueueMemConfig cfg(uint16_t batch, uint16_t queues, uint32_t header_array = 94000) {
  QueueMemConfig c;
  c.batch = batch;
  c.queues = queues;
  c.slices = 1;
  c.header_array = header_array;
  return c;
}

TEST_F(QueueMemSteps, BatchReleasedWhenLastHeaderReturnsThenRecoveryOnLostHeader) {
  QueueMem<VecBuffer> qm(cfg(4, 2));
  auto h = split(qm, 1, 4);  // queue 0
  EXPECT_EQ(qm.paused_queues(), 1u);
  EXPECT_EQ(qm.counters().held_pkts, 4u);
  EXPECT_EQ(qm.counters().held_bytes, 4u * 542u);  // whole frames wait, 66 B headers travel
  EXPECT_EQ(h[1]->bytes.size(), 42u + 24u);
  qm.merge(h[3], 0, to_out);
  qm.merge(h[1], 0, to_out);
  qm.merge(h[2], 0, to_out);
  EXPECT_TRUE(to_out.empty());
  qm.merge(h[4], 0, to_out);
  EXPECT_EQ(take(to_out), (Out{1, 2, 3, 4}));  // FIFO, whatever order the headers came in
  EXPECT_EQ(qm.paused_queues(), 0u);

  h = split(qm, 5, 8);  // queue 1; h8 will be lost
  VecPkt* late = h[8];
  for (uint64_t i = 5; i <= 7; ++i) qm.merge(h[i], 0, to_out);
  h = split(qm, 9, 12);  // queue 0 again: RESUMED, no recovery
  for (uint64_t i = 9; i <= 12; ++i) qm.merge(h[i], 0, to_out);
  EXPECT_EQ(take(to_out), (Out{9, 10, 11, 12}));
  EXPECT_EQ(qm.counters().recoveries, 0u);

  h = split(qm, 13, 13);  // HEAD for queue 1, still PAUSED: recovery
  EXPECT_EQ(qm.counters().recoveries, 1u);
  EXPECT_EQ(take(to_out), (Out{5, 6, 7}));  // p13 does not ride out with the stale batch
  EXPECT_EQ(qm.counters().drop_header_lost, 1u);
  EXPECT_EQ(qm.paused_queues(), 1u);  // paused again, by p13
  qm.merge(late, 0, to_out);          // h8 comes back too late
  EXPECT_EQ(qm.counters().stale_headers, 1u);
  qm.merge(h[13], 0, to_out);
  EXPECT_TRUE(to_out.empty());  // 1 of 4 headers back: the partial batch waits
  qm.drain(to_out);
  EXPECT_EQ(take(to_out), (Out{13}));
  EXPECT_EQ(qm.paused_queues(), 0u);
  const auto& c = qm.counters();
  EXPECT_EQ(c.released, 12u);
  EXPECT_EQ(c.batches_complete, 2u);
  EXPECT_EQ(c.batches_recovered, 1u);
  EXPECT_EQ(c.batches_drained, 1u);
  EXPECT_EQ(c.stranded_at_exit, 0u);
  EXPECT_EQ(c.rx, c.out() + c.drops());
  EXPECT_EQ(c.held_pkts, 0u);
}

TEST_F(QueueMemSteps, ReplayedDuplicateAndForgedHeadersNeverMerge) {
  QueueMem<VecBuffer> qm(cfg(4, 2));
  auto h = split(qm, 1, 4);
  VecPkt* replay = copy(h[1]);
  VecPkt* dup = copy(h[2]);
  VecPkt* forged = copy(h[4]);
  VecPkt* corrupt = copy(h[4]);
  // Forged: same idx, another id, with a valid (unkeyed) check recomputed by the forger.
  const uint32_t at =
      parse_packet(forged->bytes.data(), uint32_t(forged->bytes.size())).payload_off;
  ParkTag t;
  ASSERT_EQ(qm.codec().decode(forged->bytes.data() + at, 24, t), TagError::kNone);
  t.generation += 1000;
  qm.codec().encode(t, forged->bytes.data() + at);
  corrupt->bytes[at + 9] ^= 1;  // id byte changed, check not recomputed

  qm.merge(h[1], 0, to_out);
  qm.merge(h[2], 0, to_out);
  qm.merge(dup, 0, to_out);
  qm.merge(forged, 0, to_out);
  qm.merge(corrupt, 0, to_out);
  qm.merge(h[3], 0, to_out);
  EXPECT_TRUE(to_out.empty());  // 3 genuine headers back; the others did not count
  qm.merge(h[4], 0, to_out);
  EXPECT_EQ(take(to_out), (Out{1, 2, 3, 4}));
  qm.merge(replay, 0, to_out);  // after its batch left
  const auto& c = qm.counters();
  EXPECT_EQ(c.duplicate_headers, 1u);
  EXPECT_EQ(c.stale_headers, 2u);  // forged + replay
  EXPECT_EQ(c.bad_tag, 1u);
  EXPECT_EQ(c.released, 4u);
  EXPECT_EQ(c.drops(), 0u);
}

TEST_F(QueueMemSteps, KeyedTagRejectsForgery) {
  QueueMemConfig c = cfg(2, 1);
  c.key = std::array<uint8_t, 16>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  QueueMem<VecBuffer> qm(c);
  auto h = split(qm, 1, 2);
  const uint32_t at = parse_packet(h[2]->bytes.data(), uint32_t(h[2]->bytes.size())).payload_off;
  VecPkt* forged = copy(h[2]);
  ParkTag t;
  ASSERT_EQ(qm.codec().decode(forged->bytes.data() + at, 24, t), TagError::kNone);
  TagCodec(TagFormat::kNfpark).encode(t, forged->bytes.data() + at);  // forger lacks the key
  qm.merge(forged, 0, to_out);
  EXPECT_EQ(qm.counters().bad_tag, 1u);
  qm.merge(h[1], 0, to_out);
  qm.merge(h[2], 0, to_out);
  EXPECT_EQ(take(to_out), (Out{1, 2}));
}

// Header array of 6 entries for 8 waiting payloads: p7 and p8 reuse the idx of p1 and p2,
// whose payloads then fail the id check at release (P4 PacketReconstruct) — never mis-merged.
TEST_F(QueueMemSteps, HeaderArrayReuseDropsByIdMismatch) {
  QueueMem<VecBuffer> qm(cfg(4, 2, 6));
  auto h = split(qm, 1, 8);
  EXPECT_EQ(qm.counters().slot_reuses, 2u);
  for (uint64_t i = 5; i <= 8; ++i) qm.merge(h[i], 0, to_out);
  EXPECT_EQ(take(to_out), (Out{5, 6, 7, 8}));
  for (uint64_t i = 1; i <= 4; ++i) qm.merge(h[i], 0, to_out);
  EXPECT_EQ(qm.counters().stale_headers, 2u);  // h1, h2: their idx was given to p7, p8
  EXPECT_TRUE(to_out.empty());                 // queue 0 counted 2 of 4
  qm.drain(to_out);
  EXPECT_EQ(take(to_out), (Out{3, 4}));
  EXPECT_EQ(qm.counters().drop_id_mismatch, 2u);
  EXPECT_EQ(qm.counters().rx, qm.counters().out() + qm.counters().drops());
}

TEST_F(QueueMemSteps, DrainFreesStrandedPayloads) {
  QueueMem<VecBuffer> qm(cfg(5, 3));
  auto h = split(qm, 1, 3);
  qm.merge(h[2], 0, to_out);
  VecBuffer::free(h[1]);
  VecBuffer::free(h[3]);
  qm.drain(to_out);
  EXPECT_EQ(take(to_out), (Out{2}));
  EXPECT_EQ(qm.counters().stranded_at_exit, 2u);
  EXPECT_EQ(qm.paused_queues(), 0u);
  h = split(qm, 4, 4);  // after a drain, traffic starts a fresh batch
  EXPECT_EQ(qm.paused_queues(), 1u);
  qm.merge(h[4], 0, to_out);
  qm.drain(to_out);
  EXPECT_EQ(take(to_out), (Out{4}));
}

TEST_F(QueueMemSteps, DestructorFreesWhatDrainDidNot) {
  {
    QueueMem<VecBuffer> qm(cfg(4, 2));
    auto h = split(qm, 1, 3);
    qm.merge(h[1], 0, to_out);  // stored header
    VecBuffer::free(h[2]);
    VecBuffer::free(h[3]);
    EXPECT_EQ(VecBuffer::live, 4);  // 3 payloads + 1 stored header
  }
  EXPECT_EQ(VecBuffer::live, 0);
}

TEST_F(QueueMemSteps, UnsplitPathsGoWholeThroughTheNf) {
  QueueMemConfig c = cfg(4, 2);
  c.no_split.dst_ports = {53};
  std::string err;
  c.no_split.dst_prefixes.emplace_back();
  ASSERT_TRUE(parse_prefix("192.0.2.0/24", c.no_split.dst_prefixes.back(), err)) << err;
  QueueMem<VecBuffer> qm(c);
  qm.split(udp(1, 500, 53), 0, to_nf, to_out);  // filtered port
  qm.split(udp(2, 63), 0, to_nf, to_out);       // below min_payload
  qm.split(udp(3, 500), 7, to_nf, to_out);      // no such port
  qm.split(
      VecBuffer::make(
          PacketBuilder().ipv4("10.0.0.1", "192.0.2.9").udp(1, 2).payload_size(500).build(), 4),
      0, to_nf, to_out);  // filtered prefix
  qm.split(
      VecBuffer::make(
          PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").icmp_echo(1, 1).payload_size(500).build(),
          5),
      0, to_nf, to_out);  // untaggable
  ASSERT_EQ(to_nf.size(), 5u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(to_nf[i]->bytes[0x2a + 1] & 1, 0) << "ENB=0 tag";
  for (size_t i = 0; i < to_nf.size(); ++i) qm.merge(to_nf[i], 0, to_out);
  to_nf.clear();
  const auto& k = qm.counters();
  EXPECT_EQ(k.not_split_filtered, 2u);
  EXPECT_EQ(k.not_split_small, 1u);
  EXPECT_EQ(k.not_split_no_queue, 1u);
  EXPECT_EQ(k.not_split_untaggable, 1u);
  EXPECT_EQ(k.returned_whole, 4u);
  EXPECT_EQ(k.untagged_returned, 1u);
  EXPECT_EQ(k.splits, 0u);
  ASSERT_EQ(to_out.size(), 5u);
  EXPECT_EQ(to_out[0]->bytes, udp_bytes(1, 500, 53));  // tag removed, bytes as sent
  EXPECT_EQ(take(to_out), (Out{1, 2, 3, 4, 5}));
}

}  // namespace
}  // namespace nfpark::park
