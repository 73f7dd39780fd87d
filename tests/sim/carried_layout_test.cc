// Parse once, carry: a simulator record's carried parse (core/carried_layout.h, SimBuffer's
// take_layout/carry_layout) is exactly what parse_packet gives its bytes — for the frames the
// synthetic sources make (IPv4/IPv6, TCP/UDP, VLAN, every size) and for the header and whole
// packets QUEUE-MEM and PayloadPark send to the NF — and every change to a record's bytes
// forgets it. A synthetic source's records also carry their flow key's hash (take_flow_hash),
// exactly FlowKey::hash() of their bytes, forgotten with the source's parse; QUEUE-MEM's split
// decides the same with it as without.
#include <gtest/gtest.h>

#include <vector>

#include "core/flow_key.h"
#include "core/packet_builder.h"
#include "nf/registry.h"
#include "park/nf_burst.h"
#include "park/payload_park.h"
#include "park/queue_mem.h"
#include "sim/frames.h"
#include "sim/sim_buffer.h"

namespace nfpark::sim {
namespace {

void expect_same(const PacketLayout& a, const PacketLayout& b) {
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.vlans, b.vlans);
  EXPECT_EQ(a.ip_version, b.ip_version);
  EXPECT_EQ(a.l4_proto, b.l4_proto);
  EXPECT_EQ(a.fragment, b.fragment);
  EXPECT_EQ(a.first_fragment, b.first_fragment);
  EXPECT_EQ(a.ethertype, b.ethertype);
  EXPECT_EQ(a.l3_off, b.l3_off);
  EXPECT_EQ(a.l4_off, b.l4_off);
  EXPECT_EQ(a.payload_off, b.payload_off);
  EXPECT_EQ(a.ip_end, b.ip_end);
  EXPECT_EQ(a.captured, b.captured);
}

// Takes p's carried parse (it must have one) and compares it with a fresh parse.
void expect_carries_its_parse(Packet* p) {
  PacketLayout carried;
  ASSERT_TRUE(SimBuffer::take_layout(p, carried));
  expect_same(carried, parse_packet(p->data(), p->head));
  PacketLayout again;
  EXPECT_FALSE(SimBuffer::take_layout(p, again)) << "taken once: the taker may rewrite bytes";
}

TEST(CarriedLayout, SyntheticFramesCarryExactlyTheirParse) {
  struct Case {
    trace::SizeSpec size;
    trace::GenProto proto;
    double ipv6;
    bool vlan, full;
  } cases[] = {
      {{trace::SizeKind::kFixed, 1500}, trace::GenProto::kUdp, 0, false, false},
      {{trace::SizeKind::kFixed, 64}, trace::GenProto::kTcp, 0.5, false, false},
      {{trace::SizeKind::kImix, 0}, trace::GenProto::kMix, 0.3, true, false},
      {{trace::SizeKind::kDc, 0}, trace::GenProto::kMix, 0.5, true, true},
  };
  for (const Case& c : cases) {
    trace::GenConfig g;
    g.flows = 64;
    g.size = c.size;
    g.proto = c.proto;
    g.ipv6 = c.ipv6;
    g.vlan = c.vlan;
    std::string err;
    auto t = FlowTemplates::build(g, 2, err);
    ASSERT_TRUE(t) << err;
    PacketPool pool(c.full ? 9216 : 192);
    SyntheticFrames src(t, g, 1, c.full);
    for (int i = 0; i < 300; ++i) {
      Packet* p = pool.alloc();
      Picos gap;
      ASSERT_TRUE(src.next(p, gap));
      SCOPED_TRACE(testing::Message() << "frame " << i << " len " << p->len);
      expect_carries_its_parse(p);
      pool.free(p);
    }
  }
}

// The source's carried flow hash (it must carry one) is its key's; taken once.
void expect_carries_its_flow_hash(Packet* p) {
  uint64_t h = 0;
  ASSERT_TRUE(SimBuffer::take_flow_hash(p, h));
  FlowKey k;
  ASSERT_TRUE(extract_flow_key(p->data(), parse_packet(p->data(), p->head), k));
  EXPECT_EQ(h, k.hash());
  EXPECT_FALSE(SimBuffer::take_flow_hash(p, h)) << "taken once";
}

trace::GenConfig hash_case(int i) {
  trace::GenConfig g;
  g.flows = 64;
  g.size = i % 2 ? trace::SizeSpec{trace::SizeKind::kImix, 0}
                 : trace::SizeSpec{trace::SizeKind::kFixed, 1500};
  g.proto = i == 0 ? trace::GenProto::kUdp : i == 1 ? trace::GenProto::kTcp : trace::GenProto::kMix;
  g.ipv6 = i >= 2 ? 0.5 : 0;
  g.vlan = i == 3;
  g.slf = uint32_t(1 + i);
  return g;
}

TEST(CarriedFlowHash, SyntheticFramesCarryTheirFlowKeysHash) {
  for (int i = 0; i < 4; ++i) {
    const trace::GenConfig g = hash_case(i);
    std::string err;
    auto t = FlowTemplates::build(g, 3, err);
    ASSERT_TRUE(t) << err;
    PacketPool pool;
    SyntheticFrames src(t, g, 2, false);
    for (int n = 0; n < 300; ++n) {
      Packet* p = pool.alloc();
      Picos gap;
      ASSERT_TRUE(src.next(p, gap));
      SCOPED_TRACE(testing::Message() << "case " << i << " frame " << n);
      expect_carries_its_flow_hash(p);
      pool.free(p);
    }
  }
}

TEST(CarriedFlowHash, GoesWithTheSourcesParse) {
  trace::GenConfig g = hash_case(0);
  std::string err;
  auto t = FlowTemplates::build(g, 1, err);
  ASSERT_TRUE(t) << err;
  PacketPool pool;
  SyntheticFrames src(t, g, 0, false);
  Picos gap;
  uint64_t h;
  PacketLayout L;
  Packet* p = pool.alloc();
  ASSERT_TRUE(src.next(p, gap));
  ASSERT_TRUE(SimBuffer::take_layout(p, L));
  EXPECT_FALSE(SimBuffer::take_flow_hash(p, h)) << "taking the parse forgets it";
  SimBuffer::carry_layout(p, L);
  EXPECT_FALSE(SimBuffer::take_flow_hash(p, h)) << "a stage's parse comes without it";
  pool.free(p);
  p = pool.alloc();
  EXPECT_FALSE(SimBuffer::take_flow_hash(p, h)) << "a new record carries none";
  ASSERT_TRUE(src.next(p, gap));
  ASSERT_NE(SimBuffer::open_gap(p, 14, 8), nullptr);
  EXPECT_FALSE(SimBuffer::take_flow_hash(p, h)) << "open_gap";
  pool.free(p);
  p = pool.alloc();
  ASSERT_TRUE(src.next(p, gap));
  SimBuffer::trim(p, 100);
  EXPECT_FALSE(SimBuffer::take_flow_hash(p, h)) << "trim";
  pool.free(p);
}

// QUEUE-MEM's split takes the carried hash: what it sends to the NF (headers and tags: slice,
// entry, id) is byte for byte what it sends when it hashes the key itself.
TEST(CarriedFlowHash, QueueMemSplitsAlikeWithAndWithoutIt) {
  for (int i = 0; i < 4; ++i) {
    const trace::GenConfig g = hash_case(i);
    std::string err;
    auto t = FlowTemplates::build(g, 2, err);
    ASSERT_TRUE(t) << err;
    park::QueueMemConfig c;
    c.ports = 2;
    c.queues = 16;
    c.slices = 7;
    c.batch = 4;
    c.header_array = 4096;
    PacketPool pool;
    std::vector<std::vector<uint8_t>> sent[2];
    for (int carried = 0; carried < 2; ++carried) {
      park::QueueMem<SimBuffer> qm(c);
      park::Emitter<Packet*> to_nf, to_out;
      SyntheticFrames src(t, g, 1, false);
      for (int n = 0; n < 400; ++n) {
        Packet* p = pool.alloc();
        Picos gap;
        ASSERT_TRUE(src.next(p, gap));
        if (!carried) p->key_hash() = 0;
        to_nf.clear();
        ASSERT_TRUE(qm.split(p, uint8_t(n % 2), to_nf, to_out));
        EXPECT_EQ(p->key_hash(), 0u) << "the split took it";
        for (size_t k = 0; k < to_nf.size(); ++k) {
          sent[carried].emplace_back(to_nf[k]->data(), to_nf[k]->data() + to_nf[k]->head);
          qm.merge(to_nf[k], 0, to_out);
        }
      }
      qm.nf_idle(to_out);
      qm.drain(to_out);
      for (size_t k = 0; k < to_out.size(); ++k) pool.free(to_out[k]);
      EXPECT_EQ(pool.live(), 0u);
    }
    ASSERT_EQ(sent[0].size(), sent[1].size());
    for (size_t k = 0; k < sent[0].size(); ++k)
      ASSERT_EQ(sent[0][k], sent[1][k]) << "case " << i << " packet " << k;
  }
}

TEST(CarriedLayout, EveryChangeToTheBytesForgetsIt) {
  PacketPool pool;
  const auto f = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").tcp(1, 2).frame_size(600).build();
  Packet* p = pool.make(f.data(), uint32_t(f.size()), uint32_t(f.size()));
  const PacketLayout L = parse_packet(p->data(), p->head);
  PacketLayout out;
  EXPECT_FALSE(SimBuffer::take_layout(p, out)) << "a new record carries nothing";
  SimBuffer::carry_layout(p, L);
  ASSERT_NE(SimBuffer::open_gap(p, L.payload_off, 24), nullptr);
  EXPECT_FALSE(SimBuffer::take_layout(p, out)) << "open_gap";
  SimBuffer::carry_layout(p, L);
  SimBuffer::close_gap(p, L.payload_off, 24);
  EXPECT_FALSE(SimBuffer::take_layout(p, out)) << "close_gap";
  SimBuffer::carry_layout(p, L);
  SimBuffer::trim(p, 100);
  EXPECT_FALSE(SimBuffer::take_layout(p, out)) << "trim";
  Packet* h = SimBuffer::make_header(p, L.payload_off, 24, L.payload_off, 0, nullptr);
  ASSERT_NE(h, nullptr);
  EXPECT_FALSE(SimBuffer::take_layout(h, out)) << "a header packet carries only what park says";
  SimBuffer::carry_layout(p, L);
  SimBuffer::Lent lent;
  ASSERT_EQ(SimBuffer::rejoin(p, L.payload_off, lent, h, L.payload_off), park::Rejoin::kOk);
  EXPECT_FALSE(SimBuffer::take_layout(p, out)) << "rejoin";
  // a layout that cannot be carried (not TCP/UDP) is not
  const auto icmp = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").icmp_echo(1, 1).build();
  Packet* q = pool.make(icmp.data(), uint32_t(icmp.size()), uint32_t(icmp.size()));
  SimBuffer::carry_layout(q, parse_packet(q->data(), q->head));
  EXPECT_FALSE(SimBuffer::take_layout(q, out));
  pool.free(p);
  pool.free(q);
}

// The frames a split sees: options, extension headers, VLANs, TCP options, small payloads.
std::vector<std::vector<uint8_t>> frames() {
  return {
      PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).frame_size(1500).build(),
      PacketBuilder()
          .vlan(7)
          .ipv4("10.0.0.1", "10.0.0.3")
          .ipv4_options(3)
          .tcp(5, 6, 0x18, 1, 0, 3)
          .frame_size(900)
          .build(),
      PacketBuilder()
          .vlan(7)
          .vlan(9, 0x88A8)
          .ipv6("2001:db8::1", "2001:db8::2")
          .ipv6_ext_hop_by_hop()
          .tcp(7, 8)
          .frame_size(1200)
          .build(),
      PacketBuilder().ipv6("2001:db8::1", "2001:db8::3").udp(9, 10).frame_size(100).build(),
  };
}

TEST(CarriedLayout, QueueMemsPacketsToTheNfCarryTheirParse) {
  PacketPool pool;
  park::QueueMemConfig c;
  c.ports = 2;
  c.queues = 8;
  c.slices = 2;
  c.batch = 4;
  c.header_array = 64;
  park::QueueMem<SimBuffer> qm(c);
  park::Emitter<Packet*> to_nf, to_out;
  const auto fs = frames();
  for (int round = 0; round < 3; ++round) {
    for (const auto& f : fs) {
      Packet* p = pool.make(f.data(), uint32_t(f.size()), uint32_t(f.size()));
      // round 1: the source's parse carried in; otherwise split parses
      if (round == 1) SimBuffer::carry_layout(p, parse_packet(p->data(), p->head));
      ASSERT_TRUE(qm.split(p, uint8_t(round % 2), to_nf, to_out));
    }
  }
  ASSERT_EQ(to_nf.size(), 3 * fs.size());
  size_t headers = 0;
  for (size_t i = 0; i < to_nf.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "packet " << i);
    headers += to_nf[i]->len < to_nf[i]->head + 100;  // header packets: a few bytes present
    expect_carries_its_parse(to_nf[i]);
  }
  EXPECT_GT(headers, 0u);
  for (size_t i = 0; i < to_nf.size(); ++i) qm.merge(to_nf[i], 0, to_out);
  qm.nf_idle(to_out);
  qm.drain(to_out);
  for (size_t i = 0; i < to_out.size(); ++i) pool.free(to_out[i]);
  EXPECT_EQ(pool.live(), 0u);
}

TEST(CarriedLayout, PayloadParksHeadersCarryTheirParse) {
  PacketPool pool;
  park::ParkConfig c;
  park::PayloadPark<SimBuffer> pp(c);
  for (const auto& f : frames()) {
    Packet* p = pool.make(f.data(), uint32_t(f.size()), uint32_t(f.size()));
    Packet* h = pp.split(p, 0);
    ASSERT_NE(h, nullptr);
    expect_carries_its_parse(h);
    Packet* m = pp.merge(h, 0);
    ASSERT_NE(m, nullptr);
    pool.free(m);
  }
  EXPECT_EQ(pool.live(), 0u);
}

// The chain's survivors carry its parse on (NFs rewrite fields, never the structure): still
// exactly the packet's parse after NATs, load balancers, routers and AES rewrote it.
struct CheckingSink {
  size_t n = 0;
  void viewed(Packet*, bool) {}
  void burst(Packet** p, const uint32_t*, const bool*, uint16_t k, Nanos) {
    for (uint16_t i = 0; i < k; ++i, ++n) {
      expect_carries_its_parse(p[i]);
      SimBuffer::free(p[i]);
    }
  }
};

TEST(CarriedLayout, TheChainsSurvivorsCarryTheirParse) {
  for (const char* spec : {"nat,lb,macswap", "router,aes", "firewall,nat,counter"}) {
    SCOPED_TRACE(spec);
    std::string err;
    auto chain = nf::build_chain(spec, nullptr, err);
    ASSERT_TRUE(chain) << err;
    park::NfBurst<SimBuffer> step(std::move(chain), std::nullopt, false);
    PacketPool pool(2048);
    CheckingSink sink;
    std::vector<Packet*> burst;
    for (int round = 0; round < 4; ++round)
      for (const auto& f : frames()) {
        Packet* p = pool.make(f.data(), uint32_t(f.size()), uint32_t(f.size()));
        if (round % 2) SimBuffer::carry_layout(p, parse_packet(p->data(), p->head));
        burst.push_back(p);
      }
    step.run(burst.data(), uint16_t(burst.size()), 1000, sink);
    EXPECT_GT(sink.n, 0u);
    EXPECT_EQ(pool.live(), 0u);
  }
}

}  // namespace
}  // namespace nfpark::sim
