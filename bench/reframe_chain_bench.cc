// reframe_chain_bench: the NF chain `router,nat,firewall,counter` (firewall: 10k generated rules)
// with and without Reframer (reframe::FlowReorder) in front of it, in one run (issue 7; DESIGN.md
// §4's third ratio; the paper: +60% in-chain, output SLF 1.2 -> 1.9/2.9/3.3 at 16/64/128 us).
//
//   reframe_chain_bench          default (population 1M flows, 1.2M timed packets, 3 reps)
//   reframe_chain_bench --quick  (population 307k flows, 600k timed packets, 2 reps; ~30 s)
//
// Traffic (src/trace generator as a library, `dc` sizes, UDP/TCP, one seed so flow f has one
// 5-tuple), shaped like the paper's campus trace (Reframer, NSDI'22 §5.1: input SLF ~1.2, many
// concurrent flows, most packets in a few heavy flows):
//   - warm-up: every flow of the population once. Each fresh chain and Reframer sees it untimed
//     first, so NAT, counter and Reframer tables hold the whole population (state > the LLC).
//   - paper-like: mice = 4 time-shifted copies (the paper's way of raising load; each copy its
//     own flow ids) of 25k live paced flows out of 75k/250k per copy, pareto:1.2 sizes, trains
//     of mean 1.2 (100k live mice); merged by time with 72 live heavy flows (out of 4096,
//     even sizes, paced, trains of mean 1.2) carrying 70% of the rate. Input SLF ~1.16. The
//     heavy flows' count is calibrated so that Reframer's output SLF lands on the paper's
//     (Fig. 8: 1.9/2.9/3.3 at 16/64/128 us); the campus trace itself is not replayable here.
//     Every flow of the trace stays active for its whole duration (tens of ms; any flow timeout
//     is longer), so the distinct flows printed are the active flows.
//   - cannot-help: 100k live flows paced evenly, one packet per train: a flow's next packet is
//     ~100k packets (ms) later, far beyond any T_buff: Reframer holds packets and gains nothing.
//   RCB_* environment variables override the trace's knobs (see main()) for exploration;
//   for profiling, RCB_SIDES (sides run, e.g. `i`), RCB_REPS, RCB_TBUFF (one T_buff, us),
//   RCB_NO_CANNOT=1 (no cannot-help case); RCB_RX_LLC=1 has each timed chunk's headers written
//   again just before it runs (untimed), as a NIC's DMA with DDIO leaves them in the last-level
//   cache (the default reads them cold from a ring of the whole stream). Under `valgrind
//   --tool=callgrind --instr-atstart=no` only the timed sides' calls are instrumented (everything
//   else runs uninstrumented, ~10x faster than under cachegrind), so their costs need no
//   subtraction.
// Replay: timestamps are recomputed from the frame sizes at 100 Gb/s (the paper's rate), and
// Reframer runs in that virtual time (bursts of 32, now = arrival of a burst's last packet), so
// T_buff means what it means on a wire whatever this machine's speed. A heavy flow's packets are
// ~72 / 0.7 ~ 100 packets (~7 us) apart on average, a mouse's ~100k.
// Measured in thread CPU time, with the product's code: park::NfBurst (the NF server's step:
// view, chain, verdicts) and park::ReframeStage (classify, push, poll), over ring positions as
// handles that, like mbufs, carry no parse (RingOps). Per stream and rep: fresh instances of the
// baseline step, and per T_buff of a step on Reframer's output order, a Reframer stage and a
// step with Reframer in-chain (each first sees the population, untimed); then the stream is cut
// into 20 chunks and run interleaved: baseline chunk i, then for each T_buff the stage's,
// the chain's and the in-chain step's chunk i. Slow swings of the machine's load hit all sides
// alike. A side's time = sum over chunks of the min over reps; [range] = per-rep ratios.
//   base:     the step (no Reframer) on the packets in arrival order, bursts of 32, now = the
//             newest arrival; each instance reads its own copy of the header bytes, laid out
//             back to back in its order (a receive ring; NFs rewrite them);
//   chain:    the same step on Reframer's output order (what the NF lcore behind a box runs);
//   reframer: the stage on the arrival order (what a box's lcore runs): parse + classify() +
//             push + poll + flush;
//   in-chain: the step with Reframer in-chain on the arrival order, as `nfpark run --reframe`
//             runs it: one loop, one parse per packet (the view takes classify()'s parse) and
//             full chain bursts while input keeps coming (park/nf_burst.h);
//   box:      Reframer on its own lcore in front of the NF lcore: a pipeline, the slower stage
//             bounds the rate: base / max(chain, reframer);
//   in-chain: base / in-chain. Before issue 17's in-chain work the bench reported
//             base / (chain + reframer), two separately parsed loops; it still prints that
//             ("as a sum") next to it.
// SLF: packets / maximal same-flow runs, on the input and on Reframer's output.
#include <toml++/toml.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#endif

#include "bench_stats.h"
#include "core/parse.h"
#include "nf/registry.h"
#include "park/nf_burst.h"
#include "park/reframe_stage.h"
#include "trace/generator.h"
#include "trace/rng.h"

using namespace nfpark;
using namespace nfpark::bench;

namespace {

constexpr uint32_t kHdr = 64;  // header bytes kept per packet (NFs never read past L4)
// RCB_CHAIN overrides it (exploration: one NF's share of the cost).
const char* const kChain = std::getenv("RCB_CHAIN") && *std::getenv("RCB_CHAIN")
                               ? std::getenv("RCB_CHAIN")
                               : "router,nat,firewall,counter";

// Env override for exploring trace shapes (unset: the documented defaults).
double knob(const char* name, double dflt) {
  const char* v = std::getenv(name);
  return v && *v ? std::atof(v) : dflt;
}

// RCB_SIDES (profiling: `perf`, cachegrind): the timed sides run, any of b(ase), c(hain),
// r(eframer), i(n-chain); unset: all. The others are skipped (their ratios are meaningless).
bool side(char c) {
  const char* v = std::getenv("RCB_SIDES");
  return !v || !*v || std::strchr(v, c);
}

// A timed side's call on ring positions [from, to) of `r`, instrumented under callgrind
// (--instr-atstart=no); RCB_RX_LLC writes the positions' headers again first, untimed but
// instrumented (callgrind simulates no cache outside instrumentation): subtract Ring::rx.
template <class R, class F>
double timed(R& r, size_t from, size_t to, F&& f) {
  CALLGRIND_START_INSTRUMENTATION;
  r.rx(from, to);
  const double t = f();
  CALLGRIND_STOP_INSTRUMENTATION;
  return t;
}

// Header-only packets: kHdr bytes each, back to back, with frame length and generator flow id.
struct Pkts {
  std::vector<uint8_t> hdr;
  std::vector<uint16_t> len, wire;
  std::vector<uint32_t> flow;
  size_t size() const { return len.size(); }
  const uint8_t* at(size_t i) const { return &hdr[i * kHdr]; }
  static Pkts generate(const trace::GenConfig& g) {
    trace::CopyMerger gen(g);
    return build(g.packets * g.copies, [&](Nanos& ts, const std::vector<uint8_t>*& fr,
                                           uint32_t& flow) { return gen.next(ts, fr, flow); });
  }
  // Several generators merged by time (a train of one taken whole, as CopyMerger does); each
  // generator is (config, copy): its flow ids start at copy * config.flows.
  static Pkts merge(std::vector<trace::Generator>& gens) {
    uint64_t total = 0;
    trace::Generator* cur = nullptr;
    return build(total, [&](Nanos& ts, const std::vector<uint8_t>*& fr, uint32_t& flow) {
      trace::Generator* best = cur && cur->in_train() && !cur->done() ? cur : nullptr;
      if (!best)
        for (trace::Generator& g : gens)
          if (!g.done() && (!best || g.peek() < best->peek())) best = &g;
      if (!best) return false;
      cur = best;
      return best->next(ts, fr, flow, total++);
    });
  }
  template <class Next>
  static Pkts build(uint64_t reserve, Next next) {
    Pkts p;
    p.hdr.reserve(reserve * kHdr);
    Nanos ts;
    const std::vector<uint8_t>* fr;
    uint32_t flow;
    while (next(ts, fr, flow)) {
      const PacketLayout L = parse_packet(fr->data(), uint32_t(fr->size()));
      const uint32_t h = std::min<uint32_t>(L.payload_off ? L.payload_off : kHdr, kHdr);
      p.hdr.insert(p.hdr.end(), fr->begin(), fr->begin() + kHdr);
      p.len.push_back(uint16_t(h));
      p.wire.push_back(uint16_t(fr->size()));
      p.flow.push_back(flow);
    }
    return p;
  }
};

// An arrival order over a Pkts and the arrival time of each position at one line rate.
struct Stream {
  const Pkts* p;
  std::vector<uint32_t> idx;
  std::vector<Nanos> ts;
  void retime(double gbps, Nanos start) {
    ts.resize(idx.size());
    double t = double(start);
    for (size_t k = 0; k < idx.size(); ++k) {
      ts[k] = Nanos(t);
      t += (p->wire[idx[k]] + 24) * 8.0 / gbps;  // preamble, FCS and gap: 24 B
    }
  }
};

double slf(const Pkts& p, const std::vector<uint32_t>& order) {
  size_t runs = 0;
  for (size_t i = 0; i < order.size(); ++i)
    runs += i == 0 || p.flow[order[i]] != p.flow[order[i - 1]];
  return runs ? double(order.size()) / double(runs) : 0;
}

// RCB_RX_LLC=1: before each timed chunk, its header bytes are written again (untimed), as a
// NIC's DMA with DDIO leaves a packet's first lines in the last-level cache just before the
// lcore reads them; unset (the default), every side reads its chunk from a ring of the whole
// stream (38 MB --quick, 77 MB default), cold: a header's first read is a memory miss.
const bool kRxLlc = knob("RCB_RX_LLC", 0) != 0;

// Chain input in one order: headers copied back to back (untimed), as a receive ring holds them.
struct Ring {
  std::vector<uint8_t> work;
  std::vector<uint16_t> len, wire;
  std::vector<Nanos> now;
  const Pkts* src = nullptr;
  const std::vector<uint32_t>* order = nullptr;
  // RCB_RX_LLC: positions [from, to) written again with the bytes fill() wrote (untimed; out
  // of line, so that callgrind counts it apart).
  [[gnu::noinline]] void rx(size_t from, size_t to) {
    if (!kRxLlc) return;
    for (size_t i = from; i < to; ++i) std::memcpy(&work[i * kHdr], src->at((*order)[i]), kHdr);
  }
  void fill(const Pkts& p, const std::vector<uint32_t>& order, const std::vector<Nanos>& ts) {
    src = &p;
    this->order = &order;
    work.resize(order.size() * kHdr);
    len.resize(order.size());
    wire.resize(order.size());
    now.resize(order.size());
    Nanos t = 0;
    for (size_t i = 0; i < order.size(); ++i) {
      std::memcpy(&work[i * kHdr], p.at(order[i]), kHdr);
      len[i] = p.len[order[i]];
      wire[i] = p.wire[order[i]];
      now[i] = t = std::max(t, ts[i]);
    }
  }
};

// The engine's buffer operations over a Ring (park/buffer_ops.h): a handle is a ring position.
// Like the dataplane's mbufs, a handle carries no parse (no take_layout / carry_layout), so the
// product's code (park::NfBurst, park::ReframeStage) runs here as it runs on mbufs. Header-only
// packets: the bytes past kHdr count as cut off. Parking's operations are never called (whole
// packets, no tag).
struct RingOps {
  using Handle = uint32_t;
  struct Lent {};
  static inline Ring* ring = nullptr;  // the ring the instance being run reads
  static Handle null() { return UINT32_MAX; }
  static uint8_t* data(Handle h) { return &ring->work[size_t(h) * kHdr]; }
  static uint32_t head_len(Handle h) { return ring->len[h]; }
  static uint32_t pkt_len(Handle h) { return ring->len[h]; }
  static uint32_t cut_len(Handle h) { return uint32_t(ring->wire[h] - ring->len[h]); }
  [[noreturn]] static void no_park() {
    std::fprintf(stderr, "reframe_chain_bench: a parking operation on whole packets\n");
    std::abort();
  }
  static Handle make_header(Handle, uint32_t, uint32_t, uint32_t, uint32_t, Lent*) { no_park(); }
  static uint8_t* open_gap(Handle, uint32_t, uint32_t) { no_park(); }
  static void close_gap(Handle, uint32_t, uint32_t) { no_park(); }
  static park::Rejoin rejoin(Handle, uint32_t, Lent&, Handle, uint32_t) { no_park(); }
  static bool carries(Handle, Handle) { return false; }
  static void trim(Handle, uint32_t) { no_park(); }
  static void free(Handle) {}
};
static_assert(park::BufferOps<RingOps> && !park::CarriesLayout<RingOps>);
using Step = park::NfBurst<RingOps>;
using Stage = park::ReframeStage<RingOps>;

// NfBurst's sink: the survivors would be sent; counted.
struct CountSink {
  uint64_t out = 0;
  void viewed(uint32_t, bool) {}
  void burst(uint32_t*, const uint32_t*, const bool*, uint16_t n, Nanos) { out += n; }
};

// Runs ring positions [from, to) through `step` in bursts of 32 read at ring.now (the newest
// arrival so far); the last chunk ends with a flush (Reframer in-chain). Thread CPU seconds.
double run_step(Step& step, Ring& r, size_t from, size_t to, bool last) {
  RingOps::ring = &r;
  CountSink sink;
  uint32_t h[nf::kBurst];
  Stopwatch sw;
  for (size_t i = from; i < to; i += nf::kBurst) {
    const size_t n = std::min(nf::kBurst, to - i);
    for (size_t j = 0; j < n; ++j) h[j] = uint32_t(i + j);
    step.run(h, uint16_t(n), r.now[i + n - 1], sink);
  }
  if (last) step.flush(r.now[to - 1], sink);
  return sw.cpu();
}

struct Env {
  toml::table cfg;
  Pkts warm_pkts;
  Stream warm;  // 100 Gb/s timestamps; the chain's `now` only ages flows
  Ring warm_ring;
};

reframe::ReorderConfig ref_config(Nanos t_buff) {
  reframe::ReorderConfig rc;
  rc.t_buff = t_buff;
  // Self-bypass probes of 4096 packets, bypass periods 16x longer (the defaults' duty cycle,
  // shorter so that --quick's timed packets hold a probe and a bypass period).
  rc.self_bypass.probe_packets = 4096;
  rc.self_bypass.bypass_packets = 65536;
  rc.self_bypass.enabled = knob("RCB_NO_SELF_BYPASS", 0) == 0;
  rc.max_held_packets = uint32_t(knob("RCB_MAX_HELD", rc.max_held_packets));
  rc.max_flows = uint32_t(knob("RCB_MAX_FLOWS", rc.max_flows));
  return rc;
}

// A fresh NF server step (chain, and Reframer in-chain when t_buff > 0) that has seen the whole
// population once (untimed; Reframer's self-bypass probe restarted after it), and its input ring.
struct StepRun {
  std::unique_ptr<Step> step;
  Ring ring;
  StepRun(Env& env, const Pkts& p, const std::vector<uint32_t>& order, const std::vector<Nanos>& ts,
          Nanos t_buff = 0) {
    std::string err;
    auto chain = nf::build_chain(kChain, &env.cfg, err);
    if (!chain) std::fprintf(stderr, "reframe_chain_bench: %s\n", err.c_str()), std::exit(1);
    step = std::make_unique<Step>(std::move(chain), std::nullopt, false);
    if (t_buff) step->set_reframer(ref_config(t_buff));
    env.warm_ring.fill(env.warm_pkts, env.warm.idx, env.warm.ts);  // NFs rewrote the last copy
    run_step(*step, env.warm_ring, 0, env.warm_ring.len.size(), true);
    step->reframe_probe_now();  // the warm-up (each flow once) is no evidence either way
    ring.fill(p, order, ts);
  }
};

// A fresh Reframer stage (the box's) that has seen the population once (untimed), fed a
// stream's ring chunk by chunk in bursts of 32; `out` gets ring positions in emission order.
struct StageRun {
  Stage stage;
  Ring ring;
  std::vector<uint32_t> out;
  std::vector<Nanos>* emitted_at = nullptr;  // untimed runs only: emission time per packet
  uint64_t rx0 = 0, passed0 = 0;             // counters after the warm-up
  bool keep = false;                         // keep `out` (else the box hands it on: cleared)
  StageRun(Env& env, const Pkts& p, const Stream& s, Nanos t_buff) : stage(ref_config(t_buff), {}) {
    env.warm_ring.fill(env.warm_pkts, env.warm.idx, env.warm.ts);
    out.reserve(std::max(env.warm.idx.size(), s.idx.size()));
    run(env.warm_ring, 0, env.warm_ring.len.size(), true);
    out.clear();
    stage.probe_now();
    rx0 = stage.reframer().stats().rx;
    passed0 = stage.reframer().stats().passed;
    ring.fill(p, s.idx, s.ts);
  }
  double run(size_t from, size_t to, bool last) { return run(ring, from, to, last); }
  double run(Ring& r, size_t from, size_t to, bool last) {
    RingOps::ring = &r;
    uint32_t h[nf::kBurst];
    Stopwatch sw;
    for (size_t i = from; i < to; i += nf::kBurst) {
      const size_t n = std::min(nf::kBurst, to - i);
      for (size_t j = 0; j < n; ++j) h[j] = uint32_t(i + j);
      stage.run(h, uint16_t(n), r.now[i + n - 1], out);
      if (emitted_at) emitted_at->resize(out.size(), r.now[i + n - 1]);
      if (!keep) out.clear();
    }
    if (last) {
      stage.flush(r.now[to - 1], out);
      if (emitted_at) emitted_at->resize(out.size(), r.now[to - 1]);
    }
    if (!keep) out.clear();
    return sw.cpu();
  }
};

// Chunk times of one side: t[rep][chunk], CPU seconds.
struct Chunks {
  std::vector<std::vector<double>> t;
  // Sum over chunks of the min over reps: min of N at chunk granularity (a preempted or
  // cache-thrashed chunk in one rep does not count).
  double min_sum() const {
    double s = 0;
    for (size_t c = 0; c < t[0].size(); ++c) {
      double m = t[0][c];
      for (const auto& r : t) m = std::min(m, r[c]);
      s += m;
    }
    return s;
  }
  double rep_sum(size_t r) const { return std::accumulate(t[r].begin(), t[r].end(), 0.0); }
};

struct Case {
  Nanos t_buff;
  std::vector<uint32_t> order;  // chain order (indices into the Pkts)
  std::vector<Nanos> ts;        // arrival time of each packet in that order
  double slf_out = 0;
  double lat_p50_us = 0, lat_p99_us = 0, passed = 0;  // latency added; fraction self-bypassed
  Chunks chain, ref, in_chain;  // box's chain, box's Reframer, Reframer + chain on one lcore
};

// One stream: its baseline chain and its cases, run chunk by chunk interleaved (baseline chunk
// i, then each case's Reframer chunk i, chain chunk i and in-chain chunk i), a fresh instance of
// each per rep.
struct Group {
  std::string name;
  const Stream* s;
  std::vector<Case> cases;
  Chunks base;
  double slf_in = 0;
  uint64_t drops = 0;

  void prepare(Env& env, const Pkts& p) {
    slf_in = slf(p, s->idx);
    for (Case& c : cases) {  // Reframer's output order (deterministic: virtual time), untimed
      StageRun r(env, p, *s, c.t_buff);
      std::vector<Nanos> at;
      r.emitted_at = &at;
      r.keep = true;
      r.run(0, s->idx.size(), true);
      std::vector<Nanos> lat;
      for (size_t k = 0; k < r.out.size(); ++k) {
        const uint32_t pos = r.out[k];
        c.order.push_back(s->idx[pos]);
        c.ts.push_back(s->ts[pos]);
        lat.push_back(at[k] - s->ts[pos]);
      }
      std::sort(lat.begin(), lat.end());
      c.lat_p50_us = double(lat[lat.size() / 2]) / 1e3;
      c.lat_p99_us = double(lat[lat.size() * 99 / 100]) / 1e3;
      const auto& st = r.stage.reframer().stats();
      c.passed = double(st.passed - r.passed0) / double(st.rx - r.rx0);
      c.slf_out = slf(p, c.order);
    }
  }
  void rep(Env& env, const Pkts& p, size_t chunk) {
    StepRun base_run(env, p, s->idx, s->ts);
    std::vector<std::unique_ptr<StepRun>> runs, ins;
    std::vector<std::unique_ptr<StageRun>> refs;
    for (Case& c : cases) {
      runs.push_back(std::make_unique<StepRun>(env, p, c.order, c.ts));
      refs.push_back(std::make_unique<StageRun>(env, p, *s, c.t_buff));
      ins.push_back(std::make_unique<StepRun>(env, p, s->idx, s->ts, c.t_buff));
      c.chain.t.emplace_back();
      c.ref.t.emplace_back();
      c.in_chain.t.emplace_back();
    }
    base.t.emplace_back();
    const size_t n = s->idx.size();
    for (size_t from = 0; from < n; from += chunk) {
      const size_t to = std::min(n, from + chunk);
      const bool last = to == n;
      auto step = [&](StepRun& run) {
        return timed(run.ring, from, to,
                     [&] { return run_step(*run.step, run.ring, from, to, last); });
      };
      base.t.back().push_back(side('b') ? step(base_run) : 1e-9);
      for (size_t k = 0; k < cases.size(); ++k) {
        cases[k].ref.t.back().push_back(
            side('r') ? timed(refs[k]->ring, from, to, [&] { return refs[k]->run(from, to, last); })
                      : 1e-9);
        cases[k].chain.t.back().push_back(side('c') ? step(*runs[k]) : 1e-9);
        cases[k].in_chain.t.back().push_back(side('i') ? step(*ins[k]) : 1e-9);
      }
    }
    drops += base_run.step->nf_drops;
  }
};

std::string ratio_text(double v, double lo, double hi, size_t n) {
  char b[80];
  std::snprintf(b, sizeof b, "%.2fx [%.2f-%.2f, N=%zu]", v, lo, hi, n);
  return b;
}

// The router's 200 routes (the paper's router: 200 routes): /32s to 150 of the generator's 254
// servers (192.168.0.x) and 50 prefixes elsewhere; the default route takes the rest.
std::string router_routes() {
  std::string r = "routes = [";
  for (int i = 0; i < 200; ++i) {
    char b[80];
    if (i < 150)
      std::snprintf(b, sizeof b, "%s\"192.168.0.%d/32 via 02:00:00:00:10:%02x\"", i ? ", " : "",
                    i + 1, i & 0xff);
    else
      std::snprintf(b, sizeof b, ", \"%d.%d.0.0/16 via 02:00:00:00:11:%02x\"", 20 + i % 50, i / 50,
                    i & 0xff);
    r += b;
  }
  return r + "]\n";
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = parse_quick(argc, argv,
                                 "usage: reframe_chain_bench [--quick]\n"
                                 "  NF chain with vs without Reframer, same run\n");
  // The paper-like trace: `copies` time-shifted copies (the paper's way of raising load), each
  // with `active` live flows out of `flows`, heavy-tailed (Pareto) flow sizes, paced flows that
  // send trains of mean 1.2 packets (input SLF ~1.2).
  const uint32_t copies = uint32_t(knob("RCB_COPIES", 4));
  const uint64_t active = uint64_t(knob("RCB_ACTIVE", 25'000));  // mice live per copy
  const uint64_t flows = uint64_t(knob("RCB_FLOWS", quick ? 75'000 : 250'000));  // mice per copy
  const uint64_t packets = uint64_t(knob("RCB_PACKETS", quick ? 600'000 : 1'200'000));  // total
  const double share = knob("RCB_SHARE", 0.7);  // heavy flows' share of the packets
  const uint64_t e_active = uint64_t(knob("RCB_E_ACTIVE", 72));
  const uint64_t e_flows = uint64_t(knob("RCB_E_FLOWS", 4096));
  const double alpha = knob("RCB_ALPHA", 1.2);
  const double train = knob("RCB_TRAIN", 1.2);
  const double e_train = knob("RCB_E_TRAIN", 1.2);
  const double e_alpha = knob("RCB_E_ALPHA", 0);
  const uint32_t e_copy = uint32_t((flows * copies + e_flows - 1) / e_flows);  // ids after mice
  const int reps = int(knob("RCB_REPS", quick ? 2 : 3));
  const uint64_t population = std::max<uint64_t>(
      (e_copy + 1) * e_flows, uint64_t(knob("RCB_POP", quick ? 300'000 : 1'000'000)));
  Env env;
  const std::string n = std::to_string(population);
  env.cfg = toml::parse("[nf.nat]\nexternal = [\"198.18.1.0/28\"]\nmax_flows = " + n +
                        "\n[nf.counter]\nmax_flows = " + n + "\n[nf.router]\n" + router_routes());
  trace::GenConfig g;
  g.flows = population;
  g.packets = population;
  g.size.kind = trace::SizeKind::kDc;
  g.proto = trace::GenProto::kMix;
  g.seed = 7;
  Stopwatch gen_sw;
  env.warm_pkts = Pkts::generate(g);
  env.warm.p = &env.warm_pkts;
  env.warm.idx.resize(population);
  std::iota(env.warm.idx.begin(), env.warm.idx.end(), 0u);
  env.warm.retime(100, 0);
  // Paper-like: `copies` time-shifted copies of the mice (population flows [k * flows,
  // (k + 1) * flows)), and heavy flows (ids from e_copy * e_flows) at `share` of the rate.
  g.pace = true;
  g.train = train;
  g.flow_sizes.kind = trace::FlowSizeKind::kPareto;
  g.flow_sizes.param = alpha;
  trace::GenConfig gm = g, ge = g;
  gm.flows = flows;
  gm.active = active;
  gm.packets = uint64_t(double(packets) * (1 - share)) / copies;
  gm.rate_gbps = 100 * (1 - share) / copies;
  ge.flows = e_flows;
  ge.train = e_train;
  if (e_alpha == 0)
    ge.flow_sizes = {};  // even: every heavy flow about as fast
  else
    ge.flow_sizes.param = e_alpha;
  ge.active = e_active;
  ge.packets = uint64_t(double(packets) * share);
  ge.rate_gbps = 100 * share;
  std::vector<trace::Generator> gens;
  for (uint32_t k = 0; k < copies; ++k) gens.emplace_back(gm, k);
  if (ge.packets) gens.emplace_back(ge, e_copy);
  const Pkts pkts = Pkts::merge(gens);
  g.active = active;
  g.flows = flows;
  // Cannot-help: as many packets of the same population, every flow live and paced evenly, one
  // packet per train: a flow's next packet is ~active * copies packets later (ms at 100 Gb/s).
  trace::GenConfig gc = g;
  gc.flows = population;
  gc.packets = packets;
  gc.active = active * copies;
  gc.train = 1;
  gc.flow_sizes = {};
  gc.copies = 1;
  const Pkts rr_pkts = Pkts::generate(gc);
  const Nanos start = env.warm.ts.back() + kMilli;
  Stream local100{&pkts}, rr100{&rr_pkts};
  local100.idx.resize(pkts.size());
  std::iota(local100.idx.begin(), local100.idx.end(), 0u);
  rr100.idx.resize(rr_pkts.size());
  std::iota(rr100.idx.begin(), rr100.idx.end(), 0u);
  local100.retime(100, start);
  rr100.retime(100, start);
  auto mean_wire = [](const Pkts& p) {
    double s = 0;
    for (uint16_t w : p.wire) s += w;
    return s / double(p.size());
  };
  auto distinct = [](const Pkts& p) {
    std::vector<uint32_t> f = p.flow;
    std::sort(f.begin(), f.end());
    return size_t(std::unique(f.begin(), f.end()) - f.begin());
  };
  std::printf(
      "reframe_chain_bench%s: chain %s, firewall 10k generated rules, router 200 routes\n"
      "  population %llu flows (warm-up, untimed; NAT/counter sized for it)\n"
      "  paper-like: %zu packets, %zu distinct flows: mice %u copies x (%llu flows, %llu live), "
      "pareto:%.2f sizes, train %.1f; heavy %llu flows (%llu live, %s sizes, train %.1f) at %.0f%% "
      "of the "
      "rate; paced; "
      "dc sizes (mean %.0f B)\n"
      "  cannot-help: %zu packets, %llu live flows paced evenly, %zu distinct flows\n"
      "  generated in %.1f s; SLF in: paper-like %.2f, cannot-help %.2f; %d reps, thread CPU "
      "time, min over reps\n",
      quick ? " --quick" : "", kChain, (unsigned long long)population, pkts.size(), distinct(pkts),
      copies, (unsigned long long)flows, (unsigned long long)active, alpha, train,
      (unsigned long long)e_flows, (unsigned long long)e_active, e_alpha == 0 ? "even" : "pareto",
      e_train, 100 * share, mean_wire(pkts), rr_pkts.size(), (unsigned long long)(active * copies),
      distinct(rr_pkts), gen_sw.wall(), slf(pkts, local100.idx), slf(rr_pkts, rr100.idx), reps);

  const Nanos only_tb = Nanos(knob("RCB_TBUFF", 0));  // profiling: one T_buff (us) only
  std::vector<Group> groups = {{"paper-like-100G", &local100, {}, {}, 0},
                               {"cannot-help-100G", &rr100, {}, {}, 0}};
  for (Group& g : groups)
    for (Nanos tb : {16, 64, 128})
      if ((g.s != &rr100 || tb == 64) && (only_tb == 0 || tb == only_tb) &&
          (g.s != &rr100 || !knob("RCB_NO_CANNOT", 0)))
        g.cases.push_back({tb * kMicro, {}, {}, 0, {}, {}});
  auto chunk = [](const Group& g) {  // 20 chunks, whole bursts
    return (g.s->idx.size() / 20 + 31) / 32 * 32;
  };
  for (Group& g : groups) g.prepare(env, *g.s->p);
  if (knob("RCB_SLF_ONLY", 0) != 0) {
    for (const Group& g : groups)
      for (const Case& c : g.cases)
        std::printf("%s %lld us: SLF %.2f -> %.2f, passed %.1f%%, lat %.1f/%.1f\n", g.name.c_str(),
                    (long long)(c.t_buff / kMicro), g.slf_in, c.slf_out, 100 * c.passed,
                    c.lat_p50_us, c.lat_p99_us);
    return 0;
  }
  for (int rep = 0; rep < reps; ++rep) {
    for (Group& g : groups)
      if (!g.cases.empty()) g.rep(env, *g.s->p, chunk(g));  // RCB_NO_CANNOT: no cannot-help
    std::fprintf(stderr, "  rep %d/%d done\n", rep + 1, reps);
  }
  // Paper (Fig. 8, campus trace, input SLF ~1.2): output SLF 1.9/2.9/3.3 at 16/64/128 us.
  auto paper_slf = [](Nanos tb) {
    return tb == 16 * kMicro ? "1.9" : tb == 64 * kMicro ? "2.9" : tb == 128 * kMicro ? "3.3" : "-";
  };
  std::printf("  %-17s %6s %6s %5s %13s %6s %7s %7s %7s %7s %-24s %-24s %s\n", "case", "T_buff",
              "SLFout", "paper", "lat p50/p99us", "passed", "base ns", "chain", "ref ns",
              "in-ch ns", "box (own lcore)", "in-chain (one loop)", "in-chain as a sum");
  std::vector<std::string> summary;
  uint64_t drops = 0;
  for (const Group& g : groups) {
    const bool cannot = g.s == &rr100;
    const double np = double(g.s->idx.size());
    drops += g.drops;
    for (const Case& c : g.cases) {
      const double base = g.base.min_sum(), chain = c.chain.min_sum(), ref = c.ref.min_sum(),
                   in = c.in_chain.min_sum();
      // Box: Reframer on its own lcore, a pipeline stage: the slower of the two bounds the rate.
      // In-chain: Reframer and the chain on the NF lcore, measured as the product runs them
      // (NfBurst with Reframer: one parse each); "as a sum": chain + box stage, the old method.
      Series box, in_chain, in_sum;  // per-rep ratios
      for (size_t r = 0; r < g.base.t.size(); ++r) {
        box.add(g.base.rep_sum(r) / std::max(c.chain.rep_sum(r), c.ref.rep_sum(r)));
        in_chain.add(g.base.rep_sum(r) / c.in_chain.rep_sum(r));
        in_sum.add(g.base.rep_sum(r) / (c.chain.rep_sum(r) + c.ref.rep_sum(r)));
      }
      const std::string t_box =
          ratio_text(base / std::max(chain, ref), box.min(), box.max(), box.n());
      const std::string t_in = ratio_text(base / in, in_chain.min(), in_chain.max(), in_chain.n());
      const std::string t_sum =
          ratio_text(base / (chain + ref), in_sum.min(), in_sum.max(), in_sum.n());
      char lat[32];
      std::snprintf(lat, sizeof lat, "%.1f/%.1f", c.lat_p50_us, c.lat_p99_us);
      std::printf("  %-17s %4lldus %6.2f %5s %13s %5.1f%% %7.1f %7.1f %7.1f %7.1f %-24s %-24s %s\n",
                  g.name.c_str(), (long long)(c.t_buff / kMicro), c.slf_out,
                  cannot ? "-" : paper_slf(c.t_buff), lat, 100 * c.passed, base * 1e9 / np,
                  chain * 1e9 / np, ref * 1e9 / np, in * 1e9 / np, t_box.c_str(), t_in.c_str(),
                  t_sum.c_str());
      for (const char* dep : {"box", "in-chain"}) {
        char line[240];
        std::snprintf(line, sizeof line,
                      "RATIO reframe %s %s T_buff=%lldus with/without %s, SLF %.2f -> %.2f, "
                      "latency p50 %.1f us p99 %.1f us",
                      dep, g.name.c_str(), (long long)(c.t_buff / kMicro),
                      (dep[0] == 'b' ? t_box : t_in).c_str(), g.slf_in, c.slf_out, c.lat_p50_us,
                      c.lat_p99_us);
        summary.push_back(line);
      }
    }
  }
  if (drops)
    std::printf("  note: %llu packets dropped by the chain (baseline)\n",
                (unsigned long long)drops);
  std::printf("\n");
  for (const auto& l : summary) std::printf("%s\n", l.c_str());
  return 0;
}
