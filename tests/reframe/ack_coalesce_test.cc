// TCP ACK coalescing on crafted TCP packets built with PacketBuilder and classified with
// classify(): superseded pure ACKs are released as coalesced; the highest ACK and duplicate
// ACKs stay; kept packets are untouched, so their checksums still verify.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "core/checksum.h"
#include "core/packet_builder.h"
#include "reframe/classify.h"
#include "reframe/flow_reorder.h"
#include "reframe_test_util.h"

namespace nfpark::reframe {
namespace {

constexpr uint8_t kAck = 0x10, kPshAck = 0x18, kFinAck = 0x11;

std::vector<uint8_t> tcp(uint8_t flags, uint32_t ack, uint32_t payload = 0, uint16_t sport = 80) {
  return PacketBuilder()
      .ipv4("10.0.0.2", "10.0.0.1")
      .tcp(sport, 5000, flags, 1000, ack)
      .payload_size(payload)
      .build();
}

struct Crafted {
  std::vector<std::vector<uint8_t>> pkts;
  std::vector<uint32_t> ids;
  std::vector<PacketMeta> metas;
  void add(std::vector<uint8_t> p) {
    PacketLayout L = parse_packet(p.data(), uint32_t(p.size()));
    metas.push_back(classify(p.data(), L, BypassRules{}));
    ids.push_back(uint32_t(pkts.size()));
    pkts.push_back(std::move(p));
  }
};

ReorderConfig coalescing() {
  ReorderConfig c = test::small_config();
  c.coalesce_acks = true;
  return c;
}

TEST(AckCoalesce, KeepsHighestAndDuplicatesDropsSuperseded) {
  Crafted t;
  t.add(tcp(kAck, 100));         // 0: superseded by 200 -> coalesced
  t.add(tcp(kAck, 200));         // 1: dupack run 200 x3 -> kept
  t.add(tcp(kAck, 200));         // 2
  t.add(tcp(kAck, 200));         // 3
  t.add(tcp(kAck, 300));         // 4: superseded by 400 -> coalesced
  t.add(tcp(kPshAck, 300, 50));  // 5: data, never coalesced
  t.add(tcp(kFinAck, 300));      // 6: FIN is not a pure ACK
  t.add(tcp(kAck, 400));         // 7: highest -> kept
  for (const auto& m : t.metas) ASSERT_EQ(m.flow, t.metas[0].flow);
  EXPECT_TRUE(t.metas[0].pure_ack());
  EXPECT_EQ(t.metas[0].ack, 100u);
  EXPECT_FALSE(t.metas[5].pure_ack());
  EXPECT_FALSE(t.metas[6].pure_ack());

  FlowReorder<uint32_t> r(coalescing());
  test::Out out;
  r.push(std::span<const uint32_t>(t.ids), std::span<const PacketMeta>(t.metas), 0, out);
  r.flush_all(1, out);
  EXPECT_EQ(out.out, std::vector<uint32_t>({1, 2, 3, 5, 6, 7}));
  EXPECT_EQ(out.dropped, std::vector<uint32_t>({0, 4}));
  EXPECT_EQ(r.stats().coalesced, 2u);
  EXPECT_EQ(r.stats().rx, r.stats().tx + r.stats().coalesced);
  for (uint32_t id : out.out) {
    auto& p = t.pkts[id];
    EXPECT_TRUE(verify_checksums(p.data(), parse_packet(p.data(), uint32_t(p.size()))));
  }
}

TEST(AckCoalesce, DuplicateOfPreviousBatchIsKeptAndWrapAroundCompares) {
  FlowReorder<uint32_t> r(coalescing());
  test::Out out;
  Crafted t;
  t.add(tcp(kAck, 0xFFFFFFF0u));  // 0: superseded across the wrap by 0x10
  t.add(tcp(kAck, 0x10));         // 1: last of batch 1
  r.push(std::span<const uint32_t>(t.ids), std::span<const PacketMeta>(t.metas), 0, out);
  r.flush_all(1, out);
  EXPECT_EQ(out.dropped, std::vector<uint32_t>({0}));
  Crafted u;
  u.add(tcp(kAck, 0x10));  // dupack of batch 1's last ACK: kept
  u.add(tcp(kAck, 0x20));
  for (auto& id : u.ids) id += 10;
  r.push(std::span<const uint32_t>(u.ids), std::span<const PacketMeta>(u.metas), 2, out);
  r.flush_all(3, out);
  EXPECT_EQ(out.out, std::vector<uint32_t>({1, 10, 11}));
}

TEST(AckCoalesce, OffByDefault) {
  Crafted t;
  t.add(tcp(kAck, 100));
  t.add(tcp(kAck, 200));
  FlowReorder<uint32_t> r(test::small_config());
  test::Out out;
  r.push(std::span<const uint32_t>(t.ids), std::span<const PacketMeta>(t.metas), 0, out);
  r.flush_all(1, out);
  EXPECT_EQ(out.out.size(), 2u);
  EXPECT_TRUE(out.dropped.empty());
}

TEST(AckCoalesce, RandomTraceInEqualsOutPlusCoalesced) {
  ReorderConfig c = coalescing();
  c.max_burst = 8;
  c.max_held_packets = 64;
  FlowReorder<uint32_t> r(c);
  test::Out out;
  std::mt19937_64 rng(7);
  std::map<uint64_t, uint32_t> next_ack;
  std::vector<uint64_t> flow_of;
  Nanos now = 0;
  for (int b = 0; b < 2000; ++b) {
    now += Nanos(rng() % 2000);
    std::vector<uint32_t> ids;
    std::vector<PacketMeta> m;
    for (int i = 0; i < 16; ++i) {
      const uint64_t f = 1 + rng() % 30;
      uint32_t& a = next_ack[f];
      if (rng() % 3) a += uint32_t(rng() % 3) * 1460;  // 0 -> duplicate ACK
      ids.push_back(uint32_t(flow_of.size()));
      flow_of.push_back(f);
      m.push_back(test::meta(f, rng() % 5 ? PacketMeta::kPureAck : 0, a));
    }
    r.poll(now, out);
    r.push(std::span<const uint32_t>(ids), std::span<const PacketMeta>(m), now, out);
  }
  r.flush_all(now, out);
  std::vector<int> seen(flow_of.size(), 0);
  for (uint32_t id : out.out) ++seen[id];
  for (uint32_t id : out.dropped) ++seen[id];
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), long(flow_of.size()));
  EXPECT_GT(out.dropped.size(), 1000u);
  EXPECT_EQ(r.stats().rx, r.stats().tx + r.stats().coalesced);
  std::map<uint64_t, uint32_t> last;
  for (uint32_t id : out.out) {
    auto it = last.find(flow_of[id]);
    if (it != last.end()) {
      EXPECT_LT(it->second, id);
    }
    last[flow_of[id]] = id;
  }
}

}  // namespace
}  // namespace nfpark::reframe
