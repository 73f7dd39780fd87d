// The fault injector (park/fault_injector.h) on real mbufs in front of PayloadPark, which lends
// originals to their header packets: every fault at once — drops, duplicates (deep copies),
// delays of part of the packets, reordering, corrupted and forged tags. A forged tag is one the
// switch must reject, so whatever leaves is a frame exactly as sent, the balance holds and every
// mbuf comes back.
//
// (The case this guards: a duplicate's tag copied onto another header while the original, which
// holds the lent payload, is delayed or destroyed — the record then has no intact holder and the
// forged header merges. The injector copies only tags of originals sent back intact.)
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/packet_builder.h"
#include "core/parse.h"
#include "dp/mbuf_env.h"
#include "dp/mbuf_ops.h"
#include "park/fault_injector.h"
#include "park/nf_endpoint.h"
#include "park/payload_park.h"

namespace nfpark::dp {
namespace {

class FaultMbuf : public ::testing::TestWithParam<uint32_t> {
 protected:
  static void SetUpTestSuite() { fixture::setup_mbuf_env(); }
};

std::vector<uint8_t> frame(uint64_t id, std::mt19937& rng) {
  const uint32_t payload = rng() % 4 == 0 ? 20 + rng() % 120 : 170 + rng() % 1200;
  return PacketBuilder()
      .ipv4("10.0.0." + std::to_string(1 + id % 200), "10.1.0.1")
      .udp(uint16_t(1000 + id), 53)
      .payload_size(payload)
      .packet_id(id)
      .build();
}

TEST_P(FaultMbuf, EveryFaultAtOnceNeverAWrongPayload) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    std::mt19937 rng{uint32_t(seed)};
    park::ParkConfig cfg;
    cfg.park_bytes = GetParam();
    cfg.slots = 64;
    park::PayloadPark<MbufOps> pp(cfg);
    park::NfEndpoint<MbufOps> nf(park::TagFormat::kNfpark, true);
    park::FaultConfig f;
    f.drop = 0.05;
    f.dup = 0.3;
    f.reorder = 0.2;
    f.corrupt_tag = 0.05;
    f.forge_tag = 0.3;
    f.delay_us = 10;
    f.delay_share = 0.3;
    f.seed = seed;
    park::FaultInjector<MbufOps> fi(f, {park::TagShape::kNfpark});
    auto copy = [](rte_mbuf* m) {
      return rte_pktmbuf_copy(m, MbufOps::pools.packets, 0, UINT32_MAX);
    };

    std::vector<std::vector<uint8_t>> sent;
    uint64_t out = 0, wrong = 0;
    auto merge_all = [&](std::vector<rte_mbuf*>& back) {
      for (rte_mbuf* h : back) {
        rte_mbuf* m = pp.merge(h, 0);
        if (!m) continue;
        ++out;
        const std::vector<uint8_t> got = fixture::bytes(m);
        rte_pktmbuf_free(m);
        const PacketLayout L = parse_packet(got.data(), uint32_t(got.size()));
        const auto id = L.ok() ? read_packet_id(got.data() + L.payload_off,
                                                uint32_t(got.size()) - L.payload_off)
                               : std::nullopt;
        if (!id || *id >= sent.size() || got != sent[*id]) ++wrong;
      }
      back.clear();
    };
    for (Nanos now = 0; now < 400 * kMicro; now += kMicro) {
      std::vector<rte_mbuf*> burst, back;
      std::vector<uint32_t> tags;
      for (int i = 0; i < 16; ++i) {
        sent.push_back(frame(sent.size(), rng));
        rte_mbuf* m = rte_pktmbuf_alloc(MbufOps::pools.packets);
        ASSERT_NE(m, nullptr) << "pool empty: the test leaks";
        std::memcpy(rte_pktmbuf_append(m, uint16_t(sent.back().size())), sent.back().data(),
                    sent.back().size());
        rte_mbuf* h = pp.split(m, 0);
        ASSERT_NE(h, nullptr);
        PacketView v;
        tags.push_back(0);
        nf.view(h, v, tags.back());
        burst.push_back(h);
      }
      fi.release(now, false, back);
      fi.apply(burst.data(), tags.data(), uint16_t(burst.size()), now, back, copy);
      merge_all(back);
    }
    std::vector<rte_mbuf*> back;
    fi.release(0, true, back);
    merge_all(back);
    pp.drain();

    const park::FaultCounters& c = fi.counters();
    EXPECT_GT(c.forged, 100u);
    EXPECT_GT(c.duplicated, 100u);
    EXPECT_EQ(wrong, 0u) << "seed " << seed << ": a packet left with bytes not its own";
    EXPECT_EQ(sent.size() + c.duplicated, out + pp.counters().packet_drops() + c.dropped);
    EXPECT_TRUE(fixture::pools_full()) << "an mbuf did not come back";
  }
}

INSTANTIATE_TEST_SUITE_P(ParkBytes, FaultMbuf, ::testing::Values(0u, 160u));

}  // namespace
}  // namespace nfpark::dp
