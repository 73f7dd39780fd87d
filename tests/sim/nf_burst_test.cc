// park::NfBurst, the NF server's burst step both engines run (here on simulator records): the
// chain's drops freed or sent back as notices, survivors in order per chain burst, the chain's
// clock (trace time), Reframer's hand-off (flows fed to the chain together, flush at the end).
#include "park/nf_burst.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "nf/simple.h"
#include "park/reframe_stage.h"
#include "sim/sim_buffer.h"
#include "sim_fixtures.h"

namespace nfpark::sim {
namespace {

using testing::make_packet;

// Drops every packet whose wire length is odd; records the `now` it ran at and its burst sizes.
struct OddDrop final : nf::Nf {
  std::vector<Nanos>* nows;
  std::vector<size_t>* sizes;
  std::string_view name() const override { return "odd_drop"; }
  void process(std::span<PacketView> pkts, std::span<nf::Verdict> v, Nanos now) override {
    nows->push_back(now);
    sizes->push_back(pkts.size());
    for (size_t i = 0; i < pkts.size(); ++i)
      if (pkts[i].wire_len % 2) v[i] = nf::Verdict::kDrop;
  }
};

struct Sink {
  std::vector<uint64_t> out;  // seq of survivors, in order
  std::vector<uint16_t> bursts;
  uint32_t n_viewed = 0, header_only = 0, notices = 0;
  void viewed(Packet*, bool h) {
    ++n_viewed;
    header_only += h;
  }
  void burst(Packet** p, const uint32_t*, const bool* notice, uint16_t n, Nanos) {
    bursts.push_back(n);
    for (uint16_t i = 0; i < n; ++i) {
      out.push_back(p[i]->seq);
      notices += notice[i];
      SimBuffer::free(p[i]);
    }
  }
};

struct Rig {
  std::vector<Nanos> nows;
  std::vector<size_t> sizes;
  PacketPool pool{256};
  std::unique_ptr<park::NfBurst<SimBuffer>> step;
  Rig() {
    auto chain = std::make_unique<nf::Chain>();
    auto nf = std::make_unique<OddDrop>();
    nf->nows = &nows;
    nf->sizes = &sizes;
    chain->add(std::move(nf));
    step = std::make_unique<park::NfBurst<SimBuffer>>(std::move(chain), std::nullopt, true);
  }
};

TEST(NfBurst, ChainDropsAreFreedAndSurvivorsKeepTheirOrder) {
  Rig r;
  std::array<Packet*, 32> pkts;
  for (uint16_t i = 0; i < 32; ++i) pkts[i] = make_packet(r.pool, 100 + i, i);
  Sink s;
  r.step->run(pkts.data(), 32, 5000, s);
  EXPECT_EQ(s.n_viewed, 32u);
  EXPECT_EQ(s.header_only, 0u) << "untagged packets are whole";
  ASSERT_EQ(s.bursts, std::vector<uint16_t>{16});
  for (size_t i = 0; i < s.out.size(); ++i) EXPECT_EQ(s.out[i], 2 * i);
  EXPECT_EQ(r.step->nf_drops, 16u);
  EXPECT_EQ(r.step->endpoint().drop_freed, 16u) << "untagged: no notice, freed";
  EXPECT_EQ(s.notices, 0u);
  EXPECT_EQ(r.step->rx, 32u);
  EXPECT_EQ(r.nows, std::vector<Nanos>{5000});
  EXPECT_EQ(r.pool.live(), 0u);
}

TEST(NfBurst, TraceTimeIsTheNewestPacketsTime) {
  Rig r;
  r.step->use_trace_time(true);
  auto ts = [](Packet* p) { return Nanos(p->seq * 1000); };
  EXPECT_FALSE(r.step->clock(nullptr, 0, 777, ts)) << "no packet seen yet";
  std::array<Packet*, 3> pkts{make_packet(r.pool, 100, 4), make_packet(r.pool, 100, 9),
                              make_packet(r.pool, 100, 2)};
  EXPECT_EQ(r.step->clock(pkts.data(), 3, 777, ts), Nanos(9000));
  EXPECT_EQ(r.step->clock(nullptr, 0, 1 << 30, ts), Nanos(9000)) << "kept between polls";
  Sink s;
  r.step->run(pkts.data(), 3, 9000, s);
  EXPECT_EQ(r.step->flush_time(1 << 30), Nanos(9000));
  r.step->use_trace_time(false);
  EXPECT_EQ(r.step->clock(nullptr, 0, 777, ts), Nanos(777));
  EXPECT_EQ(r.pool.live(), 0u);
}

// Records whose trace time is their seq in microseconds (the dataplane's mbufs carry theirs).
struct TracedBuffer : SimBuffer {
  static Nanos trace_ts(Packet* p) { return Nanos(p->seq) * kMicro; }
};

TEST(NfBurst, ReplayingATraceTheChainRunsAtEachSegmentsOwnTime) {
  std::vector<Nanos> nows;
  std::vector<size_t> sizes;
  PacketPool pool{64};
  auto chain = std::make_unique<nf::Chain>();
  auto nf = std::make_unique<OddDrop>();
  nf->nows = &nows;
  nf->sizes = &sizes;
  chain->add(std::move(nf));
  park::NfBurst<TracedBuffer> step(std::move(chain), std::nullopt, true);
  step.use_trace_time(true);
  // 1 us, 2 us, then 5 ms (a sparse capture's jump), then a packet held behind it (3 us) and two
  // more within 1 ms of it: the held one meets the chain at its own time, not 5 ms.
  const std::vector<uint64_t> seqs{1, 2, 5000, 3, 900, 1004};
  std::vector<Packet*> pkts;
  for (uint64_t q : seqs) pkts.push_back(make_packet(pool, 100, q));
  EXPECT_EQ(step.clock(pkts.data(), uint16_t(pkts.size()), 0, TracedBuffer::trace_ts),
            Nanos(5000 * kMicro))
      << "the engine's clock stays the newest seen";
  Sink s;
  step.run(pkts.data(), uint16_t(pkts.size()), 5000 * kMicro, s);
  EXPECT_EQ(nows, (std::vector<Nanos>{2 * kMicro, 5000 * kMicro, 900 * kMicro, 1004 * kMicro}));
  EXPECT_EQ(sizes, (std::vector<size_t>{2, 1, 2, 1}));
  EXPECT_EQ(s.out, seqs) << "one sink burst per segment, input order kept";
  // Without trace time: one chain call at the engine's `now`.
  nows.clear();
  step.use_trace_time(false);
  pkts.clear();
  for (uint64_t q : seqs) pkts.push_back(make_packet(pool, 100, q));
  step.run(pkts.data(), uint16_t(pkts.size()), 7, s);
  EXPECT_EQ(nows, std::vector<Nanos>{7});
  EXPECT_EQ(pool.live(), 0u);
}

// A chain that takes sums only (forward) takes the engine's wire bytes when it gives them
// (run()'s wire_bytes: the dataplane's live traffic), and sums the packets itself otherwise and
// when replaying a trace (each segment its own sum).
TEST(NfBurst, AChainOfSumsTakesTheEnginesWireBytesUnlessSegmented) {
  PacketPool pool{64};
  auto chain = std::make_unique<nf::Chain>();
  chain->add(std::make_unique<nf::Forward>());
  park::NfBurst<TracedBuffer> step(std::move(chain), std::nullopt, true);
  auto bytes = [&] {
    std::map<std::string, uint64_t> c;
    step.chain().counters([&](std::string_view k, uint64_t v) { c[std::string(k)] = v; });
    return std::pair{c["forward.packets"], c["forward.bytes"]};
  };
  const std::vector<uint64_t> seqs{1, 2, 5000, 3};
  const uint64_t given = 12345;  // not the packets' sum: shows which one was counted
  Sink s;
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(round);
    step.use_trace_time(round == 2);
    std::vector<Packet*> pkts;
    for (uint64_t q : seqs) pkts.push_back(make_packet(pool, 100 + uint32_t(q % 7), q));
    const auto [p0, b0] = bytes();
    step.run(pkts.data(), uint16_t(pkts.size()), 5000 * kMicro, s, round == 1 ? nullptr : &given);
    const auto [p1, b1] = bytes();
    EXPECT_EQ(p1 - p0, 4u);
    uint64_t sum = 0;
    for (uint64_t q : seqs) sum += 100 + q % 7;
    EXPECT_EQ(b1 - b0, round == 0 ? given : sum);
    EXPECT_TRUE(step.passed_whole());
  }
  EXPECT_EQ(step.endpoint().whole, 12u);
  EXPECT_EQ(pool.live(), 0u);
}

TEST(NfBurst, ReframerFeedsTheChainFlowByFlowAndFlushReleasesAll) {
  Rig r;
  reframe::ReorderConfig rc;
  rc.t_buff = 100 * kMicro;
  rc.bypass_first_packet = false;
  r.step->set_reframer(rc);
  // Two flows interleaved, even lengths (nothing dropped): a b a b ...
  std::array<Packet*, 16> pkts;
  for (uint16_t i = 0; i < 16; ++i) {
    auto f = testing::udp_frame(100, uint16_t(i % 2 ? 2000 : 1000), i);
    pkts[i] = r.pool.make(f.data(), uint32_t(f.size()), uint32_t(f.size()));
    pkts[i]->seq = i;
  }
  Sink s;
  r.step->run(pkts.data(), 16, 0, s);
  EXPECT_TRUE(s.out.empty()) << "held for t_buff";
  EXPECT_EQ(r.step->held(), 16u);
  r.step->flush(10, s);
  ASSERT_EQ(s.out.size(), 16u);
  EXPECT_EQ(r.step->held(), 0u);
  // flow by flow: each flow's packets contiguous and in their order
  std::map<uint64_t, std::vector<uint64_t>> by_flow;
  int changes = 0;
  for (size_t i = 0; i < s.out.size(); ++i) {
    by_flow[s.out[i] % 2].push_back(s.out[i]);
    if (i && s.out[i] % 2 != s.out[i - 1] % 2) ++changes;
  }
  EXPECT_EQ(changes, 1);
  for (auto& [f, seqs] : by_flow) EXPECT_TRUE(std::is_sorted(seqs.begin(), seqs.end()));
  EXPECT_EQ(r.pool.live(), 0u);
}

// In-chain, while the port gives full bursts and Reframer holds packets, the chain runs full
// bursts of Reframer's releases: a partial one waits for the next call (held() counts it), and
// a call with a partial read (here an empty poll) or the flush runs it. Order and pools kept.
TEST(NfBurst, InChainTheChainRunsFullBurstsWhileInputKeepsComing) {
  reframe::ReorderConfig rc;
  rc.t_buff = 10 * kMicro;
  rc.bypass_first_packet = false;
  rc.self_bypass.enabled = false;
  Rig r;
  r.step->set_reframer(rc);
  Sink s;
  uint64_t seq = 0;
  std::array<Packet*, 32> pkts;
  // 32 packets a burst (even lengths: none dropped), a burst every 3 us, flows that start in
  // different rounds: batches fall due 10 us after they start, not in multiples of 32 packets.
  std::vector<uint16_t> flow_of;
  for (int round = 0; round < 7; ++round) {  // 224 packets: the rig's pool holds 256
    for (uint16_t i = 0; i < 32; ++i, ++seq) {
      const uint16_t flow = uint16_t(seq % (3 + round) + 7 * (round % 3));
      flow_of.push_back(flow);
      const auto f = testing::udp_frame(100 + 2 * (seq % 3), uint16_t(1000 + flow), seq);
      pkts[i] = r.pool.make(f.data(), uint32_t(f.size()), uint32_t(f.size()));
      pkts[i]->seq = seq;
    }
    r.step->run(pkts.data(), 32, round * 3 * kMicro, s);
  }
  ASSERT_FALSE(r.sizes.empty()) << "Reframer released packets";
  for (size_t b : r.sizes) EXPECT_EQ(b, 32u) << "full chain bursts while the port gives 32";
  const size_t ran = s.out.size();
  EXPECT_EQ(r.step->held() + ran, seq);
  r.step->run(pkts.data(), 0, 60 * kMicro, s);  // an empty poll: everything due runs now
  EXPECT_GT(s.out.size(), ran);
  EXPECT_EQ(r.step->held(), 0u) << "nothing left waiting once all is due";
  r.step->flush(1 * kSecond, s);
  EXPECT_EQ(s.out.size(), seq);
  std::map<uint64_t, std::vector<uint64_t>> by_flow;
  for (uint64_t q : s.out) by_flow[flow_of[q]].push_back(q);
  for (auto& [f, q] : by_flow) EXPECT_TRUE(std::is_sorted(q.begin(), q.end()));
  EXPECT_EQ(r.pool.live(), 0u);
}

// The box placement (park::ReframeStage on its own, its releases then fed to a step without
// Reframer, as dp/reframe_box.h does across lcores) gives exactly what the in-chain placement
// gives: same chain input order, same survivors, same Reframer counters — on a random stream of
// 40 flows with odd lengths (chain drops), timeouts, caps and a flush.
TEST(NfBurst, BoxPlacementGivesWhatInChainGives) {
  reframe::ReorderConfig rc;
  rc.t_buff = 20 * kMicro;
  rc.max_burst = 5;
  rc.max_held_packets = 40;
  rc.max_flows = 64;
  rc.self_bypass.enabled = false;
  Rig in_chain, box_side;
  in_chain.step->set_reframer(rc);
  park::ReframeStage<SimBuffer> box(rc, {});
  std::vector<Packet*> released;
  released.reserve(box.reserve_hint());
  std::mt19937_64 rng(7);
  Sink a, b;
  uint64_t seq = 0;
  for (int round = 0; round < 200; ++round) {
    const Nanos now = round * 3 * kMicro;
    const uint16_t n = uint16_t(rng() % 33);
    std::array<Packet*, 32> pa, pb;
    for (uint16_t i = 0; i < n; ++i, ++seq) {
      const uint32_t len = 100 + uint32_t(rng() % 9);
      const auto f = testing::udp_frame(len, uint16_t(1000 + rng() % 40), seq);
      pa[i] = in_chain.pool.make(f.data(), uint32_t(f.size()), uint32_t(f.size()));
      pb[i] = box_side.pool.make(f.data(), uint32_t(f.size()), uint32_t(f.size()));
      pa[i]->seq = pb[i]->seq = seq;
    }
    in_chain.step->run(pa.data(), n, now, a);
    box.run(pb.data(), n, now, released);  // the box lcore
    // The NF lcore, a burst at a time; in-chain, a partial chain burst waits for the next
    // releases while the port gave a full burst and Reframer holds packets (park/nf_burst.h),
    // so the box side here takes the same bursts to compare like with like.
    const size_t whole = n == 32 && box.held() ? released.size() / 32 * 32 : released.size();
    for (size_t i = 0; i < whole; i += 32)
      box_side.step->run(released.data() + i, uint16_t(std::min<size_t>(32, whole - i)), now, b);
    released.erase(released.begin(), released.begin() + ptrdiff_t(whole));
  }
  in_chain.step->flush(1 * kSecond, a);
  box.flush(1 * kSecond, released);
  for (size_t i = 0; i < released.size(); i += 32)
    box_side.step->run(released.data() + i, uint16_t(std::min<size_t>(32, released.size() - i)),
                       1 * kSecond, b);
  EXPECT_GT(in_chain.step->reframer()->stats().held, 100u) << "Reframer held packets";
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(in_chain.step->nf_drops, box_side.step->nf_drops);
  EXPECT_EQ(in_chain.step->reframer()->stats().slf_out(), box.reframer().stats().slf_out());
  EXPECT_EQ(in_chain.step->reframer()->stats().batches, box.reframer().stats().batches);
  EXPECT_EQ(in_chain.sizes, box_side.sizes) << "the chain saw the same bursts";
  EXPECT_EQ(box.held(), 0u);
  EXPECT_EQ(in_chain.pool.live(), 0u);
  EXPECT_EQ(box_side.pool.live(), 0u);
}

// Records what each view holds: its parse's status, its data and lengths.
struct Recorder final : nf::Nf {
  ViewNeed need;
  std::vector<ParseStatus>* status;
  std::vector<uint32_t>* wire;
  explicit Recorder(ViewNeed n) : need(n) {}
  std::string_view name() const override { return "recorder"; }
  ViewNeed reads() const override { return need; }
  void process(std::span<PacketView> pkts, std::span<nf::Verdict>, Nanos) override {
    for (const PacketView& v : pkts) {
      status->push_back(v.layout.status);
      wire->push_back(v.wire_len);
    }
  }
};

// A chain that reads no parse, on untagged packets: views without one — nothing parsed, a
// carried parse neither taken nor replaced — the same lengths and endpoint counts; with tags
// (the endpoint must find them) or a chain that reads the parse, views are parsed as before.
TEST(NfBurst, AChainThatReadsNoParseGetsViewsWithoutOne) {
  for (ViewNeed need : {ViewNeed::kLengths, ViewNeed::kEthernet, ViewNeed::kHeaders})
    for (bool tagged : {false, true}) {
      SCOPED_TRACE(::testing::Message() << int(need) << " tagged " << tagged);
      std::vector<ParseStatus> status;
      std::vector<uint32_t> wire;
      auto chain = std::make_unique<nf::Chain>();
      auto rec = std::make_unique<Recorder>(need);
      rec->status = &status;
      rec->wire = &wire;
      chain->add(std::move(rec));
      park::NfBurst<SimBuffer> step(
          std::move(chain), tagged ? std::optional(park::TagFormat::kNfpark) : std::nullopt, true);
      PacketPool pool{64};
      std::array<Packet*, 8> pkts;
      for (uint16_t i = 0; i < 8; ++i) {
        pkts[i] = make_packet(pool, 100 + i, i);
        if (i % 2) SimBuffer::carry_layout(pkts[i], parse_packet(pkts[i]->data(), pkts[i]->head));
      }
      struct Keep {
        std::vector<Packet*> out;
        void viewed(Packet*, bool) {}
        void burst(Packet** p, const uint32_t*, const bool*, uint16_t n, Nanos) {
          for (uint16_t i = 0; i < n; ++i) out.push_back(p[i]);
        }
      } sink;
      step.run(pkts.data(), 8, 1000, sink);
      ASSERT_EQ(sink.out.size(), 8u);
      EXPECT_EQ(step.endpoint().whole, 8u);
      const bool unparsed = need != ViewNeed::kHeaders && !tagged;
      for (uint16_t i = 0; i < 8; ++i) {
        EXPECT_EQ(status[i] == ParseStatus::kOk, !unparsed) << i;
        EXPECT_EQ(wire[i], 100u + i);
        PacketLayout L;
        // parsed: every survivor carries the chain's parse; unparsed: what it carried before
        EXPECT_EQ(SimBuffer::take_layout(sink.out[i], L), !unparsed || i % 2 == 1) << i;
        pool.free(sink.out[i]);
      }
      EXPECT_EQ(pool.live(), 0u);
    }
}

// A chain none of whose NFs drops (Chain::may_drop() false: forward, macswap) takes the short
// step on untagged packets: the sink gets the burst as it came, no tags, no notices, and
// passed_whole() holds; its counts are those of the per-packet step. Mixed with an NF that
// drops (OddDrop), the chain may drop: passed_whole() holds only for a burst nothing left. A
// chain of forwards alone (Chain::counts_only()) takes the burst's sums, no views: the same.
TEST(NfBurst, AChainThatCannotDropPassesItsBurstWhole) {
  for (int kind = 0; kind < 4; ++kind) {  // forward,macswap / odd_drop,forward / same, no odd /
                                          // forward alone
    SCOPED_TRACE(kind);
    std::vector<Nanos> nows;
    std::vector<size_t> sizes;
    auto chain = std::make_unique<nf::Chain>();
    if (kind == 1 || kind == 2) {
      auto odd = std::make_unique<OddDrop>();
      odd->nows = &nows;
      odd->sizes = &sizes;
      chain->add(std::move(odd));
    }
    chain->add(std::make_unique<nf::Forward>());
    if (kind == 0) chain->add(std::make_unique<nf::MacSwap>());
    EXPECT_EQ(chain->may_drop(), kind == 1 || kind == 2);
    EXPECT_EQ(chain->counts_only(), kind == 3);
    park::NfBurst<SimBuffer> step(std::move(chain), std::nullopt, true);
    PacketPool pool{64};
    std::array<Packet*, 32> pkts, in;
    std::array<uint32_t, 32> lens;
    uint64_t kept = 0, kept_bytes = 0;
    for (uint16_t i = 0; i < 32; ++i) {
      const uint32_t len = 100 + (kind == 2 ? 2 * i : i);  // kind 2: every length even
      in[i] = pkts[i] = make_packet(pool, len, i);
      lens[i] = len;
      if (len % 2 == 0 || kind == 0 || kind == 3) ++kept, kept_bytes += len;
    }
    struct Keep {
      std::vector<Packet*> out;
      uint32_t tags = 0, notices = 0, seen = 0;
      void viewed(Packet*, bool header_only) { seen += 1 + header_only; }
      void burst(Packet** p, const uint32_t* tag_at, const bool* notice, uint16_t n, Nanos) {
        for (uint16_t i = 0; i < n; ++i) {
          out.push_back(p[i]);
          tags += tag_at[i] != 0;
          notices += notice[i];
        }
      }
    } sink;
    const uint32_t rounds = kind == 1 ? 1 : 2;  // twice: the short step's verdicts stay kPass
    for (uint32_t round = 0; round < rounds; ++round) {
      if (round) {
        for (Packet* p : sink.out) pool.free(p);
        sink.out.clear();
        for (uint16_t i = 0; i < 32; ++i) in[i] = pkts[i] = make_packet(pool, lens[i], i);
      }
      step.run(pkts.data(), 32, 1000, sink);
      ASSERT_EQ(sink.out.size(), kept);
      EXPECT_EQ(step.passed_whole(), kind != 1);
      uint64_t out_bytes = 0;
      for (size_t i = 0, j = 0; i < 32; ++i)
        if (kind != 1 || lens[i] % 2 == 0) {
          EXPECT_EQ(sink.out[j++], in[i]) << "in order";  // (dropped ones are freed)
          out_bytes += lens[i];
        }
      EXPECT_EQ(out_bytes, kept_bytes);
      EXPECT_EQ(sink.tags + sink.notices, 0u);
    }
    EXPECT_EQ(step.rx, 32u * rounds);
    EXPECT_EQ(sink.seen, 32u * rounds);  // each packet viewed once, whole
    EXPECT_EQ(step.nf_drops, (32 - kept) * rounds);
    EXPECT_EQ(step.endpoint().whole, 32u * rounds);
    std::map<std::string, uint64_t> c;
    step.chain().counters([&](std::string_view k, uint64_t v) { c[std::string(k)] = v; });
    EXPECT_EQ(c["forward.packets"], kept * rounds);
    EXPECT_EQ(c["forward.bytes"], kept_bytes * rounds);
    if (kind == 0) {
      EXPECT_EQ(c["macswap.packets"], 32u * rounds);
    }
    for (Packet* p : sink.out) pool.free(p);
    EXPECT_EQ(pool.live(), 0u);
  }
}

}  // namespace
}  // namespace nfpark::sim
