// The direct NF link (dp/switch_loop.h, "NF link"): NfServer::hand runs a burst through the same
// chain as NfServer::poll on its port, so a switch that hands bursts over gets back what the ring
// would have carried — the same packets, bytes and order, the same verdicts, drop notices and
// chain counters — and only servers that never hold a packet (no faults, no Reframer) offer it.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/packet_builder.h"
#include "dp/mbuf_env.h"
#include "dp/mbuf_ops.h"
#include "dp/nf_server.h"
#include "dp/port.h"
#include "park/payload_park.h"
#include "run/budget.h"
#include "run/load.h"
#include "run/nf_assembly.h"

namespace nfpark::dp {
namespace {

class NfHand : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { fixture::setup_mbuf_env(); }
};

// A run config from TOML text, as `nfpark run` loads it.
run::RunConfig config(const std::string& toml) {
  run::Loader l;
  std::string err;
  EXPECT_TRUE(l.load_string(toml, "t.toml", err)) << err;
  EXPECT_TRUE(l.finish(err)) << err;
  return l.config();
}

std::unique_ptr<NfServer> server(const run::RunConfig& cfg) {
  std::string err;
  const run::NfServerSpec spec = run::nf_server_spec(cfg, run::plan_memory(cfg, 0), false, err);
  EXPECT_TRUE(err.empty()) << err;
  auto step = run::build_nf_step<MbufOps>(cfg, spec, err);
  EXPECT_NE(step, nullptr) << err;
  return std::make_unique<NfServer>(std::move(step), spec.faults, spec.shape,
                                    MbufOps::pools.packets);
}

rte_mbuf* mbuf_of(const std::vector<uint8_t>& f) {
  rte_mbuf* m = rte_pktmbuf_alloc(MbufOps::pools.packets);
  std::memcpy(rte_pktmbuf_append(m, uint16_t(f.size())), f.data(), f.size());
  MbufMeta::reset(m);
  return m;
}

// 3 flows, 2 bursts of 20: the rate limiter (burst 2000 B per flow) passes each flow's first
// packets and drops the rest; macswap rewrites the survivors.
std::vector<std::vector<uint8_t>> frames() {
  std::vector<std::vector<uint8_t>> v;
  for (uint64_t id = 0; id < 40; ++id)
    v.push_back(PacketBuilder()
                    .ipv4("10.0.0." + std::to_string(1 + id % 3), "10.1.0.1")
                    .udp(uint16_t(1000 + id % 3), 53)
                    .payload_size(400)
                    .packet_id(id)
                    .build());
  return v;
}

// The chain, with `run` more [run] settings.
std::string chain_cfg(const std::string& run = "") {
  return "[run]\nchain = \"ratelimit,macswap\"\ntraffic = [\"vdev:a\", \"vdev:b\"]\n" + run +
         "[nf.ratelimit]\nrate_bps = 8000\nburst_bytes = 2000\n";
}

TEST_F(NfHand, GivesBackWhatThePolledRingCarriesInItsOrder) {
  const run::RunConfig cfg = config(chain_cfg());
  auto direct = server(cfg), ringed = server(cfg);
  ASSERT_TRUE(direct->direct_ok());
  Port sw, nf;
  std::string err;
  ASSERT_TRUE(Port::ring_pair("t_hand", MbufOps::pools.packets, sw, nf, err, 256)) << err;
  const auto fs = frames();
  std::vector<std::vector<uint8_t>> by_hand, by_ring;
  for (size_t at = 0; at < fs.size(); at += 20) {
    const Nanos now = Nanos(at) * kMilli;
    std::vector<rte_mbuf*> a, b;
    for (size_t i = at; i < at + 20; ++i) a.push_back(mbuf_of(fs[i])), b.push_back(mbuf_of(fs[i]));
    for (rte_mbuf* m : direct->hand(a.data(), uint16_t(a.size()), now)) {
      by_hand.push_back(fixture::bytes(m));
      rte_pktmbuf_free(m);
    }
    sw.tx(b.data(), uint16_t(b.size()));
    ASSERT_EQ(ringed->poll(nf, now), 20);
    rte_mbuf* back[kBurst];
    for (uint16_t n = sw.rx(back, kBurst), i = 0; i < n; ++i) {
      by_ring.push_back(fixture::bytes(back[i]));
      rte_pktmbuf_free(back[i]);
    }
    EXPECT_EQ(direct->clock(), now);
  }
  EXPECT_EQ(by_hand, by_ring);
  // Some dropped, some passed: the comparison saw both verdicts.
  EXPECT_GT(direct->nf_drops(), 0u);
  EXPECT_LT(direct->nf_drops(), fs.size());
  EXPECT_EQ(by_hand.size(), fs.size() - direct->nf_drops());
  EXPECT_EQ(direct->nf_drops(), ringed->nf_drops());
  EXPECT_EQ(direct->rx(), ringed->rx());
  EXPECT_EQ(direct->endpoint().whole, ringed->endpoint().whole);
  EXPECT_EQ(direct->endpoint().drop_freed, ringed->endpoint().drop_freed);
  // The hand-off never touched the ports: counting is the caller's (SwitchLoop::hand_off).
  EXPECT_EQ(nf.rx_packets, fs.size());
  sw.stop();
  nf.stop();
}

// PayloadPark's header packets: a dropped one comes back as its explicit-drop notice (flagged
// in its tag), which the switch's merge turns into a freed slot — as on the ring path.
TEST_F(NfHand, TaggedDropsComeBackAsNoticesThatFreeTheirSlot) {
  const run::RunConfig cfg = config(chain_cfg("mode = \"payloadpark\"\n"));
  auto s = server(cfg);
  ASSERT_TRUE(s->direct_ok());
  park::PayloadPark<MbufOps> pp(cfg.park);
  std::vector<rte_mbuf*> hdrs;
  const auto fs = frames();
  for (size_t i = 0; i < 20; ++i)
    if (rte_mbuf* h = pp.split(mbuf_of(fs[i]), 0)) hdrs.push_back(h);
  ASSERT_EQ(hdrs.size(), 20u);  // 400 B of payload: every one parked
  const auto& back = s->hand(hdrs.data(), uint16_t(hdrs.size()), 0);
  EXPECT_EQ(back.size(), 20u);  // survivors and notices, none freed at the server
  EXPECT_GT(s->endpoint().drop_notified, 0u);
  size_t out = 0;
  for (rte_mbuf* h : std::vector<rte_mbuf*>(back.begin(), back.end())) {
    if (rte_mbuf* m = pp.merge(h, 0)) {
      ++out;
      rte_pktmbuf_free(m);
    }
  }
  EXPECT_EQ(out, 20 - s->endpoint().drop_notified);
  EXPECT_EQ(pp.parked(), 0u);  // every slot free again: the notices found their payloads
}

TEST_F(NfHand, OnlyServersThatHoldNothingOfferIt) {
  EXPECT_TRUE(server(config(chain_cfg()))->direct_ok());
  EXPECT_FALSE(server(config(chain_cfg("reframe_us = 50\n")))->direct_ok());
  run::RunConfig faulty = config(chain_cfg());
  faulty.faults.delay_us = 10;
  EXPECT_FALSE(server(faulty)->direct_ok());
  faulty.faults = {};
  faulty.faults.dup = 0.1;
  EXPECT_FALSE(server(faulty)->direct_ok());
  auto boxed = server(config(chain_cfg()));
  BoxLane lane;
  boxed->from_box(&lane);
  EXPECT_FALSE(boxed->direct_ok());
}

// An empty poll moves the server's clock on (live: the mode's timers run on it); tick() does the
// same without a port.
TEST_F(NfHand, TickMovesTheClockAsAnEmptyPoll) {
  auto s = server(config(chain_cfg()));
  s->tick(5 * kMilli);
  EXPECT_EQ(s->clock(), 5 * kMilli);
  s->tick(7 * kMilli);
  EXPECT_EQ(s->clock(), 7 * kMilli);
}

}  // namespace
}  // namespace nfpark::dp
