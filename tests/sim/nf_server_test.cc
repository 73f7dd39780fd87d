// The NF server model: service-time bound (cores), PCIe bound (bytes + descriptor overhead),
// header-only vs whole service times, RX ring and NIC buffer drops, the header-drop fault, and
// the real chain's drops turned into explicit-drop notices by the NF endpoint.
#include "sim/nf_server.h"

#include <gtest/gtest.h>

#include "nf/registry.h"
#include "park/payload_park.h"
#include "sim_fixtures.h"

namespace nfpark::sim {
namespace {

using testing::make_packet;
using testing::RecordingPeer;

struct Bench {
  Engine e;
  PacketPool pool{256};
  RecordingPeer back;
  std::unique_ptr<NfServer> s;
  void build(const NfServerConfig& c, const std::string& chain = "forward",
             std::optional<park::TagFormat> format = std::nullopt) {
    std::string err;
    auto ch = nf::build_chain(chain, nullptr, err);
    ASSERT_TRUE(ch) << err;
    s = std::make_unique<NfServer>(e, c, std::move(ch), format);
    s->connect(&back, 7);
  }
  // n packets of `len` bytes, all arriving at t = 0 (a burst the NIC absorbs).
  void offer(uint64_t n, uint32_t len, Picos spacing = 0) {
    for (uint64_t i = 0; i < n; ++i) {
      Packet* p = make_packet(pool, len, i);
      p->flow = i;  // spreads over the cores
      s->arrive(p, Picos(i) * spacing, 0);
    }
  }
};

NfServerConfig fast() {
  NfServerConfig c;
  c.link_gbps = 1000;
  c.pcie_gbps = 1000;
  c.pcie_overhead_bytes = 0;
  c.nic_buffer_bytes = 1ull << 30;
  c.rx_ring = 1 << 20;
  c.service.header_ns = c.service.whole_ns = 100;
  return c;
}

TEST(NfServerModel, CoresBoundThePacketRate) {
  for (uint16_t cores : {1, 4}) {
    Bench b;
    NfServerConfig c = fast();
    c.cores = cores;
    b.build(c);
    b.offer(4000, 64);
    b.e.run();
    ASSERT_EQ(b.back.got.size(), 4000u);
    const Picos last = b.back.got.back().at;
    // 4000 x 100 ns over `cores` cores, plus the wires and DMA of the last burst
    EXPECT_NEAR(double(last), 4000.0 * 100 * kNs / cores, 0.01 * 4000.0 * 100 * kNs / cores)
        << cores << " cores";
    EXPECT_EQ(b.s->counters().tx, 4000u);
    EXPECT_EQ(b.pool.live(), 0u);
  }
}

TEST(NfServerModel, PcieBoundsTheByteRateWithDescriptorOverhead) {
  Bench b;
  NfServerConfig c = fast();
  c.service.header_ns = c.service.whole_ns = 0;
  c.pcie_gbps = 10;
  c.pcie_overhead_bytes = 100;
  b.build(c);
  b.offer(1000, 400);
  b.e.run();
  ASSERT_EQ(b.back.got.size(), 1000u);
  // each packet crosses PCIe twice (RX and TX, separate directions): 500 B at 10 Gbps = 400 ns
  const double per = 500.0 * 8 / 10 * kNs;
  EXPECT_NEAR(double(b.back.got.back().at), 1000 * per, 2 * per);
  EXPECT_NEAR(double(b.back.got[500].at - b.back.got[499].at), per, 1.0);
}

TEST(NfServerModel, HeaderOnlyPacketsGetTheirOwnServiceTime) {
  // The same 1500 B packets whole (baseline) or split by PayloadPark (header-only): the NF
  // endpoint tells them apart; header service 10 ns, whole 200 ns.
  Picos whole_end = 0, header_end = 0;
  for (bool split : {false, true}) {
    Bench b;
    park::PayloadPark<SimBuffer> pp{park::ParkConfig{}};  // parks into b's pool
    NfServerConfig c = fast();
    c.service.header_ns = 10;
    c.service.whole_ns = 200;
    b.build(c, "forward", split ? std::optional(park::TagFormat::kNfpark) : std::nullopt);
    for (uint64_t i = 0; i < 100; ++i) {
      Packet* p = make_packet(b.pool, 1500, i);
      if (split) p = pp.split(p, 0);
      b.s->arrive(p, 0, 0);
    }
    b.e.run();
    ASSERT_EQ(b.back.got.size(), 100u);
    (split ? header_end : whole_end) = b.back.got.back().at;
    EXPECT_EQ(split ? b.s->endpoint().header_only : b.s->endpoint().whole, 100u);
    pp.drain();
  }
  EXPECT_GT(whole_end, 100 * 200 * kNs);
  EXPECT_LT(header_end, 100 * 20 * kNs);
}

TEST(NfServerModel, FullRingDropsAndCounts) {
  Bench b;
  NfServerConfig c = fast();
  c.rx_ring = 64;
  c.burst = 32;
  b.build(c);
  b.offer(1000, 64);  // all at once: the ring holds 64, the core drains 32 at a time
  b.e.run();
  const NfServerCounters& k = b.s->counters();
  EXPECT_GT(k.drop_rx_ring, 800u);
  EXPECT_EQ(k.rx, 1000u);
  EXPECT_EQ(k.tx + k.drops(), 1000u) << "in = out + drops";
  EXPECT_EQ(b.back.got.size(), k.tx);
  EXPECT_EQ(b.pool.live(), 0u);
}

TEST(NfServerModel, NicBufferOverflowsWhenPcieIsSlow) {
  Bench b;
  NfServerConfig c = fast();
  c.pcie_gbps = 1;
  c.nic_buffer_bytes = 10000;
  b.build(c);
  b.offer(100, 1000);
  b.e.run();
  EXPECT_EQ(b.s->counters().drop_nic_buffer, 90u) << "10 frames of 1000 B fit in 10000 B";
  EXPECT_EQ(b.back.got.size(), 10u);
}

TEST(NfServerModel, HeaderDropFaultLosesThatFraction) {
  Bench b;
  NfServerConfig c = fast();
  c.drop = 0.3;
  b.build(c);
  b.offer(20000, 64);
  b.e.run();
  const double lost = double(b.s->counters().drop_fault) / 20000;
  EXPECT_NEAR(lost, 0.3, 0.02);
  EXPECT_EQ(b.back.got.size() + b.s->counters().drop_fault, 20000u);
}

struct DropAll final : nf::Nf {
  std::string_view name() const override { return "drop_all"; }
  void process(std::span<PacketView>, std::span<nf::Verdict> v, Nanos) override {
    for (auto& x : v) x = nf::Verdict::kDrop;
  }
};

TEST(NfServerModel, ChainDropsBecomeExplicitDropNotices) {
  // An NF that drops everything; PayloadPark-tagged header packets come back as explicit
  // drops (OP bit), whole untagged packets are freed at the server.
  for (bool tagged : {false, true}) {
    Bench b;
    park::PayloadPark<SimBuffer> pp{park::ParkConfig{}};
    NfServerConfig c = fast();
    auto ch = std::make_unique<nf::Chain>();
    ch->add(std::make_unique<DropAll>());
    b.s = std::make_unique<NfServer>(
        b.e, c, std::move(ch), tagged ? std::optional(park::TagFormat::kNfpark) : std::nullopt);
    b.s->connect(&b.back, 7);
    for (uint64_t i = 0; i < 10; ++i) {
      Packet* p = make_packet(b.pool, 1000, i);
      if (tagged) p = pp.split(p, 0);
      b.s->arrive(p, 0, 0);
    }
    b.e.run();
    EXPECT_EQ(b.s->counters().nf_drops, 10u);
    EXPECT_EQ(b.s->counters().drop_notices, tagged ? 10u : 0u);
    EXPECT_EQ(b.back.got.size(), tagged ? 10u : 0u);
    pp.drain();
  }
}

}  // namespace
}  // namespace nfpark::sim
