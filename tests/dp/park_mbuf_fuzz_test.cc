// PayloadPark on real mbufs — MbufOps lending the original in place (whole payload parked) or
// as the tail of a header mbuf (160 B parked) — against an NF that misbehaves at random: returns
// header packets late (reordered past a small slot table's wrap), drops them silently or with the
// OP bit (the real NfEndpoint), duplicates them, returns them as deep copies (as from another
// process), corrupts a tag byte, or pushes a VLAN tag. Whatever happens:
//   - every packet that leaves is its own frame (found by the packet id in its payload), byte for
//     byte as sent, plus the VLAN tag when the NF pushed one — never a payload on another header;
//   - no parked packet leaves twice (a duplicated whole packet may: the switch keeps no state for
//     packets it did not park, exactly as plain forwarding);
//   - in + copies made = out + the switch's packet drops + the NF's drops;
//   - after drain() every mbuf is back in its pool.
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <cstring>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "core/packet_builder.h"
#include "core/packet_view.h"
#include "core/parse.h"
#include "dp/mbuf_env.h"
#include "dp/mbuf_ops.h"
#include "park/nf_endpoint.h"
#include "park/payload_park.h"

namespace nfpark::dp {
namespace {

enum class Act { kReturn, kLate, kDropSilent, kDropNotify, kDuplicate, kDeepCopy, kCorrupt, kVlan };
constexpr Act kActs[] = {Act::kReturn,    Act::kLate,     Act::kDropSilent, Act::kDropNotify,
                         Act::kDuplicate, Act::kDeepCopy, Act::kCorrupt,    Act::kVlan};

struct Case {
  uint32_t park_bytes;
  uint32_t seed;
};

class ParkMbufFuzz : public ::testing::TestWithParam<Case> {
 protected:
  static void SetUpTestSuite() { fixture::setup_mbuf_env(); }

  static std::vector<uint8_t> frame(uint64_t id, std::mt19937& rng) {
    // Payloads below min_payload (sent whole with a tag) and above it (parked), UDP and TCP.
    const uint32_t payload = rng() % 4 == 0 ? 20 + rng() % 120 : 170 + rng() % 1200;
    PacketBuilder b;
    b.ipv4("10.0.0." + std::to_string(1 + id % 200), "10.1.0.1");
    if (rng() % 2)
      b.udp(uint16_t(1000 + id), 53);
    else
      b.tcp(uint16_t(1000 + id), 80);
    return b.payload_size(payload).packet_id(id).build();
  }
  static rte_mbuf* mbuf_of(const std::vector<uint8_t>& f) {
    rte_mbuf* m = rte_pktmbuf_alloc(MbufOps::pools.packets);
    if (!m) return nullptr;
    std::memcpy(rte_pktmbuf_append(m, uint16_t(f.size())), f.data(), f.size());
    return m;
  }
};
using fixture::bytes;
using fixture::push_vlan;
using fixture::with_vlan;

TEST_P(ParkMbufFuzz, NeverAWrongPayloadAndEveryMbufComesBack) {
  const Case c = GetParam();
  std::mt19937 rng(c.seed);
  park::ParkConfig cfg;
  cfg.park_bytes = c.park_bytes;
  cfg.slots = 32;  // small: late headers meet reused slots (premature evictions)
  park::PayloadPark<MbufOps> pp(cfg);
  park::NfEndpoint<MbufOps> nf(park::TagFormat::kNfpark, true);

  constexpr uint64_t kPackets = 600;
  std::vector<std::vector<uint8_t>> sent(kPackets);
  std::set<uint64_t> vlan_pushed, seen, whole_duplicated;
  std::multimap<uint64_t, rte_mbuf*> late;  // step at which the NF returns it -> packet
  uint64_t out = 0, copies = 0, nf_drops = 0, wrong = 0, twice = 0;

  auto merge = [&](rte_mbuf* h) {
    rte_mbuf* m = pp.merge(h, 0);
    if (!m) return;
    ++out;
    const std::vector<uint8_t> got = bytes(m);
    rte_pktmbuf_free(m);
    const PacketLayout L = parse_packet(got.data(), uint32_t(got.size()));
    const auto id =
        L.ok() ? read_packet_id(got.data() + L.payload_off, uint32_t(got.size()) - L.payload_off)
               : std::nullopt;
    if (!id || *id >= kPackets) {
      ++wrong;
      return;
    }
    if (!seen.insert(*id).second && !whole_duplicated.count(*id)) ++twice;
    const auto& want = sent[*id];
    if (got != (vlan_pushed.count(*id) ? with_vlan(want) : want)) ++wrong;
  };

  for (uint64_t step = 0; step < kPackets; ++step) {
    sent[step] = frame(step, rng);
    rte_mbuf* m = mbuf_of(sent[step]);
    ASSERT_NE(m, nullptr) << "pool empty: the test leaks";
    rte_mbuf* h = pp.split(m, 0);
    ASSERT_NE(h, nullptr);
    PacketView v;
    uint32_t tag_at = 0;
    nf.view(h, v, tag_at);
    switch (kActs[rng() % std::size(kActs)]) {
      case Act::kReturn:
        merge(h);
        break;
      case Act::kLate:
        late.emplace(step + 1 + rng() % 80, h);
        break;
      case Act::kDropSilent:
        ++nf_drops;
        rte_pktmbuf_free(h);
        break;
      case Act::kDropNotify:
        ++nf_drops;
        if (rte_mbuf* back = nf.on_drop(h, tag_at)) merge(back);
        break;
      case Act::kDuplicate: {
        rte_mbuf* dup = rte_pktmbuf_copy(h, MbufOps::pools.packets, 0, UINT32_MAX);
        ASSERT_NE(dup, nullptr);
        ++copies;
        const PacketLayout L = parse_packet(sent[step].data(), uint32_t(sent[step].size()));
        if (L.payload_len() < cfg.min_payload) whole_duplicated.insert(step);
        if (rng() % 2) {  // the copy first (the original is still out), or second
          merge(dup);
          merge(h);
        } else {
          merge(h);
          merge(dup);
        }
        break;
      }
      case Act::kDeepCopy: {  // another process: the port copies, frees, and a copy comes back
        rte_mbuf* copy = rte_pktmbuf_copy(h, MbufOps::pools.packets, 0, UINT32_MAX);
        ASSERT_NE(copy, nullptr);
        rte_pktmbuf_free(h);
        merge(copy);
        break;
      }
      case Act::kCorrupt:
        if (tag_at) rte_pktmbuf_mtod(h, uint8_t*)[tag_at + rng() % 24] ^= uint8_t(1 + rng() % 255);
        merge(h);
        break;
      case Act::kVlan:
        ASSERT_TRUE(push_vlan(h));
        vlan_pushed.insert(step);
        merge(h);
        break;
    }
    for (auto it = late.begin(); it != late.end() && it->first <= step;) {
      merge(it->second);
      it = late.erase(it);
    }
  }
  for (auto& [when, h] : late) merge(h);
  pp.drain();

  EXPECT_EQ(wrong, 0u) << "a packet left with bytes that are not its own";
  EXPECT_EQ(twice, 0u) << "a parked packet left twice";
  EXPECT_EQ(kPackets + copies, out + pp.counters().packet_drops() + nf_drops);
  EXPECT_GT(out, kPackets / 2);
  EXPECT_GT(pp.counters().merges, 0u);
  EXPECT_GT(pp.counters().premature_evictions + pp.counters().duplicate_headers, 0u);
  EXPECT_TRUE(fixture::pools_full()) << "an mbuf did not come back";
}

INSTANTIATE_TEST_SUITE_P(Seeds, ParkMbufFuzz,
                         ::testing::Values(Case{0, 1}, Case{0, 2}, Case{0, 3}, Case{160, 1},
                                           Case{160, 2}, Case{160, 3}, Case{352, 4}));

}  // namespace
}  // namespace nfpark::dp
