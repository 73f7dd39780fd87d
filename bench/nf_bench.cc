// nf_bench: ns/packet and Mpps of each shallow NF and of the papers' chains on header-only
// packets of 1500 B frames, at 1k and 1M flows and spatial locality factor (SLF) 1 and 8, plus
// FastClick's comparison chain at 100k flows, a flow-table lookup micro-benchmark, and the
// run-aware sweep: run-aware vs per-packet chains at SLF 1/2/4/8 (RATIO lines).
//
//   nf_bench            full run (< 2 min)       nf_bench --quick   (< 15 s, 1k and 100k flows)
//   nf_bench --runs     only the run-aware sweep (1k and 1M flows; add --quick: 1k and 100k)
//   (CPU time is what is reported; wall time grows with the machine's load, both are printed)
//
// Method. Flows come from the trace generator (src/trace: UDP/TCP mix, IPv4, 1500 B frames);
// only each flow's headers (<= 64 B) are kept, with wire_len = 1500. A run replays a sequence of
// bursts of `slf` back-to-back packets of one flow, flows in a random order (SLF 1: every packet
// of another flow than the one before). The headers of the whole sequence are laid out back to
// back in memory, like a receive ring; per packet the loop parses the headers (what an NF server
// does on receive), then the NF or chain runs on bursts of 32 with a virtual clock advancing at
// 100 Gb/s line rate. Every NF first sees every
// flow once (warm-up: tables hold all flows), then the timed pass runs. Times are the thread's
// CPU time (CLOCK_THREAD_CPUTIME_ID): on a shared machine wall time counts other processes. Ratios
// are against `forward` (same flows and SLF, same run), and SLF 8 against SLF 1.
#include <toml++/toml.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "bench_stats.h"
#include "core/flow_key.h"
#include "core/parse.h"
#include "nf/flow_table.h"
#include "nf/registry.h"
#include "trace/generator.h"
#include "trace/rng.h"

using namespace nfpark;
using namespace nfpark::nf;

namespace {

// CPU time of this thread: the machine is shared, so wall time would count other processes.
double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

constexpr uint32_t kHdr = 64;
constexpr uint32_t kWire = 1500;

struct Flows {
  std::vector<uint8_t> hdr;  // kHdr bytes per flow
  std::vector<uint32_t> len;
  size_t n = 0;
};

Flows make_flows(size_t n) {
  trace::GenConfig g;
  g.flows = n;
  g.packets = n;  // uniform popularity: every flow exactly once
  g.size.fixed = kWire;
  g.proto = trace::GenProto::kMix;
  g.seed = 7;
  trace::Generator gen(g);
  Flows f;
  f.n = n;
  f.hdr.assign(n * kHdr, 0);
  f.len.assign(n, 0);
  Nanos ts;
  const std::vector<uint8_t>* frame;
  uint32_t flow;
  while (gen.next(ts, frame, flow)) {
    PacketLayout L = parse_packet(frame->data(), uint32_t(frame->size()));
    uint32_t h = std::min<uint32_t>(L.payload_off ? L.payload_off : kHdr, kHdr);
    std::memcpy(&f.hdr[size_t(flow) * kHdr], frame->data(), h);
    f.len[flow] = h;
  }
  return f;
}

// Sequence of flow indices: bursts of `slf` packets of one flow, flows in a random order.
std::vector<uint32_t> make_sequence(size_t flows, uint32_t slf, size_t packets, uint64_t seed) {
  std::vector<uint32_t> perm(flows);
  std::iota(perm.begin(), perm.end(), 0);
  trace::Rng rng(seed);
  for (size_t i = flows; i > 1; --i) std::swap(perm[i - 1], perm[rng.next() % i]);
  std::vector<uint32_t> seq;
  seq.reserve(packets);
  for (size_t b = 0; seq.size() < packets; ++b)
    for (uint32_t j = 0; j < slf && seq.size() < packets; ++j) seq.push_back(perm[b % flows]);
  return seq;
}

// A replayable sequence of header-only packets laid out back to back (kHdr bytes each), as a
// receive ring would present them: NFs rewrite them in place, reset() restores them.
struct Packets {
  std::vector<uint8_t> pristine, work;
  std::vector<uint32_t> len;

  Packets(const Flows& f, const std::vector<uint32_t>& seq)
      : pristine(seq.size() * kHdr), len(seq.size()) {
    for (size_t i = 0; i < seq.size(); ++i) {
      std::memcpy(&pristine[i * kHdr], &f.hdr[size_t(seq[i]) * kHdr], kHdr);
      len[i] = f.len[seq[i]];
    }
    work = pristine;
  }
  void reset() { std::memcpy(work.data(), pristine.data(), work.size()); }
  size_t size() const { return len.size(); }
};

struct Runner {
  std::vector<PacketView> views = std::vector<PacketView>(kBurst);
  std::vector<Verdict> verdicts = std::vector<Verdict>(kBurst);
  Nanos now = 0;
  uint64_t passed = 0;

  // Runs the packets through `chain` in bursts of 32, parsing each header first; returns CPU s.
  double run(Chain& chain, Packets& p) {
    p.reset();
    double t0 = cpu_seconds();
    for (size_t i = 0; i < p.size(); i += kBurst) {
      size_t n = std::min<size_t>(kBurst, p.size() - i);
      for (size_t j = 0; j < n; ++j) {
        uint8_t* d = &p.work[(i + j) * kHdr];
        views[j].data = d;
        views[j].len = p.len[i + j];
        views[j].wire_len = kWire;
        views[j].layout = parse_packet(d, p.len[i + j]);
        verdicts[j] = Verdict::kPass;
      }
      chain.process({views.data(), n}, {verdicts.data(), n}, now);
      for (size_t j = 0; j < n; ++j) passed += verdicts[j] == Verdict::kPass;
      now += Nanos(n) * (kWire + 24) * 8 / 100;  // 100 Gb/s line rate
    }
    return cpu_seconds() - t0;
  }
};

// per_flow_meter: the meter keeps buckets per flow (the run-aware sweep), else one global pair.
std::string config_for(size_t flows, uint32_t acl_rules, bool per_flow_meter = false) {
  std::string n = std::to_string(std::max<size_t>(flows, 1024));
  return "[nf.nat]\nexternal = [\"198.18.1.0/28\"]\nmax_flows = " + n +
         "\n[nf.lb]\nmax_flows = " + n + "\n[nf.counter]\nmax_flows = " + n +
         "\n[nf.ratelimit]\nmax_flows = " + n +
         "\n[nf.firewall]\ngenerated_rules = " + std::to_string(acl_rules) +
         (per_flow_meter ? "\n[nf.meter]\nper_flow = true\nmax_flows = " + n : std::string()) +
         "\n";
}

struct Row {
  std::string chain;
  size_t flows;
  uint32_t slf;
  double ns = 0;  // 0 = not available
  double pass_share = 0;
};

struct Trace {
  const Flows& flows;
  uint32_t slf;
  Packets warm, timed;
  Trace(const Flows& f, uint32_t slf_, size_t packets)
      : flows(f),
        slf(slf_),
        warm(f, make_sequence(f.n, 1, f.n, 11)),
        timed(f, make_sequence(f.n, slf_, packets, 13 + slf_)) {}
};

Row measure(const std::string& spec, Trace& t, uint32_t acl_rules) {
  Row r{spec, t.flows.n, t.slf};
  toml::table cfg = toml::parse(config_for(t.flows.n, acl_rules));
  std::string err;
  std::unique_ptr<Chain> chain = build_chain(spec, &cfg, err);
  if (!chain) {
    std::fprintf(stderr, "  skip %s: %s\n", spec.c_str(), err.c_str());
    return r;
  }
  Runner run;
  run.run(*chain, t.warm);  // every flow once: tables hold all flows
  run.passed = 0;
  double s = run.run(*chain, t.timed);
  r.ns = s * 1e9 / double(t.timed.size());
  r.pass_share = double(run.passed) / double(t.timed.size());
  return r;
}

// Flow-table lookups: one by one vs batched (hash all, prefetch buckets [, prefetch entries]).
void flow_table_bench(size_t flows, size_t lookups) {
  FlowTable<FlowKey, uint64_t, FlowKeyHash64> t(flows, 0);
  auto key = [](uint32_t i) {
    FlowKey k;
    k.ip_version = 4;
    k.proto = 6;
    std::memcpy(k.src.data() + 12, &i, 4);
    k.sport = uint16_t(i * 7);
    k.dport = 443;
    return k;
  };
  bool ins;
  for (uint32_t i = 0; i < flows; ++i) t.find_or_insert(key(i), t.hash(key(i)), 0, ins);
  std::vector<uint32_t> seq = make_sequence(flows, 1, lookups, 5);
  std::vector<FlowKey> keys(kBurst);
  std::vector<uint64_t> h(kBurst);
  uint64_t found = 0;
  double ns[3];
  for (int mode = 0; mode < 3; ++mode) {
    double t0 = cpu_seconds();
    for (size_t i = 0; i + kBurst <= seq.size(); i += kBurst) {
      for (size_t j = 0; j < kBurst; ++j) {
        keys[j] = key(seq[i + j]);
        if (mode == 0) {
          found += t.find(keys[j], t.hash(keys[j]), 0) != t.kNone;
          continue;
        }
        h[j] = t.hash(keys[j]);
        t.prefetch_buckets(h[j]);
      }
      if (mode == 0) continue;
      if (mode == 2)
        for (size_t j = 0; j < kBurst; ++j) t.prefetch_entry(h[j]);
      for (size_t j = 0; j < kBurst; ++j) found += t.find(keys[j], h[j], 0) != t.kNone;
    }
    ns[mode] = (cpu_seconds() - t0) * 1e9 / double(seq.size() / kBurst * kBurst);
  }
  std::printf(
      "flowtable %8zu flows: one-by-one %6.1f ns/lookup | batch+prefetch buckets %6.1f (%.2fx) | "
      "+prefetch entries %6.1f (%.2fx)   [%zu KiB, %zu slots, found %llu]\n",
      flows, ns[0], ns[1], ns[0] / ns[1], ns[2], ns[0] / ns[2], t.bytes() / 1024, t.slots(),
      (unsigned long long)found);
}

}  // namespace

// Run-aware chains (nf/run_burst.h): each chain or NF is built and warmed once per population;
// then, per SLF, the same chain object runs the same packets per-packet and run-aware, alternated
// (which goes first alternates too), N repetitions. Same state, same memory, same run: only the
// mode differs. Ratio = per-packet time / run-aware time (> 1: run-aware is faster).
void runs_section(const std::vector<size_t>& populations, size_t packets, uint32_t acl_rules,
                  int reps) {
  const std::vector<std::string> specs = {"router,nat,firewall,counter",
                                          "router",
                                          "nat",
                                          "firewall",
                                          "counter",
                                          "lb",
                                          "ratelimit",
                                          "meter"};
  std::printf(
      "\n== run-aware vs per-packet (same chain object, alternated, N=%d; firewall %u rules; "
      "meter per flow), ns/packet incl. parse\n",
      reps, acl_rules);
  std::printf("%-28s %8s %4s %12s %12s   %s\n", "nf/chain", "flows", "slf", "per-packet",
              "run-aware", "ratio [range]");
  for (size_t flows : populations) {
    Flows f = make_flows(flows);
    Packets warm(f, make_sequence(f.n, 1, f.n, 11));
    toml::table cfg = toml::parse(config_for(flows, acl_rules, true));
    for (const std::string& spec : specs) {
      std::string err;
      std::unique_ptr<Chain> chain = build_chain(spec, &cfg, err);
      if (!chain) {
        std::fprintf(stderr, "  skip %s: %s\n", spec.c_str(), err.c_str());
        continue;
      }
      Runner run;
      chain->set_run_aware(false);
      run.run(*chain, warm);  // every flow once: tables hold all flows
      for (uint32_t slf : {1u, 2u, 4u, 8u}) {
        Packets p(f, make_sequence(f.n, slf, packets, 13 + slf));
        bench::Ratio r;  // base: per-packet; variant: run-aware (seconds per packet)
        for (int i = 0; i < reps; ++i) {
          for (int k = 0; k < 2; ++k) {
            const bool aware = (k == 1) != (i % 2 == 1);
            chain->set_run_aware(aware);
            const double t = run.run(*chain, p) / double(p.size());
            (aware ? r.variant : r.base).add(t);
          }
        }
        std::printf("%-28s %8zu %4u %12.1f %12.1f   %s\n", spec.c_str(), flows, slf,
                    r.base.min() * 1e9, r.variant.min() * 1e9, r.text().c_str());
        std::printf("RATIO nf run-aware/per-packet %s slf=%u flows=%zu %s\n", spec.c_str(), slf,
                    flows, r.text().c_str());
      }
    }
  }
}

// FastClick's comparison chain. FastClick's rates come from the same run of the peer bench
// (scripts/peers/fastclick.py measures FastClick's `click` on the same generator's trace and
// passes its Mpps in NFPARK_FASTCLICK_MPPS="WITH_ACL,WITHOUT_ACL"); without it no FastClick
// figure is printed (no stored constants: a figure from another run is not a comparison).
void fastclick_section(const Flows* flows100k, size_t packets) {
  std::printf(
      "\n== FastClick comparison chain (100k flows, SLF 1, 1500 B): classify + ACL(1000 rules) + "
      "flow table + LB + counter\n");
  Flows own;
  if (!flows100k || flows100k->n == 0) own = make_flows(100'000);
  Trace t100k(own.n ? own : *flows100k, 1, packets);
  Row with_acl = measure("firewall,lb,counter", t100k, 1000);
  Row without = measure("lb,counter", t100k, 1000);
  double fc_acl = 0, fc_noacl = 0;
  const char* env = std::getenv("NFPARK_FASTCLICK_MPPS");
  const bool have_fc =
      env && std::sscanf(env, "%lf,%lf", &fc_acl, &fc_noacl) == 2 && fc_acl > 0 && fc_noacl > 0;
  for (auto [r, fc] : {std::pair{with_acl, fc_acl}, std::pair{without, fc_noacl}}) {
    if (r.ns == 0) {
      std::printf("%-22s n/a\n", r.chain.c_str());
      continue;
    }
    if (have_fc)
      std::printf("%-22s %8.2f Mpps  (FastClick %.2f Mpps, same run: %.1fx)\n", r.chain.c_str(),
                  1e3 / r.ns, fc, 1e3 / r.ns / fc);
    else
      std::printf(
          "%-22s %8.2f Mpps  (FastClick: not measured in this run; "
          "scripts/bench.sh --peers with NFPARK_FASTCLICK)\n",
          r.chain.c_str(), 1e3 / r.ns);
  }
  if (with_acl.ns > 0 && without.ns > 0)
    std::printf("ACL cost in the same run: with/without = %.2fx time\n", with_acl.ns / without.ns);
}

int main(int argc, char** argv) {
  bool quick = false, fastclick_only = false, runs_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") {
      quick = true;
    } else if (a == "--fastclick") {
      fastclick_only = true;
    } else if (a == "--runs") {
      runs_only = true;
    } else {
      std::printf(
          "usage: nf_bench [--quick] [--runs] | --fastclick\n  full run < 2 min; --quick < 15 s "
          "(1k and 100k flows); --runs: only the run-aware vs per-packet sweep; --fastclick: only "
          "FastClick's comparison chain (scripts/peers/fastclick.py)\n");
      return 2;
    }
  }
  if (fastclick_only) {
    fastclick_section(nullptr, 200'000);
    std::printf("\ntotal %.1f s CPU\n", cpu_seconds());
    return 0;
  }
  const size_t big = quick ? 100'000 : 1'000'000;
  const size_t packets = quick ? 100'000 : 1'000'000;
  const uint32_t acl_rules = quick ? 1000 : 10000;  // firewall rows (building 10k rules: ~0.3 s)
  auto t_start = std::chrono::steady_clock::now();
  // The run-aware sweep uses the chain with 10k rules even in --quick.
  const auto sweep = [&] { runs_section({1000, big}, quick ? 64'000 : 500'000, 10000, 3); };
  if (runs_only) {
    sweep();
    std::printf("\ntotal %.1f s CPU\n", cpu_seconds());
    return 0;
  }

  std::printf("== flow table (lookups of present keys, bursts of %zu)\n", kBurst);
  flow_table_bench(1000, packets / 2);
  flow_table_bench(big, packets / 2);

  const std::vector<std::string> nfs = {"forward",
                                        "macswap",
                                        "busy(300)",
                                        "counter",
                                        "ratelimit",
                                        "lb",
                                        "nat",
                                        "firewall",
                                        "router",
                                        "meter",
                                        "aes",
                                        "firewall,nat,lb",
                                        "counter,lb,ratelimit"};
  std::printf(
      "\n== NFs and chains on header-only packets (1500 B frames), ns/packet incl. parse; "
      "firewall: %u generated rules\n",
      acl_rules);
  std::printf("%-22s %9s %4s %9s %8s %10s %8s\n", "nf/chain", "flows", "slf", "ns/pkt", "Mpps",
              "vs forward", "passed");
  std::vector<Row> rows;
  Flows f100k;  // kept for the FastClick section when `big` is 100k (--quick)
  for (size_t flows : {size_t(1000), big}) {
    Flows f = make_flows(flows);
    if (flows == 100'000) f100k = f;
    for (uint32_t slf : {1u, 8u}) {
      Trace t(f, slf, packets);
      double base = 0;
      for (const std::string& nf : nfs) {
        Row r = measure(nf, t, acl_rules);
        if (nf == "forward") base = r.ns;
        rows.push_back(r);
        if (r.ns == 0) continue;
        std::printf("%-22s %9zu %4u %9.1f %8.2f %9.2fx %7.1f%%\n", nf.c_str(), flows, slf, r.ns,
                    1e3 / r.ns, base / r.ns, 100 * r.pass_share);
      }
    }
  }
  std::printf("\n== locality: SLF 8 speed-up over SLF 1 (same NF, same flows)\n");
  for (const Row& a : rows) {
    if (a.slf != 1 || a.ns == 0) continue;
    for (const Row& b : rows)
      if (b.slf == 8 && b.chain == a.chain && b.flows == a.flows && b.ns > 0)
        std::printf("%-22s %9zu flows: %.2fx\n", a.chain.c_str(), a.flows, a.ns / b.ns);
  }

  fastclick_section(&f100k, packets);
  sweep();
  std::printf("\ntotal %.1f s CPU, ", cpu_seconds());
  std::printf("%.1f s wall\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count());
  return 0;
}
