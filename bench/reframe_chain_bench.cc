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
//   RCB_* environment variables override the trace's knobs (see main()) for exploration.
// Replay: timestamps are recomputed from the frame sizes at 100 Gb/s (the paper's rate), and
// Reframer runs in that virtual time (bursts of 32, now = arrival of a burst's last packet), so
// T_buff means what it means on a wire whatever this machine's speed. A heavy flow's packets are
// ~72 / 0.7 ~ 100 packets (~7 us) apart on average, a mouse's ~100k.
// Measured in thread CPU time. Per stream and rep: fresh instances of the baseline chain, of one
// chain per T_buff and of one Reframer per T_buff (each first sees the population, untimed);
// then the stream is cut into 20 chunks and run interleaved: baseline chunk i, then for each
// T_buff Reframer chunk i and its chain's chunk i. Slow swings of the machine's load hit both
// sides alike. A side's time = sum over chunks of the min over reps; [range] = per-rep ratios.
//   chain:    the chain over the packets in original order vs in Reframer's output order; both
//             read headers laid out back to back in their order (the receive ring), parse each
//             (the NF server's view), run bursts of 32 with now = arrival time; every instance
//             gets its own copy of the header bytes (NFs rewrite them);
//   reframer: Reframer's own cost on the arrival order: classify() (parse + flow hash) + push +
//             poll + flush (its output order is computed once beforehand; it is deterministic);
//   box:      Reframer on its own lcore in front of the NF lcore: a pipeline, the slower stage
//             bounds the rate: chain_orig / max(chain_ref, ref);
//   in-chain: Reframer and the chain on one lcore: chain_orig / (chain_ref + ref).
// SLF: packets / maximal same-flow runs, on the input and on Reframer's output.
#include <toml++/toml.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>

#include "bench_stats.h"
#include "core/parse.h"
#include "nf/registry.h"
#include "reframe/classify.h"
#include "reframe/flow_reorder.h"
#include "trace/generator.h"
#include "trace/rng.h"

using namespace nfpark;
using namespace nfpark::bench;

namespace {

constexpr uint32_t kHdr = 64;  // header bytes kept per packet (NFs never read past L4)
const char* kChain = "router,nat,firewall,counter";

// Env override for exploring trace shapes (unset: the documented defaults).
double knob(const char* name, double dflt) {
  const char* v = std::getenv(name);
  return v && *v ? std::atof(v) : dflt;
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

// Chain input in one order: headers copied back to back (untimed), as a receive ring holds them.
struct Ring {
  std::vector<uint8_t> work;
  std::vector<uint16_t> len, wire;
  std::vector<Nanos> now;
  void fill(const Pkts& p, const std::vector<uint32_t>& order, const std::vector<Nanos>& ts) {
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

// Runs ring positions [from, to) through the chain in bursts of 32; returns thread CPU seconds.
double run_chain(nf::Chain& chain, Ring& r, size_t from, size_t to, uint64_t& drops) {
  PacketView views[nf::kBurst];
  nf::Verdict verdicts[nf::kBurst];
  Stopwatch sw;
  for (size_t i = from; i < to; i += nf::kBurst) {
    const size_t n = std::min(nf::kBurst, to - i);
    for (size_t j = 0; j < n; ++j) {
      uint8_t* d = &r.work[(i + j) * kHdr];
      views[j].data = d;
      views[j].len = r.len[i + j];
      views[j].wire_len = r.wire[i + j];
      views[j].layout = parse_packet(d, r.len[i + j]);
      verdicts[j] = nf::Verdict::kPass;
    }
    chain.process({views, n}, {verdicts, n}, r.now[i + n - 1]);
    for (size_t j = 0; j < n; ++j) drops += verdicts[j] == nf::Verdict::kDrop;
  }
  return sw.cpu();
}

struct Env {
  toml::table cfg;
  Pkts warm_pkts;
  Stream warm;  // 100 Gb/s timestamps; the chain's `now` only ages flows
  Ring warm_ring;
  uint64_t drops = 0;
};

// A fresh chain that has seen the whole population once (untimed), and its input ring.
struct ChainRun {
  std::unique_ptr<nf::Chain> chain;
  Ring ring;
  ChainRun(Env& env, const Pkts& p, const std::vector<uint32_t>& order,
           const std::vector<Nanos>& ts) {
    std::string err;
    chain = nf::build_chain(kChain, &env.cfg, err);
    if (!chain) std::fprintf(stderr, "reframe_chain_bench: %s\n", err.c_str()), std::exit(1);
    env.warm_ring.fill(env.warm_pkts, env.warm.idx, env.warm.ts);  // NFs rewrote the last copy
    uint64_t d = 0;
    run_chain(*chain, env.warm_ring, 0, env.warm_ring.len.size(), d);
    ring.fill(p, order, ts);
  }
};

// Collects stream positions in emission order; with `at`, also the virtual time of each emission.
struct Collect {
  std::vector<uint32_t>* out;
  std::vector<Nanos>* at = nullptr;
  Nanos now = 0;
  void emit(uint32_t h) {
    out->push_back(h);
    if (at) at->push_back(now);
  }
  void coalesced(uint32_t) {}
};

// A fresh Reframer that has seen the population once (untimed), fed a stream chunk by chunk at
// virtual time in bursts of 32; `out` collects stream positions in emission order.
struct RefRun {
  reframe::FlowReorder<uint32_t> ref;
  const Stream& s;
  reframe::BypassRules rules;
  std::vector<uint32_t> out, sink;
  std::vector<Nanos>* emitted_at = nullptr;  // untimed runs only: emission time per packet
  uint64_t rx0 = 0, passed0 = 0;             // counters after the warm-up
  RefRun(Env& env, const Stream& st, Nanos t_buff) : ref(config(t_buff)), s(st) {
    Collect c{&sink};
    sink.reserve(env.warm.idx.size());
    pass(env.warm, 0, env.warm.idx.size(), c);
    ref.flush_all(env.warm.ts.back(), c);
    ref.probe_now();  // the warm-up (each flow once) is no evidence either way
    rx0 = ref.stats().rx;
    passed0 = ref.stats().passed;
    out.reserve(s.idx.size());
  }
  static reframe::ReorderConfig config(Nanos t_buff) {
    reframe::ReorderConfig rc;
    rc.t_buff = t_buff;
    // Self-bypass probes of 4096 packets, bypass periods 16x longer (the defaults' duty cycle,
    // shorter so that --quick's 128k timed packets hold a probe and a bypass period).
    rc.self_bypass.probe_packets = 4096;
    rc.self_bypass.bypass_packets = 65536;
    rc.self_bypass.enabled = knob("RCB_NO_SELF_BYPASS", 0) == 0;
    return rc;
  }
  // classify() + poll + push for positions [from, to); flush_all after the last one.
  double run(size_t from, size_t to) {
    Collect c{&out, emitted_at};
    Stopwatch sw;
    pass(s, from, to, c);
    c.now = s.ts.back();
    if (to == s.idx.size()) ref.flush_all(s.ts.back(), c);
    return sw.cpu();
  }
  void pass(const Stream& st, size_t from, size_t to, Collect& c) {
    reframe::PacketMeta meta[nf::kBurst];
    uint32_t h[nf::kBurst];
    for (size_t i = from; i < to; i += nf::kBurst) {
      const size_t n = std::min(nf::kBurst, to - i);
      const Nanos now = st.ts[i + n - 1];
      c.now = now;
      for (size_t j = 0; j < n; ++j) h[j] = uint32_t(i + j);
      ref.poll(now, c);
      if (ref.passing()) {  // self-bypassed: no classification, straight through
        ref.pass(std::span<const uint32_t>(h, n), c);
        continue;
      }
      for (size_t j = 0; j < n; ++j) {
        const uint32_t k = st.idx[i + j];
        const uint8_t* d = st.p->at(k);
        meta[j] = reframe::classify(d, parse_packet(d, st.p->len[k]), rules);
      }
      ref.push(std::span<const uint32_t>(h, n), std::span<const reframe::PacketMeta>(meta, n), now,
               c);
    }
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
  Chunks chain, ref;
};

// One stream: its baseline chain and its cases, run chunk by chunk interleaved (baseline chunk
// i, then each case's Reframer chunk i and chain chunk i), a fresh instance of each per rep.
struct Group {
  std::string name;
  const Stream* s;
  std::vector<Case> cases;
  Chunks base;
  double slf_in = 0;

  void prepare(Env& env, const Pkts& p) {
    slf_in = slf(p, s->idx);
    for (Case& c : cases) {  // Reframer's output order (deterministic: virtual time), untimed
      RefRun r(env, *s, c.t_buff);
      std::vector<Nanos> at;
      r.emitted_at = &at;
      r.run(0, s->idx.size());
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
      c.passed = double(r.ref.stats().passed - r.passed0) / double(r.ref.stats().rx - r.rx0);
      c.slf_out = slf(p, c.order);
    }
  }
  void rep(Env& env, const Pkts& p, size_t chunk) {
    ChainRun base_run(env, p, s->idx, s->ts);
    std::vector<std::unique_ptr<ChainRun>> runs;
    std::vector<std::unique_ptr<RefRun>> refs;
    for (Case& c : cases) {
      runs.push_back(std::make_unique<ChainRun>(env, p, c.order, c.ts));
      refs.push_back(std::make_unique<RefRun>(env, *s, c.t_buff));
      c.chain.t.emplace_back();
      c.ref.t.emplace_back();
    }
    base.t.emplace_back();
    const size_t n = s->idx.size();
    for (size_t from = 0; from < n; from += chunk) {
      const size_t to = std::min(n, from + chunk);
      base.t.back().push_back(run_chain(*base_run.chain, base_run.ring, from, to, env.drops));
      for (size_t k = 0; k < cases.size(); ++k) {
        cases[k].ref.t.back().push_back(refs[k]->run(from, to));
        cases[k].chain.t.back().push_back(
            run_chain(*runs[k]->chain, runs[k]->ring, from, to, env.drops));
      }
    }
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
  const int reps = quick ? 2 : 3;
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

  std::vector<Group> groups = {{"paper-like-100G", &local100, {}, {}, 0},
                               {"cannot-help-100G", &rr100, {}, {}, 0}};
  for (Group& g : groups)
    for (Nanos tb : {16, 64, 128})
      if (g.s != &rr100 || tb == 64) g.cases.push_back({tb * kMicro, {}, {}, 0, {}, {}});
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
    for (Group& g : groups) g.rep(env, *g.s->p, chunk(g));
    std::fprintf(stderr, "  rep %d/%d done\n", rep + 1, reps);
  }
  // Paper (Fig. 8, campus trace, input SLF ~1.2): output SLF 1.9/2.9/3.3 at 16/64/128 us.
  auto paper_slf = [](Nanos tb) {
    return tb == 16 * kMicro ? "1.9" : tb == 64 * kMicro ? "2.9" : tb == 128 * kMicro ? "3.3" : "-";
  };
  std::printf("  %-17s %6s %6s %5s %13s %6s %7s %7s %7s %-24s %-24s\n", "case", "T_buff", "SLFout",
              "paper", "lat p50/p99us", "passed", "base ns", "chain", "ref ns", "box (own lcore)",
              "in-chain (incl. cost)");
  std::vector<std::string> summary;
  for (const Group& g : groups) {
    const bool cannot = g.s == &rr100;
    const double np = double(g.s->idx.size());
    for (const Case& c : g.cases) {
      const double base = g.base.min_sum(), chain = c.chain.min_sum(), ref = c.ref.min_sum();
      // Box: Reframer on its own lcore, a pipeline stage: the slower of the two bounds the rate.
      // In-chain: Reframer's cost adds to the chain's on the NF lcore.
      Series box, in_chain;  // per-rep ratios
      for (size_t r = 0; r < g.base.t.size(); ++r) {
        box.add(g.base.rep_sum(r) / std::max(c.chain.rep_sum(r), c.ref.rep_sum(r)));
        in_chain.add(g.base.rep_sum(r) / (c.chain.rep_sum(r) + c.ref.rep_sum(r)));
      }
      const std::string t_box =
          ratio_text(base / std::max(chain, ref), box.min(), box.max(), box.n());
      const std::string t_in =
          ratio_text(base / (chain + ref), in_chain.min(), in_chain.max(), in_chain.n());
      char lat[32];
      std::snprintf(lat, sizeof lat, "%.1f/%.1f", c.lat_p50_us, c.lat_p99_us);
      std::printf("  %-17s %4lldus %6.2f %5s %13s %5.1f%% %7.1f %7.1f %7.1f %-24s %-24s\n",
                  g.name.c_str(), (long long)(c.t_buff / kMicro), c.slf_out,
                  cannot ? "-" : paper_slf(c.t_buff), lat, 100 * c.passed, base * 1e9 / np,
                  chain * 1e9 / np, ref * 1e9 / np, t_box.c_str(), t_in.c_str());
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
  if (env.drops)
    std::printf("  note: %llu packets dropped by the chain\n", (unsigned long long)env.drops);
  std::printf("\n");
  for (const auto& l : summary) std::printf("%s\n", l.c_str());
  return 0;
}
