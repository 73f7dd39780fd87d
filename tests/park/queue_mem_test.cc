// QueueMem (QUEUE-MEM) tests: functional equivalence with the baseline through a NAT-like
// rewrite, header drops (paper Q2), App. D's "drop the last header of every batch", explicit NF
// drops, id checks against replayed/forged headers and a too-small header array, reordering of
// returning headers, and no leak / no paused queue after drain().
#include "park/queue_mem.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <random>

#include "core/bytes.h"
#include "core/checksum.h"
#include "core/packet_builder.h"
#include "park/nf_endpoint.h"
#include "park/vec_buffer.h"

namespace nfpark::park {
namespace {

using testing::VecBuffer;
using testing::VecPkt;
using Pkts = std::vector<std::pair<std::vector<uint8_t>, uint64_t>>;  // bytes, packet id

// NAT-like rewrite of a packet's headers (IPv4 source address, L4 source port), checksums
// patched incrementally (RFC 1624) as a NAT does on header-only packets — never recomputed.
void nat_rewrite(PacketView& v) {
  const PacketLayout& L = v.layout;
  if (!L.ok() || !L.has_ports()) return;
  uint8_t* l4 = v.data + L.l4_off;
  uint8_t* ck = l4 + (L.is_tcp() ? 16 : 6);
  uint16_t c = load_be16(ck);
  const bool no_csum = L.is_udp() && c == 0;  // RFC 768: stays 0
  const uint16_t sport = load_be16(l4), nport = uint16_t(1024 + sport * 7);
  if (L.ip_version == 4) {
    uint8_t* ip = v.data + L.l3_off;
    const uint32_t old = load_be32(ip + 12), nsrc = 0xC6120001u + sport % 5;
    store_be32(ip + 12, nsrc);
    store_be16(ip + 10, csum_update32(load_be16(ip + 10), old, nsrc));
    c = csum_update32(c, old, nsrc);  // pseudo-header
  }
  store_be16(l4, nport);
  c = csum_update16(c, sport, nport);
  if (!no_csum) store_be16(ck, L.is_udp() && c == 0 ? 0xFFFF : c);
}

std::vector<uint8_t> baseline(std::vector<uint8_t> b) {
  PacketView v{b.data(), uint32_t(b.size()), uint32_t(b.size()), parse_packet(b.data(), b.size())};
  nat_rewrite(v);
  return b;
}

// Mixed traffic: UDP/TCP, IPv4/IPv6, VLAN, payloads around min_payload, a few ICMP echoes.
Pkts mixed(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  const uint32_t sizes[] = {0, 20, 63, 64, 200, 1000, 1458};
  Pkts out;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t f = rng() % 40, id = uint32_t(i + 1);
    PacketBuilder b;
    if (f % 9 == 0) b.vlan(7);
    if (f % 5 == 0)
      b.ipv6("2001:db8::1", "2001:db8::2");
    else
      b.ipv4(0x0A000001 + f, 0xC0A80001 + f % 3);
    if (f == 13)
      b.icmp_echo(uint16_t(f), uint16_t(i));
    else if (f % 2)
      b.tcp(uint16_t(1000 + f), 80, 0x18, uint32_t(i));
    else
      b.udp(uint16_t(2000 + f), 53);
    b.payload_size(sizes[rng() % 7] + (i % 3)).packet_id(id);
    out.push_back({b.build(), id});
  }
  return out;
}

Pkts udp_flows(size_t n, uint32_t flows, uint32_t payload = 1458) {
  Pkts out;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t f = uint32_t(i % flows);
    auto b = PacketBuilder().ipv4(0x0A000001 + f, 0xC0A80001).udp(uint16_t(3000 + f), 4789);
    out.push_back({b.payload_size(payload).packet_id(i + 1).build(), i + 1});
  }
  return out;
}

uint64_t payload_id(VecPkt* p) {
  const auto L = parse_packet(p->bytes.data(), uint32_t(p->bytes.size()));
  auto id = read_packet_id(p->bytes.data() + L.payload_off, L.captured_payload());
  return id ? *id : p->id;  // payloads under 12 B carry no id (never split: the handle's id)
}

// Switch + NF server + NF (the rewrite), burst by burst, with hooks for drops and reordering.
struct Rig {
  explicit Rig(const QueueMemConfig& c, bool notify = true)
      : qm(c), ep(TagFormat::kNfpark, notify) {}
  ~Rig() {
    for (auto* p : out) VecBuffer::free(p);
  }
  QueueMem<VecBuffer> qm;
  NfEndpoint<VecBuffer> ep;
  Emitter<VecPkt*> to_nf, to_out;
  std::vector<VecPkt*> back, out;
  std::function<bool(VecPkt*, const PacketView&)> nf_drop;  // NF decides to drop
  std::function<void(std::vector<VecPkt*>&)> reorder;       // order headers come back in
  uint64_t nf_freed_whole = 0, nf_dropped_headers = 0;

  void collect() {
    for (size_t i = 0; i < to_out.size(); ++i) out.push_back(to_out[i]);
    to_out.clear();
  }
  void run(const Pkts& in, size_t burst = 32, uint8_t ports = 1) {
    for (size_t i = 0; i < in.size(); i += burst) {
      for (size_t j = i; j < std::min(in.size(), i + burst); ++j)
        qm.split(VecBuffer::make(in[j].first, in[j].second), uint8_t(in[j].second % ports), to_nf,
                 to_out);
      nf_pass();
      if (reorder) reorder(back);
      for (auto* h : back) qm.merge(h, 0, to_out);
      back.clear();
      collect();
    }
  }
  void nf_pass() {
    for (size_t i = 0; i < to_nf.size(); ++i) {
      VecPkt* h = to_nf[i];
      PacketView v;
      uint32_t tag_at = 0;
      ep.view(h, v, tag_at);
      nat_rewrite(v);
      if (nf_drop && nf_drop(h, v)) {
        const bool header = v.wire_len > v.len;
        nf_dropped_headers += header;
        VecPkt* r = ep.on_drop(h, tag_at);
        if (r)
          back.push_back(r);
        else
          nf_freed_whole += !header;
      } else {
        back.push_back(h);
      }
    }
    to_nf.clear();
  }
  void finish() {
    qm.drain(to_out);
    collect();
  }
  // Every packet in = out + switch drops + whole packets the NF freed; nothing held.
  void expect_conserved(uint64_t in) const {
    const auto& c = qm.counters();
    EXPECT_EQ(c.rx, in);
    EXPECT_EQ(c.rx, c.out() + c.drops() + nf_freed_whole);
    EXPECT_EQ(c.out(), out.size());
    EXPECT_EQ(c.held_pkts, 0u);
    EXPECT_EQ(c.held_bytes, 0u);
    EXPECT_EQ(qm.paused_queues(), 0u);
    EXPECT_EQ(VecBuffer::live, int64_t(out.size()));
  }
  // Each output is byte-identical to the baseline of the packet its payload belongs to.
  void expect_matches_baseline(const Pkts& in) const {
    std::map<uint64_t, std::vector<uint8_t>> want;
    for (auto& [b, id] : in) want[id] = baseline(b);
    for (auto* p : out) {
      auto it = want.find(payload_id(p));
      ASSERT_NE(it, want.end()) << "payload without a known packet id";
      EXPECT_EQ(p->bytes, it->second) << "packet " << it->first;
      const auto L = parse_packet(p->bytes.data(), uint32_t(p->bytes.size()));
      EXPECT_TRUE(verify_checksums(p->bytes.data(), L));
    }
  }
};

QueueMemConfig small_cfg(uint16_t batch, uint16_t queues, uint16_t slices) {
  QueueMemConfig c;
  c.batch = batch;
  c.queues = queues;
  c.slices = slices;
  return c;
}

TEST(QueueMemConfig, DefaultsFollowP4AndValidate) {
  QueueMemConfig c;
  EXPECT_EQ(c.validate(), "");
  EXPECT_EQ(c.queues, 31);
  EXPECT_EQ(c.header_array, 94000u);
  EXPECT_EQ(c.max_held(), 31u * 20u);
  c.slices = 32;
  EXPECT_NE(c.validate().find("slices"), std::string::npos);
  c = QueueMemConfig{};
  c.batch = 0;
  EXPECT_NE(c.validate().find("batch"), std::string::npos);
}

TEST(QueueMem, EquivalentToBaselineWithNatRewrite) {
  VecBuffer::live = 0;
  const Pkts in = mixed(3000, 1);
  {
    QueueMemConfig c = small_cfg(8, 12, 3);
    c.ports = 2;
    Rig r(c);
    r.reorder = [](std::vector<VecPkt*>& v) { std::reverse(v.begin(), v.end()); };
    r.run(in, 32, 2);
    r.finish();
    const auto& k = r.qm.counters();
    EXPECT_EQ(r.out.size(), in.size());
    EXPECT_GT(k.splits, in.size() / 2);
    EXPECT_GT(k.not_split_small, 0u);
    EXPECT_GT(k.not_split_untaggable, 0u);  // ICMP
    EXPECT_EQ(k.drops(), 0u);
    EXPECT_GT(k.batches_complete, 0u);
    EXPECT_GT(k.batches_drained, 0u);  // partial batches at the end of traffic
    r.expect_conserved(in.size());
    r.expect_matches_baseline(in);
    // Byte-identical output multiset.
    std::vector<std::vector<uint8_t>> got, want;
    for (auto* p : r.out) got.push_back(p->bytes);
    for (auto& [b, id] : in) want.push_back(baseline(b));
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    EXPECT_EQ(got, want);
  }
  EXPECT_EQ(VecBuffer::live, 0);
}

class HeaderDrops : public ::testing::TestWithParam<int> {};

// Paper Q2: with x% of headers dropped by the NF, the output is (1 - x) of the input.
TEST_P(HeaderDrops, OutputIsOneMinusX) {
  VecBuffer::live = 0;
  const double x = GetParam() / 100.0;
  const Pkts in = udp_flows(20000, 64);
  {
    Rig r(QueueMemConfig{}, /*notify=*/false);
    std::mt19937 rng(7 + GetParam());
    std::bernoulli_distribution lose(x);
    r.nf_drop = [&](VecPkt*, const PacketView&) { return lose(rng); };
    r.run(in);
    r.finish();
    const auto& k = r.qm.counters();
    EXPECT_EQ(k.splits, in.size());
    EXPECT_NEAR(double(r.out.size()) / double(in.size()), 1.0 - x, 0.01);
    EXPECT_EQ(k.released, in.size() - r.nf_dropped_headers);
    EXPECT_EQ(k.drop_header_lost + k.stranded_at_exit, r.nf_dropped_headers);
    EXPECT_EQ(k.drop_id_mismatch, 0u);
    if (GetParam() == 0)
      EXPECT_EQ(k.recoveries, 0u);
    else
      EXPECT_GT(k.recoveries, 0u);
    EXPECT_LE(k.peak_pkts, QueueMemConfig{}.max_held());
    std::printf("x=%d%%: out/in=%.4f recoveries=%llu header_lost=%llu stranded=%llu peak=%llu\n",
                GetParam(), double(r.out.size()) / double(in.size()),
                (unsigned long long)k.recoveries, (unsigned long long)k.drop_header_lost,
                (unsigned long long)k.stranded_at_exit, (unsigned long long)k.peak_pkts);
    r.expect_conserved(in.size());
    r.expect_matches_baseline(in);
  }
  EXPECT_EQ(VecBuffer::live, 0);
}
INSTANTIATE_TEST_SUITE_P(QueueMem, HeaderDrops, ::testing::Values(0, 10, 30, 50));

// App. D: the NF drops the last header of every batch (batch 5): every batch is released by
// the next batch's HEAD (a recovery), the output is exactly 80%, and each HEAD that triggered a
// recovery leaves later with its own batch, merged with its own header.
TEST(QueueMem, AppendixDDropLastHeaderOfEveryBatch) {
  VecBuffer::live = 0;
  const Pkts in = udp_flows(1000, 16);
  {
    Rig r(small_cfg(5, 31, 1), /*notify=*/false);
    r.nf_drop = [](VecPkt* h, const PacketView& v) {
      return v.wire_len > v.len && load_be32(h->bytes.data() + v.layout.payload_off + 4) % 5 == 4;
    };
    r.run(in);
    r.finish();
    const auto& k = r.qm.counters();
    EXPECT_EQ(r.out.size(), 800u);
    EXPECT_EQ(k.batches_complete, 0u);
    EXPECT_EQ(k.recoveries, 200u - 31u);
    EXPECT_EQ(k.batches_recovered, 169u);
    EXPECT_EQ(k.batches_drained, 31u);
    EXPECT_EQ(k.drop_header_lost, 169u);
    EXPECT_EQ(k.stranded_at_exit, 31u);
    r.expect_conserved(in.size());
    r.expect_matches_baseline(in);
  }
  EXPECT_EQ(VecBuffer::live, 0);
}

// The NF drops a header and says so (tag drop flag): it counts as returned, so the batch
// completes without a recovery, and only that payload is dropped.
TEST(QueueMem, ExplicitDropsCompleteTheBatch) {
  VecBuffer::live = 0;
  Pkts in = udp_flows(400, 8);
  in.push_back({PacketBuilder()
                    .ipv4("10.0.0.1", "10.0.0.2")
                    .udp(5, 6)
                    .payload_size(10)
                    .packet_id(999)
                    .build(),
                999});  // small: goes whole and comes back
  {
    Rig r(small_cfg(10, 4, 1), /*notify=*/true);
    r.nf_drop = [](VecPkt* h, const PacketView&) { return h->id % 7 == 0; };
    r.run(in);
    r.finish();
    const auto& k = r.qm.counters();
    EXPECT_EQ(k.drop_explicit, 57u);  // ids 7, 14, ..., 399
    EXPECT_EQ(k.drop_explicit_whole, 0u);
    EXPECT_EQ(k.recoveries, 0u);
    EXPECT_EQ(k.batches_complete, 40u);
    EXPECT_EQ(r.out.size(), in.size() - 57u);
    r.expect_conserved(in.size());
    r.expect_matches_baseline(in);
  }
  EXPECT_EQ(VecBuffer::live, 0);
}

TEST(QueueMem, ExplicitDropOfWholePacket) {
  VecBuffer::live = 0;
  {
    Rig r(small_cfg(4, 2, 1));
    r.nf_drop = [](VecPkt*, const PacketView&) { return true; };
    r.run({{PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(5, 6).payload_size(10).build(), 1}});
    r.finish();
    EXPECT_EQ(r.qm.counters().drop_explicit_whole, 1u);
    r.expect_conserved(1);
  }
  EXPECT_EQ(VecBuffer::live, 0);
}

// Headers coming back in reverse order within each batch: payloads still leave in FIFO order.
TEST(QueueMem, ReorderedHeadersReleaseInFifoOrder) {
  VecBuffer::live = 0;
  const Pkts in = udp_flows(64, 1);
  {
    Rig r(small_cfg(8, 4, 1));
    r.reorder = [](std::vector<VecPkt*>& v) { std::reverse(v.begin(), v.end()); };
    r.run(in, 8);
    r.finish();
    ASSERT_EQ(r.out.size(), 64u);
    for (size_t i = 0; i < r.out.size(); ++i) EXPECT_EQ(payload_id(r.out[i]), i + 1);
    EXPECT_EQ(r.qm.counters().batches_complete, 8u);
    r.expect_matches_baseline(in);
  }
  EXPECT_EQ(VecBuffer::live, 0);
}

}  // namespace
}  // namespace nfpark::park
