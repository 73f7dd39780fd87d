// switch_bench: the parking switch's packet rate with split + merge against plain forwarding
// (mode baseline) on the same ring ports, in one run — DESIGN.md §4's first ratio (target >= 0.8).
//
//   switch_bench            default run (< 60 s of CPU: 5 reps x 400k packets per case)
//   switch_bench --quick    < 10 s (3 reps x 60k packets per case)
//
// Method (dp_harness.h): the full loop traffic port rx -> SwitchMode::to_nf -> NF link ->
// NfServer (chain `forward`, so the bench measures the switch, not an NF) -> SwitchMode::from_nf
// -> traffic port tx -> recycle, on one lcore, EAL without hugepages, 1024 mbufs in flight.
// Modes: baseline · payloadpark (park 160 B, the paper's) · payloadpark with the whole payload
// parked (park_bytes 0) · queuemem · nfslicer. Traffic: 1500 B frames and the `dc` mix (generator,
// 256 flows, UDP/TCP). Repetitions interleave the modes (baseline, pp, ..., baseline, pp, ...).
// Printed per mode: Mpps from thread CPU time (min over reps) and from wall time, the ratio to
// baseline (min-based, [range of per-rep ratios]), the TSC split of the cost between the switch
// and the NF server, and the bytes per packet on the NF link each way (Port counters).
// Caveat: ring ports move pointers, so fewer bytes on the NF link cost nothing here; on memif or
// a NIC they are the point. This ratio is the CPU price of split + merge.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "dp_harness.h"

using namespace nfpark;
using namespace nfpark::bench;

namespace {

const Variant kVariants[] = {
    {"baseline", dp::Mode::kBaseline, 0},           {"payloadpark", dp::Mode::kPayloadPark, 160},
    {"payloadpark-all", dp::Mode::kPayloadPark, 0}, {"queuemem", dp::Mode::kQueueMem, 0},
    {"nfslicer", dp::Mode::kNfSlicer, 0},
};

// One traffic pattern on one NF link: every variant, interleaved; prints its table and adds the
// RATIO lines to `summary`. NFPARK_BENCH_ONLY (dp_harness.h) limits the variants.
bool bench_traffic(DpEnv& env, bool memif, const Traffic& traffic, bool quick,
                   std::vector<std::string>& summary) {
  const std::string label = std::string(memif ? "memif " : "ring ") + traffic.label;
  const Frames frames = traffic.frames();
  const int reps = quick ? 3 : 5;
  std::vector<std::pair<std::string, LoopSpec>> specs;
  for (const Variant& v : kVariants) {
    if (!selected(v.name, "baseline")) continue;
    LoopSpec s;
    s.cfg.mode = v.mode;
    s.cfg.chain = "forward";
    s.cfg.park.park_bytes = v.park_bytes;
    s.inflight = 1024;
    s.memif = memif;
    s.warm = quick ? 10000 : 40000;
    s.measure = quick ? 60000 : 400000;
    specs.emplace_back(v.name, s);
  }
  std::map<std::string, Runs> acc;
  if (!run_interleaved(env, frames, reps, specs, "switch_bench: " + label, acc)) return false;
  std::printf("\nNF link %s traffic (mean %.0f B), chain forward, %d reps, %llu packets/rep\n",
              label.c_str(), frames.mean_len(), reps,
              (unsigned long long)acc["baseline"].last.packets);
  std::printf("  %-15s %6s %6s  %-23s %5s %11s %6s  %-23s %7s %7s %5s %6s\n", "mode", "Mpps",
              "wall", "loop ratio (cpu)", "wall", "sw ns in/out", "srv ns", "NF server ratio",
              "toNF B", "fromNF", "drops", "rebuilt");
  const Runs& base = acc["baseline"];
  for (const Variant& v : kVariants) {
    if (!selected(v.name, "baseline")) continue;
    const Runs& a = acc[v.name];
    const LoopResult& r = a.last;
    Ratio rc{base.cpu, a.cpu}, rw{base.wall, a.wall}, rs{base.server, a.server};
    std::printf(
        "  %-15s %6.2f %6.2f  %-23s %5.2f %5.1f/%5.1f %6.1f  %-23s %7.1f %7.1f %5llu %6llu\n",
        v.name, 1e-6 / a.cpu.min(), 1e-6 / a.wall.min(), rc.text().c_str(), rw.value(), r.to_nf_ns,
        r.from_nf_ns, r.server_ns, rs.text().c_str(), r.per_pkt(r.to_nf_bytes),
        r.per_pkt(r.from_nf_bytes), (unsigned long long)(r.mode_drops + r.nf_drops),
        (unsigned long long)r.rebuilt);
    if (v.mode == dp::Mode::kBaseline) continue;
    summary.push_back(std::string("RATIO switch ") + v.name + "/baseline " + label + " " +
                      rc.text() + " (target >= 0.8)");
    if (memif && std::string(v.name) == "payloadpark-all")
      summary.push_back("RATIO nf-server header-only/whole " + label + " " + rs.text() +
                        " (target >= 2.5)");
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = parse_quick(argc, argv,
                                 "usage: switch_bench [--quick]\n"
                                 "  parking switch Mpps per mode vs baseline, same run\n");
  DpEnv env;
  if (!init_or_report(env, "switch_bench")) return 1;
  std::printf(
      "switch_bench%s: one lcore, EAL --no-huge, 1024 mbufs in flight; NF link ring, then memif\n",
      quick ? " --quick" : "");
  std::vector<std::string> summary;
  const Traffic s1500 = traffic_1500(), dc = traffic_dc();
  bool ok = bench_traffic(env, false, s1500, quick, summary) &&
            bench_traffic(env, false, dc, quick, summary);
  std::string err;
  const char* link = std::getenv("NFPARK_BENCH_LINK");  // "ring": skip memif (for profiling)
  if (ok && link && std::strcmp(link, "ring") == 0) {
    std::printf("\nmemif NF link skipped: NFPARK_BENCH_LINK=ring\n");
  } else if (ok && env.init_memif(err)) {
    ok = bench_traffic(env, true, s1500, quick, summary) &&
         bench_traffic(env, true, dc, quick, summary);
  } else if (ok) {
    std::printf("\nmemif NF link skipped: %s\n", err.c_str());
  }
  return finish(env, summary, ok);
}
