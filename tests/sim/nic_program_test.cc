// The NF server's NIC hook (sim/nic_program.h): what crosses PCIe per mode (NFSlicer: the
// header packet and its token; nicmem: the header segment; split: everything, two descriptors),
// store full => send whole (the Slicer's ring, NIC memory), NIC buffers returned whatever the
// host does with a packet (delivered, the chain's or a fault's drop, a full RX ring), and pools
// full at exit.
#include "sim/nic_program.h"

#include <gtest/gtest.h>

#include "nf/registry.h"
#include "sim/nf_server.h"
#include "sim_fixtures.h"

namespace nfpark::sim {
namespace {

using testing::make_packet;
using testing::RecordingPeer;

constexpr uint32_t kFrame = 1500;
constexpr uint32_t kHeaders = 42;  // Eth + IPv4 + UDP of make_packet's frames

struct Bench {
  Engine e;
  PacketPool pool{kFrame + 64};
  RecordingPeer back;
  std::unique_ptr<NfServer> s;
  void build(NfServerConfig c, park::HostMode mode, const NicConfig& nc = {}) {
    std::string err;
    auto chain = nf::build_chain("forward", nullptr, err);
    ASSERT_TRUE(chain) << err;
    auto step = std::make_unique<park::NfBurst<SimBuffer>>(std::move(chain), std::nullopt, true,
                                                           mode == park::HostMode::kNfslicer);
    s = std::make_unique<NfServer>(e, c, std::move(step));
    auto nic = make_nic_program(mode, nc, err);
    ASSERT_TRUE(nic) << err;
    s->set_nic(std::move(nic));
    s->connect(&back, 7);
  }
  void offer(uint64_t n, uint32_t len = kFrame) {
    for (uint64_t i = 0; i < n; ++i) s->arrive(make_packet(pool, len, i), 0, 0);
  }
  const park::HostBoundary& hb() const { return s->nic()->boundary(); }
  // Runs to the end and drains the NIC, as a run does; true when every record and every NIC
  // buffer is back.
  bool finish() {
    e.run();
    s->drain_nic();
    return pool.live() == 0 && s->nic()->all_back();
  }
};

NfServerConfig config() {
  NfServerConfig c;
  c.link_gbps = 1000;
  c.pcie_gbps = 10;
  c.pcie_overhead_bytes = 0;
  c.nic_buffer_bytes = 1ull << 30;
  c.rx_ring = 1 << 20;
  c.service.header_ns = c.service.whole_ns = 0;
  return c;
}

// The last frame's arrival back at the switch: PCIe-bound here.
Picos last(const Bench& b) {
  return b.back.got.back().at;
}

TEST(NicHook, SlicerSendsOnlyTheHeaderPacketAcrossPcie) {
  Bench host, sl;
  host.build(config(), park::HostMode::kHost);
  sl.build(config(), park::HostMode::kNfslicer);
  host.offer(1000);
  sl.offer(1000);
  ASSERT_TRUE(host.finish());
  ASSERT_TRUE(sl.finish());
  ASSERT_EQ(sl.back.got.size(), 1000u);
  for (const auto& a : sl.back.got) ASSERT_EQ(a.len, kFrame);  // spliced whole
  const uint32_t header_pkt = kHeaders + 8;                    // + the token
  EXPECT_EQ(sl.hb().rx().data_bytes, 1000u * header_pkt);
  EXPECT_EQ(sl.hb().rx().kept_bytes, 1000u * (kFrame - header_pkt));
  EXPECT_EQ(sl.hb().tx().data_bytes, 1000u * header_pkt);
  EXPECT_EQ(host.hb().rx().data_bytes, 1000u * kFrame);
  // PCIe carries 50 B instead of 1500 B a packet, each way
  EXPECT_NEAR(double(last(host)) / double(last(sl)), double(kFrame) / header_pkt, 0.5);
  EXPECT_EQ(sl.s->nic()->held(), 0u);
}

TEST(NicHook, SlicerRingFullSendsWhole) {
  Bench b;
  NfServerConfig c = config();
  c.service.header_ns = c.service.whole_ns = 1000;  // slower than arrivals: the ring fills
  NicConfig nc;
  nc.slicer.entries = 16;
  b.build(c, park::HostMode::kNfslicer, nc);
  b.offer(100);
  ASSERT_TRUE(b.finish());
  ASSERT_EQ(b.back.got.size(), 100u);  // nothing lost
  for (const auto& a : b.back.got) ASSERT_EQ(a.len, kFrame);
  std::map<std::string, uint64_t, std::less<>> ctr;
  b.s->nic()->report([&](std::string_view k, uint64_t v) { ctr[std::string(k)] = v; });
  const uint64_t sliced = ctr["sliced"], busy = ctr["unsliced_busy"];
  EXPECT_EQ(sliced, 16u);
  EXPECT_EQ(sliced + busy, 100u);
  EXPECT_EQ(b.hb().rx().data_bytes, sliced * (kHeaders + 8) + busy * kFrame);  // whole ones cross
  EXPECT_EQ(b.s->nic()->drops(), 0u);
}

TEST(NicHook, NicmemKeepsPayloadsOnTheNicUntilItsMemoryIsFull) {
  Bench b;
  NfServerConfig c = config();
  c.service.header_ns = 100;
  c.service.whole_ns = 1000;  // a payload in host memory costs the host more
  NicConfig nc;
  nc.nicmem_pool = 10;
  b.build(c, park::HostMode::kNicmem, nc);
  b.offer(100);
  ASSERT_TRUE(b.finish());
  ASSERT_EQ(b.back.got.size(), 100u);
  for (const auto& a : b.back.got) ASSERT_EQ(a.len, kFrame);
  // the first 10 land in NIC memory (64 B header segments cross), 90 fall back to host memory
  EXPECT_EQ(b.hb().nicmem_fallbacks(), 90u);
  EXPECT_EQ(b.hb().rx().data_bytes, 10u * 64 + 90u * kFrame);
  EXPECT_EQ(b.hb().rx().descriptors, 200u);
  EXPECT_EQ(b.s->busy_time(), (10 * 100 + 90 * 1000) * kNs);
}

TEST(NicHook, SplitCrossesEverythingWithTwoDescriptors) {
  Bench host, split;
  NfServerConfig c = config();
  host.build(c, park::HostMode::kHost);
  split.build(c, park::HostMode::kSplit);
  host.offer(100);
  split.offer(100);
  ASSERT_TRUE(host.finish());
  ASSERT_TRUE(split.finish());
  EXPECT_EQ(split.hb().rx().data_bytes, 100u * kFrame);
  EXPECT_EQ(split.hb().rx().descriptors, 200u);
  EXPECT_EQ(split.hb().tx().descriptors, 200u);
  // one extra 16 B descriptor a packet each way on PCIe: the RX of all 100, then the last
  // one's TX
  EXPECT_EQ(last(split) - last(host), 101 * serialization(16, c.pcie_gbps));
}

TEST(NicHook, NicBuffersComeBackWhateverTheHostDoes) {
  for (int what : {0, 1}) {
    Bench b;
    NfServerConfig c = config();
    c.service.header_ns = c.service.whole_ns = 1000;
    if (what == 0) c.rx_ring = 8;  // most of a burst at t = 0 finds the ring full
    if (what == 1) c.drop = 0.5;   // a fault loses half of what the chain passes
    NicConfig nc;
    nc.nicmem_pool = 64;
    b.build(c, park::HostMode::kNicmem, nc);
    b.offer(200);
    ASSERT_TRUE(b.finish()) << what;
    const uint64_t lost = what == 0 ? b.s->counters().drop_rx_ring : b.s->counters().drop_fault;
    EXPECT_GT(lost, 0u) << what;
    EXPECT_EQ(b.back.got.size() + lost, 200u) << what;
  }
}

TEST(NicHook, SlicerPayloadsOfLostHeadersAreFreedAtExitOrByTtl) {
  for (uint32_t entries : {4096u, 16u}) {
    Bench b;
    NfServerConfig c = config();
    c.drop = 0.3;  // headers lost on the host: their payloads wait in the ring
    NicConfig nc;
    nc.slicer.entries = entries;
    nc.slicer.ttl = 1;
    b.build(c, park::HostMode::kNfslicer, nc);
    b.offer(200);
    b.e.run();
    std::map<std::string, uint64_t, std::less<>> ctr;
    b.s->nic()->report([&](std::string_view k, uint64_t v) { ctr[std::string(k)] = v; });
    const uint64_t lost = b.s->counters().drop_fault;
    ASSERT_GT(lost, 0u);
    // in = out + the host's losses + the splice's drops (a header back after its entry expired)
    EXPECT_EQ(b.back.got.size() + lost + b.s->nic()->drops(), 200u);
    EXPECT_EQ(ctr["spliced"] + ctr["passed"], b.back.got.size());
    EXPECT_EQ(b.s->nic()->drops(), ctr["drop_expired"] + ctr["drop_generation"]);  // reused
    // a small ring reclaims some by TTL while running; the rest wait for the end of the run
    EXPECT_EQ(b.s->nic()->held(), ctr["sliced"] - ctr["spliced"] - ctr["expired"]);
    if (entries == 16) {
      EXPECT_GT(ctr["expired"], 0u);
    }
    b.s->drain_nic();
    EXPECT_EQ(b.s->nic()->held(), 0u);
    EXPECT_EQ(b.pool.live(), 0u) << entries;  // pools full at exit
  }
}

// Every NIC program counts as touched what the chain reads (set_reads, from the chain's
// nf::Chain::reads() in run_topology): the headers, the Ethernet header, or nothing.
TEST(NicHook, TouchedBytesAreWhatTheChainReads) {
  for (park::HostMode mode : {park::HostMode::kHost, park::HostMode::kNfslicer,
                              park::HostMode::kNicmem, park::HostMode::kSplit})
    for (auto [need, touched] : {std::pair{ViewNeed::kHeaders, kHeaders},
                                 {ViewNeed::kEthernet, 14u},
                                 {ViewNeed::kLengths, 0u}}) {
      SCOPED_TRACE(::testing::Message() << park::to_string(mode) << " " << int(need));
      std::string err;
      auto nic = make_nic_program(mode, NicConfig{}, err);
      ASSERT_TRUE(nic) << err;
      nic->set_reads(need);
      PacketPool pool{kFrame + 64};
      Packet* p = make_packet(pool, kFrame, 1);
      PcieCost cost;
      Packet* h = nic->rx(p, 0, cost);
      ASSERT_NE(h, nullptr);
      EXPECT_EQ(nic->boundary().nf_touched(), touched);
      EXPECT_EQ(nic->boundary().nf_packets(), 1u);
      Packet* out = nic->tx(h, cost);
      if (out) pool.free(out);
      nic->drain();
      EXPECT_EQ(pool.live(), 0u);
    }
}

}  // namespace
}  // namespace nfpark::sim
