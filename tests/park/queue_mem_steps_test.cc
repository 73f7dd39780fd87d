// QueueMem step-by-step cases, hand-computed: batch completion, a slice releasing its batches in
// creation order, header-loss recovery (lost_after with evidence, or the NF idle), late/replayed/
// duplicate/forged headers, whole packets queued behind their flow, refusals (untaggable packet
// of a waiting flow, store full), sealing, drain of a partial batch, and the unsplit paths.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/bytes.h"
#include "core/checksum.h"
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
// The first fragment of an IPv4 UDP datagram of udp()'s flow: untaggable, same 5-tuple.
VecPkt* first_fragment(uint64_t id) {
  auto b = udp_bytes(id, 500);
  uint8_t* ip = b.data() + 14;
  ip[6] |= 0x20;  // MF
  ip[10] = ip[11] = 0;
  store_be16(ip + 10, ipv4_header_checksum(ip, 20));
  return VecBuffer::make(std::move(b), id);
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
  // Splits packets ids [a, b] (all taken) and returns what went to the NF, by id.
  std::map<uint64_t, VecPkt*> split(QueueMem<VecBuffer>& qm, uint64_t a, uint64_t b,
                                    uint32_t payload = 500, uint16_t dport = 4789) {
    std::map<uint64_t, VecPkt*> h;
    for (uint64_t i = a; i <= b; ++i) {
      EXPECT_TRUE(qm.split(udp(i, payload, dport), 0, to_nf, to_out)) << i;
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
  c.lost_after = 100;  // ns
  c.seal_after = 0;
  return c;
}

TEST_F(QueueMemSteps, BatchLeavesWhenItsLastHeaderIsBackInFifoOrder) {
  QueueMem<VecBuffer> qm(cfg(4, 2));
  auto h = split(qm, 1, 4);
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
  EXPECT_EQ(qm.counters().batches_complete, 1u);
}

// Batch 2 of a slice completes before batch 1: it waits, then both leave in creation order.
TEST_F(QueueMemSteps, SliceReleasesItsBatchesInCreationOrder) {
  QueueMem<VecBuffer> qm(cfg(2, 4));
  auto h = split(qm, 1, 4);  // batch {1,2}, batch {3,4}
  qm.merge(h[3], 0, to_out);
  qm.merge(h[4], 0, to_out);
  EXPECT_TRUE(to_out.empty());
  EXPECT_EQ(qm.counters().batches_waited, 1u);
  qm.merge(h[2], 0, to_out);
  qm.merge(h[1], 0, to_out);
  EXPECT_EQ(take(to_out), (Out{1, 2, 3, 4}));
  EXPECT_EQ(qm.counters().batches_complete, 2u);
}

// A header is late, not lost: nothing sent after it is back, so however long it takes (an NF
// that is slow but keeps order, or stalled), the batch waits for it and loses nothing.
TEST_F(QueueMemSteps, SlowNfIsNeverTakenForALostHeader) {
  QueueMem<VecBuffer> qm(cfg(4, 4));  // lost_after 100 ns
  auto h = split(qm, 1, 4);
  for (uint64_t i = 1; i <= 3; ++i) qm.merge(h[i], 0, to_out);
  qm.poll(1000 * kSecond, to_out);  // h4 out for 1000 s
  EXPECT_TRUE(to_out.empty());
  EXPECT_EQ(qm.counters().recoveries, 0u);
  qm.merge(h[4], 0, to_out);
  EXPECT_EQ(take(to_out), (Out{1, 2, 3, 4}));
  EXPECT_EQ(qm.counters().drops(), 0u);
}

// A header is lost: its batch is recovered once a header sent after it has been back for
// lost_after (on the NF's clock: the NF moved past it long enough ago), at a poll where all the
// NF sent back is merged. Only the payload without a header is dropped.
TEST_F(QueueMemSteps, RecoveryDropsOnlyThePayloadWhoseHeaderIsLost) {
  QueueMem<VecBuffer> qm(cfg(4, 4));  // lost_after 100 ns
  qm.poll(0, to_out);
  auto h = split(qm, 1, 4);  // h4 will be lost
  VecPkt* late = h[4];
  for (uint64_t i = 1; i <= 3; ++i) qm.merge(h[i], 0, to_out);
  qm.poll(50, to_out);
  h = split(qm, 5, 8);
  qm.merge(h[5], 0, to_out);  // sent after h4, back before it: evidence, seen at t = 60
  qm.poll(60, to_out);
  qm.poll(159, to_out);
  EXPECT_TRUE(to_out.empty());
  qm.poll(500, to_out, /*settled=*/false);  // something the NF sent is not merged yet: wait
  EXPECT_TRUE(to_out.empty());
  qm.poll(500, to_out);
  EXPECT_EQ(take(to_out), (Out{1, 2, 3}));
  EXPECT_EQ(qm.counters().recoveries, 1u);
  EXPECT_EQ(qm.counters().drop_header_lost, 1u);
  qm.merge(late, 0, to_out);  // back too late: counted, freed, changes nothing
  EXPECT_EQ(qm.counters().stale_headers, 1u);
  for (uint64_t i = 6; i <= 8; ++i) qm.merge(h[i], 0, to_out);
  EXPECT_EQ(take(to_out), (Out{5, 6, 7, 8}));
  const auto& c = qm.counters();
  EXPECT_EQ(c.released, 7u);
  EXPECT_EQ(c.rx, c.out() + c.drops());
  EXPECT_EQ(c.held_pkts, 0u);
  EXPECT_EQ(qm.paused_queues(), 0u);
}

// Packets split before the clock's first reading are stamped with it, not with time 0 (which
// would make their batch look lost_after old at once).
TEST_F(QueueMemSteps, PacketsBeforeTheFirstPollTakeItsTime) {
  QueueMemConfig c = cfg(2, 4);
  c.lost_after = kMilli;
  QueueMem<VecBuffer> qm(c);
  auto a = split(qm, 1, 2);  // no poll yet
  qm.poll(10 * kSecond, to_out);
  auto b = split(qm, 3, 4);
  qm.merge(b[3], 0, to_out);  // evidence: sent after batch {1, 2}
  qm.merge(b[4], 0, to_out);
  qm.poll(10 * kSecond + kMilli - 1, to_out);
  EXPECT_EQ(qm.counters().recoveries, 0u);
  qm.merge(a[1], 0, to_out);
  qm.merge(a[2], 0, to_out);
  EXPECT_EQ(take(to_out), (Out{1, 2, 3, 4}));
}

// The engine says nothing is at the NF: whatever is missing is lost, at once.
TEST_F(QueueMemSteps, NfIdleRecoversEveryBatchMissingAHeader) {
  QueueMem<VecBuffer> qm(cfg(2, 4));
  auto h = split(qm, 1, 5);  // {1,2} {3,4} {5 (open)}
  qm.merge(h[1], 0, to_out);
  qm.merge(h[3], 0, to_out);
  qm.merge(h[4], 0, to_out);
  qm.merge(h[5], 0, to_out);
  VecBuffer::free(h[2]);  // lost
  EXPECT_TRUE(to_out.empty());
  qm.nf_idle(to_out);
  EXPECT_EQ(take(to_out), (Out{1, 3, 4, 5}));
  EXPECT_EQ(qm.counters().recoveries_idle, 1u);
  EXPECT_EQ(qm.counters().drop_header_lost, 1u);
  EXPECT_EQ(qm.paused_queues(), 0u);
}

// A packet too small to split, of a flow with payloads waiting, is queued behind them: it goes
// whole with a parked tag, and on its way back waits at its place in the batch.
TEST_F(QueueMemSteps, SmallPacketOfAWaitingFlowQueuesBehindIt) {
  QueueMem<VecBuffer> qm(cfg(3, 2));
  auto h = split(qm, 1, 1);
  auto s = split(qm, 2, 2, 10);  // small: would overtake packet 1 if it went on its own
  ASSERT_EQ(s[2]->bytes.size(), udp_bytes(2, 10).size() + 24);  // whole + tag
  EXPECT_EQ(qm.counters().joined_whole, 1u);
  EXPECT_EQ(qm.counters().not_split_small, 1u);
  auto h3 = split(qm, 3, 3);  // the batch {1, 2, 3} is full
  qm.merge(s[2], 0, to_out);  // back first
  qm.merge(h3[3], 0, to_out);
  EXPECT_TRUE(to_out.empty());  // both wait for packet 1's header
  EXPECT_EQ(qm.counters().held_pkts, 3u);
  qm.merge(h[1], 0, to_out);
  ASSERT_EQ(to_out.size(), 3u);
  EXPECT_EQ(to_out[1]->bytes, udp_bytes(2, 10));  // tag removed
  EXPECT_EQ(take(to_out), (Out{1, 2, 3}));
  // Nothing waits any more: the next small packet goes straight through.
  auto d = split(qm, 4, 4, 10);
  EXPECT_EQ(qm.counters().joined_whole, 1u);
  qm.merge(d[4], 0, to_out);
  EXPECT_EQ(take(to_out), (Out{4}));
}

// A first fragment can carry no tag: while its flow has payloads waiting it is refused (the
// open batch is closed so the flow can drain), then taken once they left.
TEST_F(QueueMemSteps, UntaggablePacketOfAWaitingFlowIsRefusedUntilItDrains) {
  QueueMem<VecBuffer> qm(cfg(4, 2));
  auto h = split(qm, 1, 2);
  VecPkt* f = first_fragment(3);
  EXPECT_FALSE(qm.split(f, 0, to_nf, to_out));
  EXPECT_EQ(qm.counters().refused, 1u);
  EXPECT_EQ(qm.counters().batches_sealed, 1u);
  EXPECT_EQ(qm.counters().rx, 2u);  // not taken
  qm.merge(h[1], 0, to_out);
  EXPECT_FALSE(qm.split(f, 0, to_nf, to_out));
  qm.merge(h[2], 0, to_out);  // the sealed batch {1,2} is complete
  EXPECT_EQ(take(to_out), (Out{1, 2}));
  ASSERT_TRUE(qm.split(f, 0, to_nf, to_out));
  EXPECT_EQ(qm.counters().not_split_untaggable, 1u);
  qm.merge(to_nf[0], 0, to_out);
  to_nf.clear();
  EXPECT_EQ(take(to_out), (Out{3}));
}

// Store full (the header array here): a flow with nothing waiting goes whole at once; a flow
// with packets waiting is refused — going whole would overtake them.
TEST_F(QueueMemSteps, StoreFullSendsWholeOrRefusesAWaitingFlow) {
  QueueMem<VecBuffer> qm(cfg(4, 4, /*header_array=*/3));
  auto h = split(qm, 1, 3);
  EXPECT_EQ(qm.counters().splits, 3u);
  EXPECT_TRUE(qm.split(udp(4, 500, 53), 0, to_nf, to_out));  // another flow: whole
  EXPECT_EQ(qm.counters().not_split_store_full, 1u);
  qm.merge(to_nf[0], 0, to_out);
  to_nf.clear();
  EXPECT_EQ(take(to_out), (Out{4}));
  VecPkt* p5 = udp(5);
  EXPECT_FALSE(qm.split(p5, 0, to_nf, to_out));  // its flow waits: refused
  for (uint64_t i = 1; i <= 3; ++i) qm.merge(h[i], 0, to_out);
  EXPECT_EQ(take(to_out), (Out{1, 2, 3}));  // sealed by the refusal, complete
  ASSERT_TRUE(qm.split(p5, 0, to_nf, to_out));
  EXPECT_EQ(qm.counters().splits, 4u);
  qm.drain(to_out);
  EXPECT_EQ(qm.counters().stranded_at_exit, 1u);
  take(to_nf);
}

TEST_F(QueueMemSteps, PartialBatchSealedAfterSealAfter) {
  QueueMemConfig c = cfg(8, 2);
  c.seal_after = 500;
  QueueMem<VecBuffer> qm(c);
  qm.poll(1000, to_out);
  auto h = split(qm, 1, 2);  // opened at t = 1000
  qm.merge(h[1], 0, to_out);
  qm.merge(h[2], 0, to_out);
  qm.poll(1499, to_out);
  EXPECT_TRUE(to_out.empty());  // 2 of 8: the batch waits for more
  qm.poll(1500, to_out);
  EXPECT_EQ(take(to_out), (Out{1, 2}));
  EXPECT_EQ(qm.counters().batches_sealed, 1u);
  EXPECT_EQ(qm.counters().batches_complete, 1u);
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
  ASSERT_TRUE(qm.split(udp(1, 500, 53), 0, to_nf, to_out));  // filtered port
  ASSERT_TRUE(qm.split(udp(2, 63), 0, to_nf, to_out));       // below min_payload
  ASSERT_TRUE(qm.split(udp(3, 500), 7, to_nf, to_out));      // no such port
  ASSERT_TRUE(qm.split(
      VecBuffer::make(
          PacketBuilder().ipv4("10.0.0.1", "192.0.2.9").udp(1, 2).payload_size(500).build(), 4),
      0, to_nf, to_out));  // filtered prefix
  ASSERT_TRUE(qm.split(
      VecBuffer::make(
          PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").icmp_echo(1, 1).payload_size(500).build(),
          5),
      0, to_nf, to_out));  // untaggable
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
  EXPECT_EQ(k.joined_whole, 0u);
  ASSERT_EQ(to_out.size(), 5u);
  EXPECT_EQ(to_out[0]->bytes, udp_bytes(1, 500, 53));  // tag removed, bytes as sent
  EXPECT_EQ(take(to_out), (Out{1, 2, 3, 4, 5}));
}

}  // namespace
}  // namespace nfpark::park
