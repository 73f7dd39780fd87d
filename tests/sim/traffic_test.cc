// Traffic: rate patterns, the flow picker (SLF, uniform shares, Zipf skew), synthetic frames
// (valid headers with the drawn size; full-bytes frames with valid checksums and ids), pcap
// replay at its own timing and looped, a source that offers exactly its pattern's load, and the
// mux that runs all sources from one event in the order of one event per source.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "core/bytes.h"
#include "core/checksum.h"
#include "core/packet_builder.h"
#include "sim/flow_picker.h"
#include "sim/frames.h"
#include "sim/rate_pattern.h"
#include "sim/sim_buffer.h"
#include "sim/traffic_mux.h"
#include "sim_fixtures.h"
#include "trace/pcap_writer.h"

namespace nfpark::sim {
namespace {

TEST(RatePattern, RampSquareRandom) {
  RatePattern r;
  r.kind = PatternKind::kRamp;
  r.from_gbps = 10;
  r.to_gbps = 100;
  r.ramp = 9 * kMs;
  EXPECT_DOUBLE_EQ(r.rate_at(0, 0), 10);
  EXPECT_DOUBLE_EQ(r.rate_at(3 * kMs, 0), 40);
  EXPECT_DOUBLE_EQ(r.rate_at(20 * kMs, 3), 100);
  r.kind = PatternKind::kSquare;
  r.high_gbps = 100;
  r.low_gbps = 10;
  r.period = 2 * kMs;
  EXPECT_DOUBLE_EQ(r.rate_at(kMs / 2, 0), 100);
  EXPECT_DOUBLE_EQ(r.rate_at(3 * kMs / 2, 0), 10);
  EXPECT_DOUBLE_EQ(r.rate_at(5 * kMs / 2, 0), 100);
  r.kind = PatternKind::kRandom;
  r.min_gbps = 10;
  r.max_gbps = 100;
  r.change = kMs;
  r.skew = 3;
  double sum = 0;
  for (int k = 0; k < 2000; ++k) {
    const double g = r.rate_at(Picos(k) * kMs + 5, uint16_t(k % 7));
    EXPECT_GE(g, 10);
    EXPECT_LE(g, 100);
    EXPECT_EQ(g, r.rate_at(Picos(k) * kMs + kMs - 1, uint16_t(k % 7))) << "constant in a period";
    sum += g;
  }
  // E[min + (max-min) u^(1/3)] = 10 + 90 * 3/4 = 77.5: higher rates favoured
  EXPECT_NEAR(sum / 2000, 77.5, 2.0);
  EXPECT_NE(r.rate_at(0, 0), r.rate_at(0, 1)) << "each port draws its own rate";
}

TEST(FlowPicker, SlfBurstsAndUniformShares) {
  FlowPicker p(50, 4, 0, 9);
  std::map<uint32_t, int> count;
  uint32_t prev = UINT32_MAX;
  for (int b = 0; b < 500; ++b) {
    const uint32_t f = p.next();
    for (int i = 1; i < 4; ++i) EXPECT_EQ(p.next(), f) << "bursts of SLF packets";
    EXPECT_NE(f, prev) << "the next burst is another flow";
    prev = f;
    count[f] += 4;
  }
  EXPECT_EQ(count.size(), 50u);
  for (auto& [f, n] : count) EXPECT_EQ(n, 40) << "uniform: every flow the same share per round";
}

TEST(FlowPicker, ZipfFavoursLowRanks) {
  FlowPicker p(1000, 1, 1.2, 3);
  int top = 0;
  for (int i = 0; i < 10000; ++i) top += p.next() < 10;
  EXPECT_GT(top, 4000) << "with s = 1.2 the 10 most popular of 1000 flows get most packets";
}

trace::GenConfig gen(uint32_t size, uint64_t flows = 20) {
  trace::GenConfig g;
  g.flows = flows;
  g.size = {trace::SizeKind::kFixed, size};
  g.proto = trace::GenProto::kMix;
  g.ipv6 = 0.3;
  return g;
}

TEST(SyntheticFrames, HeadersCarryTheDrawnSizeAndPortsNeverShareFlows) {
  std::string err;
  auto t = FlowTemplates::build(gen(700), 2, err);
  ASSERT_TRUE(t) << err;
  PacketPool pool;
  SyntheticFrames a(t, gen(700), 0, false), b(t, gen(700), 1, false);
  std::set<uint64_t> flows_a;
  for (int i = 0; i < 200; ++i) {
    Packet* p = pool.alloc();
    Picos gap;
    ASSERT_TRUE((i % 2 ? b : a).next(p, gap));
    EXPECT_EQ(gap, -1);
    EXPECT_EQ(p->len, 700u);
    const PacketLayout L = parse_packet(p->data(), p->head);
    ASSERT_TRUE(L.ok());
    EXPECT_EQ(p->head, L.payload_off) << "header-only record: the headers, the rest a length";
    EXPECT_EQ(L.ip_end, 700u) << "IP length says the whole frame";
    if (L.ip_version == 4) {
      EXPECT_EQ(ipv4_header_checksum(p->data() + L.l3_off, 20),
                load_be16(p->data() + L.l3_off + 10))
          << "valid IPv4 checksum";
    }
    if (i % 2 == 0) {
      flows_a.insert(p->flow);
    } else {
      EXPECT_FALSE(flows_a.count(p->flow));
    }
    pool.free(p);
  }
}

// Flow templates in one cache line a flow (IPv4/IPv6 UDP, IPv4 TCP) give the records the 192 B
// form gives: the same bytes up to byte 64, parse, flow-key hash, lengths and flow ids.
TEST(SyntheticFrames, OneLineTemplatesMakeTheSameRecordsAsFullTemplates) {
  for (const auto& [proto, ipv6, vlan, fits] :
       {std::tuple{trace::GenProto::kUdp, 0.0, false, true},
        std::tuple{trace::GenProto::kUdp, 1.0, false, true},
        std::tuple{trace::GenProto::kUdp, 1.0, true, false},
        std::tuple{trace::GenProto::kTcp, 0.0, true, true},
        std::tuple{trace::GenProto::kMix, 0.0, false, true},
        std::tuple{trace::GenProto::kTcp, 1.0, false, false}}) {
    trace::GenConfig g = gen(1000, 300);
    g.proto = proto;
    g.ipv6 = ipv6;
    g.vlan = vlan;
    g.size = {trace::SizeKind::kDc, 0};
    std::string err;
    auto small = FlowTemplates::build(g, 3, err);
    auto full = FlowTemplates::build(g, 3, err, false);
    ASSERT_TRUE(small && full) << err;
    EXPECT_EQ(!small->small.empty(), fits);
    EXPECT_TRUE(full->small.empty());
    for (bool bytes : {false, true}) {
      PacketPool pool(bytes ? 9216 : 192);
      SyntheticFrames a(small, g, 2, bytes), b(full, g, 2, bytes);
      for (int i = 0; i < 3000; ++i) {
        Packet* p = pool.alloc();
        Packet* q = pool.alloc();
        std::memset(p->data(), 0xA5, 128);  // what a reused record holds
        std::memset(q->data(), 0x5A, 128);
        Picos gap;
        ASSERT_TRUE(a.next(p, gap));
        ASSERT_TRUE(b.next(q, gap));
        ASSERT_EQ(p->head, q->head);
        ASSERT_EQ(p->len, q->len);
        ASSERT_EQ(p->flow, q->flow);
        ASSERT_EQ(0, std::memcmp(p->data(), q->data(), std::max(p->head, 64u))) << i;
        ASSERT_EQ(p->key_hash(), q->key_hash());
        PacketLayout lp, lq;
        ASSERT_EQ(SimBuffer::take_layout(p, lp), SimBuffer::take_layout(q, lq));
        EXPECT_EQ(std::tuple(lp.vlans, lp.ip_version, lp.l4_proto, lp.l3_off, lp.l4_off,
                             lp.payload_off, lp.ip_end, lp.captured),
                  std::tuple(lq.vlans, lq.ip_version, lq.l4_proto, lq.l3_off, lq.l4_off,
                             lq.payload_off, lq.ip_end, lq.captured));
        pool.free(p);
        pool.free(q);
      }
    }
  }
}

TEST(SyntheticFrames, FullBytesFramesAreValid) {
  std::string err;
  auto t = FlowTemplates::build(gen(300), 1, err);
  ASSERT_TRUE(t) << err;
  PacketPool pool(9216);
  SyntheticFrames s(t, gen(300), 0, true);
  for (int i = 0; i < 50; ++i) {
    Packet* p = pool.alloc();
    Picos gap;
    ASSERT_TRUE(s.next(p, gap));
    ASSERT_EQ(p->head, 300u);
    const PacketLayout L = parse_packet(p->data(), p->head);
    ASSERT_TRUE(L.ok());
    EXPECT_TRUE(read_packet_id(p->data() + L.payload_off, L.captured_payload()));
    // the L4 checksum verifies: recomputing over the frame with the stored value gives 0
    const uint32_t at = L.l4_off + (L.is_udp() ? 6 : 16);
    const uint16_t stored = load_be16(p->data() + at);
    store_be16(p->data() + at, 0);
    EXPECT_EQ(l4_checksum(p->data(), L), stored);
    pool.free(p);
  }
}

// Two 100 Gbps ports: what arrives on port 0 leaves on port 1, into a recording peer.
struct Forwarding {
  Engine e;
  PacketPool pool;
  testing::LambdaProgram prog;
  Switch sw{e, config()};
  testing::RecordingPeer out;
  Forwarding() {
    prog.in = [](Pass& pass, Packet* p) { pass.enqueue(p, 1, 0); };
    sw.set_program(&prog);
    sw.connect(1, &out, 1);
  }
  static SwitchConfig config() {
    SwitchConfig c;
    c.port_gbps = {100, 100};
    return c;
  }
};

TEST(TrafficSource, OffersItsPatternsLoad) {
  Forwarding f;
  Engine& e = f.e;
  PacketPool& pool = f.pool;
  Switch& sw = f.sw;
  testing::RecordingPeer& out = f.out;
  std::string err;
  auto t = FlowTemplates::build(gen(1000), 1, err);
  RatePattern pat;
  pat.gbps = 25;
  TrafficMux mux(e);
  mux.add(std::make_unique<TrafficSource>(
      sw, 0, std::make_unique<SyntheticFrames>(t, gen(1000), 0, false), pat, false, pool, nullptr));
  TrafficSource& src = mux.source(0);
  mux.start(0, kMs);
  e.run();
  // 25 Gbps of 1000 B frames + 24 B on the wire for 1 ms
  EXPECT_NEAR(double(src.sent()), 25e9 * 1e-3 / (1024 * 8), 1.0);
  EXPECT_EQ(out.got.size(), src.sent());
}

// What a run of several sources sees: every frame's (time, port) at the switch's ingress, and the
// ticks of another handler whose times coincide with frames (ties in the canonical order,
// sim/tie.h: the ticker's rank before or after the frames' ingress passes).
struct MuxLog {
  std::vector<std::pair<Picos, int>> seen;  // port, or -1 for a tick
};
struct Ticker final : EventHandler {
  Engine* e;
  MuxLog* log;
  Picos period;
  Picos until;
  void on_event(uint64_t) override {
    log->seen.emplace_back(e->now(), -1);
    if (e->now() + period < until) e->schedule(e->now() + period, this);
  }
};
// The reference: one engine event per source, as before the mux, each an ingress pass of its port.
struct PerSource final : EventHandler {
  Engine* e;
  std::vector<std::unique_ptr<TrafficSource>> src;
  void on_event(uint64_t i) override {
    if (src[i]->emit()) at(i);
  }
  void at(uint64_t i) {
    e->schedule_tie(src[i]->due(), sim::tie(Rank::kIngress, src[i]->port()), this, i);
  }
};

MuxLog run_sources(bool mux, int ports, Rank tick_rank) {
  Engine e;
  PacketPool pool;
  SwitchConfig c;
  c.port_gbps.assign(size_t(ports), 100);
  if (ports > 1) c.port_gbps[1] = 40;  // a slower port: its frames fall between the others'
  MuxLog log;
  testing::LambdaProgram prog;
  prog.in = [&](Pass& pass, Packet* p) {
    log.seen.emplace_back(e.now(), pass.port());
    p->pool()->free(p);
  };
  Switch sw(e, c);
  sw.set_program(&prog);
  std::string err;
  auto t = FlowTemplates::build(gen(1000), uint16_t(ports), err);
  RatePattern pat;
  pat.gbps = 100;
  // ticks every frame time of a 100 Gbps port (1024 B on the wire: 81.92 ns), on its frames' times
  Ticker tick{};
  tick.e = &e;
  tick.log = &log;
  tick.period = serialization(1024, 100);
  tick.until = 20 * kUs;
  tick.set_tie(tick_rank, 0);
  e.schedule(2 * tick.period + c.ingress_latency, &tick);
  auto make = [&](uint16_t i) {
    return std::make_unique<TrafficSource>(
        sw, i, std::make_unique<SyntheticFrames>(t, gen(1000), i, false), pat, false, pool,
        nullptr);
  };
  TrafficMux m(e);
  PerSource ref;
  ref.e = &e;
  for (uint16_t i = 0; i < ports; ++i) (mux ? m.add(make(i)) : ref.src.push_back(make(i)));
  if (mux) {
    m.start(0, 20 * kUs);
  } else {
    for (size_t i = 0; i < ref.src.size(); ++i)
      if (ref.src[i]->start(0, 20 * kUs)) ref.at(i);
  }
  e.run(7 * kUs);  // a run() limit inside a train of frames
  e.run();
  EXPECT_EQ(pool.live(), 0u);
  return log;
}

TEST(TrafficMux, RunsFramesInTheOrderOfOneEventPerSource) {
  for (Rank tick : {Rank::kPortMac, Rank::kTimer})
    for (int ports : {1, 2, 5, 14}) {
      const MuxLog per = run_sources(false, ports, tick), mux = run_sources(true, ports, tick);
      EXPECT_GT(per.seen.size(), 200u * size_t(ports));
      size_t ties = 0;  // a tick at the time of a frame: the order the tie ranks give
      for (size_t i = 1; i < per.seen.size(); ++i)
        ties += per.seen[i].first == per.seen[i - 1].first;
      EXPECT_GT(ties, 100u) << ports << " ports: the case must have ties to order";
      EXPECT_EQ(mux.seen, per.seen) << ports << " ports, tick rank " << int(tick);
    }
}

TEST(PcapFrames, OwnTimingLoopedAndOnSeveralPorts) {
  char path[] = "/tmp/nfpark_sim_test_XXXXXX.pcap";
  const int fd = mkstemps(path, 5);
  ASSERT_GE(fd, 0);
  close(fd);
  {
    trace::PcapWriter w;
    ASSERT_TRUE(w.open(path, trace::Precision::kNano));
    for (int i = 0; i < 4; ++i) {
      auto f = testing::udp_frame(200, uint16_t(1000 + i), uint64_t(i));
      // captured 100 of 200 bytes (a snaplen-cut capture): the wire length counts
      ASSERT_TRUE(w.write(Nanos(1000 * i), f.data(), 100, uint32_t(f.size())));
    }
    ASSERT_TRUE(w.close());
  }
  std::string err;
  auto t = LoadedTrace::load(path, err);
  std::remove(path);
  ASSERT_TRUE(t) << err;
  PcapFrames a(t, 0, 2), b(t, 1, 2);
  PacketPool pool;
  std::vector<Picos> gaps;
  std::set<uint64_t> flows_a;
  for (int i = 0; i < 8; ++i) {
    Packet* p = pool.alloc();
    Picos gap;
    ASSERT_TRUE(a.next(p, gap));
    EXPECT_EQ(p->len, 200u);
    EXPECT_EQ(p->head, 100u);
    gaps.push_back(gap);
    flows_a.insert(p->flow);
    pool.free(p);
    p = pool.alloc();
    ASSERT_TRUE(b.next(p, gap));
    EXPECT_FALSE(flows_a.count(p->flow)) << "the same capture on another port: other flows";
    pool.free(p);
  }
  Packet* p = pool.alloc();
  Picos gap;
  EXPECT_FALSE(a.next(p, gap)) << "two loops of four packets";
  pool.free(p);
  EXPECT_EQ(gaps, (std::vector<Picos>{-1, kUs, kUs, kUs, -1, kUs, kUs, kUs}));
}

// A capture's gap longer than simulated time holds (int64 picoseconds: 106 days; tcpdump's
// icmpv6.pcap has one of 280 days) is "never" within the run, not a wrapped number: 10^16 ns
// times 1000 wrapped negative, which the source took for a clock that went back, and sent the
// frame at once.
TEST(PcapFrames, GapsBeyondSimulatedTimeAreNever) {
  EXPECT_EQ(capture_gap(0, 5), 5 * kNs);
  EXPECT_EQ(capture_gap(5, 0), -1);
  EXPECT_EQ(capture_gap(0, Nanos(10'000'000'000'000'000)), kNever);
  EXPECT_EQ(capture_gap(INT64_MIN, INT64_MAX), kNever);
  char path[] = "/tmp/nfpark_sim_test_XXXXXX.pcap";
  const int fd = mkstemps(path, 5);
  ASSERT_GE(fd, 0);
  close(fd);
  {
    trace::PcapWriter w;
    ASSERT_TRUE(w.open(path, trace::Precision::kNano));
    for (Nanos ts : {Nanos(0), Nanos(1000), Nanos(10'000'000'000'001'000)}) {
      auto f = testing::udp_frame(200, 1000, 0);
      ASSERT_TRUE(w.write(ts, f.data(), uint32_t(f.size()), uint32_t(f.size())));
    }
    ASSERT_TRUE(w.close());
  }
  std::string err;
  auto t = LoadedTrace::load(path, err);
  std::remove(path);
  ASSERT_TRUE(t) << err;
  Forwarding fw;
  Engine& e = fw.e;
  PacketPool& pool = fw.pool;
  Switch& sw = fw.sw;
  testing::RecordingPeer& out = fw.out;
  TrafficMux mux(e);
  mux.add(std::make_unique<TrafficSource>(sw, 0, std::make_unique<PcapFrames>(t, 0, 1),
                                          RatePattern{}, true, pool, nullptr));
  mux.start(0, kSec);
  e.run();
  EXPECT_EQ(mux.source(0).sent(), 2u) << "the third frame is 116 days later";
  EXPECT_EQ(out.got.size(), 2u);
  // tcpdump's isakmp-various-oobr.pcap: the second record is 2.7 years before the first. The
  // gap wrapped to +79 days (the frame never came in a run of 1 s); it is a clock that went
  // back: no gap
  auto isakmp = LoadedTrace::load(NFPARK_TEST_DATA "/isakmp-various-oobr.pcap", err);
  ASSERT_TRUE(isakmp) << err;
  PcapFrames f(isakmp, 0, 1);
  std::vector<Picos> gaps;
  for (Picos g = 0; Packet* p = pool.alloc();) {
    const bool got = f.next(p, g);
    pool.free(p);
    if (!got) break;
    gaps.push_back(g);
  }
  EXPECT_EQ(gaps, (std::vector<Picos>{-1, -1}));
}

}  // namespace
}  // namespace nfpark::sim
