// workers_bench: N = 2 workers against N = 1 for each mode, in one run — DESIGN.md §4's "N
// workers vs 1 worker" (target >= 1.8x for 2).
//
//   workers_bench            default run (5 reps x 300k packets per worker per case)
//   workers_bench --quick    3 reps x 60k packets
//
// Method: each worker is dp_harness.h's closed loop (the real SwitchMode, NfServer with chain
// `forward`, ring ports) on its own lcore with its own ports, store and NF chain, as a worker of
// `nfpark run --workers N` (dp/worker.h) — and its own traffic source: its 1024 mbufs circulate
// on its own rings, recycled by the worker itself (a pointer move), so no feeder thread takes
// CPU from the workers; the main lcore sleeps in 1 ms steps until the workers are done. The
// pools are shared (as in nfpark run) and checked full after every case. N = 1 runs the same
// loop on one worker lcore. Repetitions interleave 1w, 2w for every mode.
// Printed per mode: aggregate Mpps from each worker's wall time (sum over workers of packets /
// its measured wall time), the ratio 2w/1w (min-based, [range of per-rep ratios, N]); the same
// ratio from the workers' thread CPU time (what it would be with a core per worker and nothing
// else running: it shows what the workers cost each other, not what the machine gives them);
// and each worker's cost per packet from its thread CPU time (ns/pkt).
// Traffic: the `dc` size mix (256 flows, UDP/TCP). EAL: 3 lcores floated over the CPUs.
#include <rte_launch.h>
#include <rte_lcore.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <map>
#include <memory>

#include "dp_harness.h"
#include "run/worker_config.h"

using namespace nfpark;
using namespace nfpark::bench;

namespace {

const Variant kVariants[] = {
    {"baseline", dp::Mode::kBaseline, 0}, {"payloadpark", dp::Mode::kPayloadPark, 160},
    {"queuemem", dp::Mode::kQueueMem, 0}, {"nfslicer", dp::Mode::kNfSlicer, 0},
    {"nicmem", dp::Mode::kNicmem, 0},     {"split", dp::Mode::kSplit, 0},
};
constexpr int kMaxN = 2;

struct Job {
  DpEnv* env = nullptr;
  const Frames* frames = nullptr;
  LoopSpec spec;
  LoopResult result;
  std::atomic<bool> done{false};
};

int job_main(void* arg) {
  auto* j = static_cast<Job*>(arg);
  Loop loop(*j->env, *j->frames, j->spec);
  j->result = loop.run();
  j->done.store(true);
  return 0;
}

// N loops at once, one per worker lcore. Per-packet wall time of the whole (1 / aggregate rate)
// and each worker's CPU ns per packet; false (with err) when a loop failed or leaked.
bool run_n(DpEnv* envs, const Frames& frames, const LoopSpec& spec, int n, double& wall_per_pkt,
           std::vector<double>& cpu_ns, std::string& err) {
  std::vector<std::unique_ptr<Job>> jobs;
  unsigned lcore = rte_get_next_lcore(-1, 1, 0);
  for (int w = 0; w < n; ++w) {
    auto j = std::make_unique<Job>();
    j->env = &envs[w];
    j->frames = &frames;
    j->spec = spec;
    j->spec.check_pools = false;
    j->spec.cfg.workers = uint32_t(n);
    j->spec.cfg = run::worker_config(j->spec.cfg, uint32_t(w));  // its share, its core id
    jobs.push_back(std::move(j));
  }
  for (auto& j : jobs) {
    rte_eal_remote_launch(job_main, j.get(), lcore);
    lcore = rte_get_next_lcore(lcore, 1, 0);
  }
  for (auto& j : jobs)
    while (!j->done.load()) usleep(1000);  // the main lcore keeps off the CPUs
  rte_eal_mp_wait_lcore();
  double rate = 0;
  cpu_ns.clear();
  for (auto& j : jobs) {
    const LoopResult& r = j->result;
    if (!r.ok) return (err = r.err), false;
    rate += double(r.packets) / r.wall_s;
    cpu_ns.push_back(r.cpu_s / double(r.packets) * 1e9);
  }
  if (!envs[0].pools_full()) return (err = "mbuf leak: pools not full after the run"), false;
  wall_per_pkt = 1 / rate;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = parse_quick(argc, argv,
                                 "usage: workers_bench [--quick]\n"
                                 "  2 workers vs 1 per mode, aggregate Mpps, same run\n");
  std::string err;
  dp::EalOptions eo;
  eo.mem_mb = 768;
  eo.lcores = kMaxN + 1;
  if (!dp::eal_init(eo, err) || !dp::MbufMeta::register_meta()) {
    std::fprintf(stderr, "workers_bench: %s\n", err.empty() ? "mbuf dynfield" : err.c_str());
    return 1;
  }
  DpEnv envs[kMaxN];
  const uint32_t room = RTE_MBUF_DEFAULT_BUF_SIZE, hroom = 256 + RTE_PKTMBUF_HEADROOM;
  const uint32_t pool = 2 * DpEnv::kPool;
  envs[0].pkts = dp::mbuf_pool_create("w_pkts", pool, 256, room);
  envs[0].hdrs = dp::mbuf_pool_create("w_hdrs", pool, 256, hroom);
  envs[0].ind = dp::mbuf_pool_create("w_ind", pool, 256, 0);
  envs[0].nic = dp::mbuf_pool_create("w_nicmem", pool, 256, room);
  bool ok = envs[0].pkts && envs[0].hdrs && envs[0].ind && envs[0].nic;
  dp::MbufOps::pools = {envs[0].pkts, envs[0].hdrs, envs[0].ind};
  for (int w = 0; ok && w < kMaxN; ++w) {
    DpEnv& e = envs[w];
    e.pkts = envs[0].pkts, e.hdrs = envs[0].hdrs, e.ind = envs[0].ind, e.nic = envs[0].nic;
    const std::string k = std::to_string(w);
    ok = dp::Port::ring_ends("traffic" + k, e.pkts, e.traffic, e.wire_in, e.wire_out, err,
                             DpEnv::kRing) &&
         dp::Port::ring_pair("nflink" + k, e.pkts, e.sw_nf, e.nf_side, err, DpEnv::kRing);
  }
  if (!ok) {
    std::fprintf(stderr, "workers_bench: %s\n", err.empty() ? "cannot create pools" : err.c_str());
    return 1;
  }
  const Traffic dc = traffic_dc();
  const Frames frames = dc.frames();
  const int reps = quick ? 3 : 5;
  std::printf(
      "workers_bench%s: %d reps, %s traffic (mean %.0f B), chain forward, ring ports, "
      "%u lcores on %ld CPUs\n",
      quick ? " --quick" : "", reps, dc.label, frames.mean_len(), rte_lcore_count(),
      sysconf(_SC_NPROCESSORS_ONLN));
  std::printf("  %-12s %8s %8s  %-24s %-24s %s\n", "mode", "1w Mpps", "2w Mpps", "2w/1w (wall)",
              "2w/1w (thread CPU)", "ns/pkt per worker (CPU): 1w | 2w [range]");
  std::vector<std::string> summary;
  for (const Variant& v : kVariants) {
    if (!selected(v.name, "")) continue;
    LoopSpec s;
    s.cfg.mode = v.mode;
    s.cfg.chain = "forward";
    s.cfg.park.park_bytes = v.park_bytes;
    s.inflight = 1024;
    s.warm = quick ? 10000 : 40000;
    s.measure = quick ? 60000 : 300000;
    Ratio ratio, cpu_ratio;  // cpu_ratio: from the workers' CPU time (dedicated cores)
    Series cpu1, cpu2;
    for (int rep = 0; rep < reps && ok; ++rep) {
      for (int n = 1; n <= kMaxN && ok; ++n) {
        double wall = 0;
        std::vector<double> cpu;
        ok = run_n(envs, frames, s, n, wall, cpu, err);
        if (!ok) break;
        (n == 1 ? ratio.base : ratio.variant).add(wall);
        double rate = 0;  // packets per CPU-second, summed over the workers
        for (double c : cpu) {
          (n == 1 ? cpu1 : cpu2).add(c);
          rate += 1e9 / c;
        }
        (n == 1 ? cpu_ratio.base : cpu_ratio.variant).add(1 / rate);
      }
    }
    if (!ok) {
      std::fprintf(stderr, "workers_bench %s: %s\n", v.name, err.c_str());
      break;
    }
    std::printf("  %-12s %8.2f %8.2f  %-24s %-24s %.0f | %.0f [%.0f-%.0f]\n", v.name,
                1e-6 / ratio.base.min(), 1e-6 / ratio.variant.min(), ratio.text().c_str(),
                cpu_ratio.text().c_str(), cpu1.median(), cpu2.median(), cpu2.min(), cpu2.max());
    summary.push_back(std::string("RATIO workers ") + v.name + " 2w/1w " + ratio.text() +
                      " (target >= 1.8; thread CPU " + cpu_ratio.text() + ")");
  }
  std::printf("\n");
  for (const auto& l : summary) std::printf("%s\n", l.c_str());
  for (DpEnv& e : envs)
    for (dp::Port* p : {&e.traffic, &e.sw_nf, &e.nf_side}) p->stop();
  dp::eal_cleanup();
  return ok ? 0 : 1;
}
