// The edge-case trace: every frame kind present, deterministic by seed, valid checksums where a
// packet is whole, unique packet ids, ICMP errors quoting a packet of the trace, flows interleaved.
#include "trace/edge_gen.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <set>

#include "core/bytes.h"
#include "core/checksum.h"
#include "core/flow_key.h"
#include "core/packet_builder.h"
#include "core/parse.h"
#include "park/slicer_token.h"

namespace nfpark::trace {
namespace {

struct Edge {
  Trace t;
  std::vector<EdgeKind> kinds;
};

Edge make(EdgeConfig c = {}) {
  Edge e;
  generate_edge(c, e.t, &e.kinds);
  return e;
}

std::vector<uint8_t> frame(const Trace& t, size_t i) {
  return std::vector<uint8_t>(t.data(i), t.data(i) + t[i].len);
}

TEST(EdgeGen, HoldsEveryKind) {
  Edge e = make();
  ASSERT_EQ(e.kinds.size(), e.t.size());
  std::map<EdgeKind, int> n;
  for (EdgeKind k : e.kinds) ++n[k];
  for (int k = 0; k < kEdgeKinds; ++k) EXPECT_GT(n[EdgeKind(k)], 0) << to_string(EdgeKind(k));
  EXPECT_EQ(n[EdgeKind::kFlow], 12 * 8);
}

TEST(EdgeGen, DeterministicBySeed) {
  Edge a = make(), b = make();
  EdgeConfig c;
  c.seed = 2;
  Edge d = make(c);
  ASSERT_EQ(a.t.size(), b.t.size());
  bool same = true, differs = false;
  for (size_t i = 0; i < a.t.size(); ++i) {
    same &= frame(a.t, i) == frame(b.t, i) && a.t[i].wire_len == b.t[i].wire_len;
    differs |= i < d.t.size() && frame(a.t, i) != frame(d.t, i);
  }
  EXPECT_TRUE(same);
  EXPECT_TRUE(differs);
}

TEST(EdgeGen, SizesAndTruncation) {
  Edge e = make();
  std::set<uint32_t> sizes;
  int truncated = 0, inside_header = 0;
  for (size_t i = 0; i < e.t.size(); ++i) {
    sizes.insert(e.t[i].wire_len);
    if (e.kinds[i] == EdgeKind::kTruncated) {
      ++truncated;
      EXPECT_GE(e.t[i].len, 64u);
      EXPECT_LE(e.t[i].len, 96u);
      EXPECT_LT(e.t[i].len, e.t[i].wire_len);
      inside_header += parse_packet(e.t.data(i), e.t[i].len).status == ParseStatus::kTruncated;
    } else {
      EXPECT_EQ(e.t[i].len, e.t[i].wire_len) << i;
    }
  }
  EXPECT_EQ(truncated, 4);
  EXPECT_EQ(inside_header, 1);
  for (uint32_t s : {9014u, 16398u, 32768u, 65549u, 65589u, 64u, 1514u})
    EXPECT_TRUE(sizes.count(s)) << s;
}

TEST(EdgeGen, ChecksumsValidAndIdsUnique) {
  Edge e = make();
  std::set<uint64_t> ids;
  int with_id = 0;
  for (size_t i = 0; i < e.t.size(); ++i) {
    const uint8_t* d = e.t.data(i);
    const PacketLayout L = parse_packet(d, e.t[i].len);
    if (e.kinds[i] != EdgeKind::kTruncated && e.kinds[i] != EdgeKind::kShortIp &&
        e.kinds[i] != EdgeKind::kMpls && L.ok()) {
      EXPECT_TRUE(verify_checksums(d, L)) << i << " " << to_string(e.kinds[i]);
    }
    if (L.ok() && L.l4_off && L.captured_payload() >= kPacketIdBytes) {
      if (auto id = read_packet_id(d + L.payload_off, L.captured_payload())) {
        ++with_id;
        EXPECT_TRUE(ids.insert(*id).second) << "duplicate id " << *id;
      }
    }
  }
  EXPECT_GT(with_id, 100);
}

TEST(EdgeGen, IcmpErrorsQuoteAnEarlierPacketOfTheTrace) {
  Edge e = make();
  int errors = 0;
  for (size_t i = 0; i < e.t.size(); ++i) {
    if (e.kinds[i] != EdgeKind::kIcmpError) continue;
    ++errors;
    const uint8_t* d = e.t.data(i);
    const PacketLayout L = parse_packet(d, e.t[i].len);
    ASSERT_TRUE(L.ok());
    const uint8_t* quote = d + L.l4_off + 8;
    const uint32_t ip_hdr = L.ip_version == 4 ? 20 : 40;
    bool found = false;
    for (size_t j = 0; j < i && !found; ++j)
      found = e.kinds[j] == EdgeKind::kFlow && e.t[j].len >= 14 + ip_hdr + 8 &&
              std::memcmp(e.t.data(j) + 14, quote, ip_hdr + 8) == 0;
    EXPECT_TRUE(found) << "ICMP error " << i << " quotes no earlier flow packet";
  }
  EXPECT_EQ(errors, 3);
}

TEST(EdgeGen, FragmentsExtensionHeadersTagsAndLookalikes) {
  Edge e = make();
  int first = 0, non_first = 0, v6ext = 0, vlans = 0, escape = 0, tag_like = 0, dscp63 = 0;
  for (size_t i = 0; i < e.t.size(); ++i) {
    const uint8_t* d = e.t.data(i);
    const PacketLayout L = parse_packet(d, e.t[i].len);
    if (e.kinds[i] == EdgeKind::kFragment) {
      EXPECT_TRUE(L.fragment);
      (L.first_fragment ? first : non_first)++;
    }
    if (e.kinds[i] == EdgeKind::kIpv6Ext)
      v6ext += L.ok() && L.ip_version == 6 && L.l4_off > 14 + 40;
    if (e.kinds[i] == EdgeKind::kVlan) vlans += L.vlans;
    if (e.kinds[i] == EdgeKind::kLookalike) {
      ASSERT_TRUE(L.ok() && L.has_ports());
      escape += load_be64(d + L.payload_off) == park::kEscapeToken;
      tag_like += d[L.payload_off] == 0x4E && (d[L.payload_off + 1] >> 4) == 1;
    }
    const uint8_t* ip = d + L.l3_off;
    const int dscp = L.ip_version == 4 ? ip[1] >> 2 : (load_be16(ip) >> 6) & 0x3F;
    if (L.ok() && L.ip_version && dscp == 63) ++dscp63;
  }
  EXPECT_EQ(first, 1);
  EXPECT_EQ(non_first, 1);
  EXPECT_EQ(v6ext, 5);
  EXPECT_EQ(vlans, 3);  // QinQ (2) + 802.1ad (1)
  EXPECT_EQ(escape, 2);
  EXPECT_EQ(tag_like, 2);
  EXPECT_EQ(dscp63, 3);
}

TEST(EdgeGen, FlowsAreInterleavedAndKeepTheirOrder) {
  Edge e = make();
  std::map<uint64_t, std::vector<size_t>> flows;
  for (size_t i = 0; i < e.t.size(); ++i) {
    if (e.kinds[i] != EdgeKind::kFlow) continue;
    const PacketLayout L = parse_packet(e.t.data(i), e.t[i].len);
    FlowKey k;
    ASSERT_TRUE(extract_flow_key(e.t.data(i), L, k));
    flows[k.hash()].push_back(i);
  }
  EXPECT_EQ(flows.size(), 12u);
  size_t back_to_back = 0, pairs = 0;
  for (auto& [h, idx] : flows) {
    EXPECT_EQ(idx.size(), 8u);
    for (size_t j = 1; j < idx.size(); ++j, ++pairs) back_to_back += idx[j] == idx[j - 1] + 1;
  }
  EXPECT_LT(back_to_back * 10, pairs);  // interleaved, not in bursts
}

TEST(EdgeGen, ValidateNamesTheOption) {
  EdgeConfig c;
  c.flows = 2;
  EXPECT_NE(c.validate().find("--flows"), std::string::npos);
  c = {};
  c.packets_per_flow = 3;
  EXPECT_NE(c.validate().find("--packets-per-flow"), std::string::npos);
}

}  // namespace
}  // namespace nfpark::trace
