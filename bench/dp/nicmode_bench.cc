// nicmode_bench: the NIC-side modes in front of an NF server — split, nicmem and NFSlicer —
// against the host baseline (whole frames into host memory), in one run: the NF server's packet
// rate and the bytes that cross the NIC <-> host boundary per packet (what PCIe would carry).
//
//   nicmode_bench            default run (< 60 s of CPU: 5 reps x 300k packets per case)
//   nicmode_bench --quick    < 10 s (3 reps x 50k packets per case)
//
// Method (dp_harness.h): the same closed loop as switch_bench; the mode's shim (software header
// split, or NFSlicer's slice/splice) runs where the NIC would, on the same lcore. NF chain: `nat`
// (source NAT, default config: one external address; every generated flow is outbound, so each
// packet is looked up and rewritten — address, port, IPv4 and L4 checksums), so the harness puts
// each frame's original headers back before it is sent again. Traffic: UDP, 256 flows, 1518 B and
// 64 B frames. Printed per mode, as ratios to host measured in the same run:
//   - NF server rate: packets / TSC time inside NfServer::poll (receive, chain, send back);
//   - loop rate: packets / thread CPU time of the whole loop (shim + server + rings);
//   - host-boundary bytes per packet, RX + TX, data + descriptors (16 B each), from the mode's
//     host_boundary.* counters (park/host_boundary.h's byte model), and the share kept on the NIC.
// Caveat: there is no PCIe here; the byte counts are the model's, the rates are the CPU's. At 64 B
// nothing is split or sliced (frames are not longer than the header segment / NFSlicer's 500 B
// threshold), so the modes should equal host there: that row checks the bench, not the modes.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "dp_harness.h"

using namespace nfpark;
using namespace nfpark::bench;

namespace {

const Variant kVariants[] = {
    {"host", dp::Mode::kBaseline},
    {"split", dp::Mode::kSplit},
    {"nicmem", dp::Mode::kNicmem},
    {"nfslicer", dp::Mode::kNfSlicer},
};

// Boundary bytes per packet (both directions, data + descriptors) and the share kept on the NIC.
void boundary(const LoopResult& r, double& bytes, double& kept) {
  const CounterMap& c = r.park;
  const double pkts = double(c.get("host_boundary.rx_packets"));
  if (pkts == 0) {
    bytes = kept = 0;
    return;
  }
  bytes = double(c.get("host_boundary.rx_data_bytes") + c.get("host_boundary.rx_desc_bytes") +
                 c.get("host_boundary.tx_data_bytes") + c.get("host_boundary.tx_desc_bytes")) /
          pkts;
  const double wire =
      double(c.get("host_boundary.rx_wire_bytes") + c.get("host_boundary.tx_wire_bytes"));
  kept = wire > 0
             ? double(c.get("host_boundary.rx_kept_bytes") + c.get("host_boundary.tx_kept_bytes")) /
                   wire
             : 0;
}

bool bench_size(DpEnv& env, uint32_t frame, bool quick, std::vector<std::string>& summary) {
  trace::GenConfig g;
  g.packets = 1024;
  g.flows = 256;
  g.size.fixed = frame;
  g.proto = trace::GenProto::kUdp;
  g.seed = 5;
  const Frames frames = Frames::generate(g);
  const int reps = quick ? 3 : 5;
  std::vector<std::pair<std::string, LoopSpec>> specs;
  for (const Variant& v : kVariants) {
    if (!selected(v.name, "host")) continue;
    LoopSpec s;
    s.cfg.mode = v.mode;
    s.cfg.chain = "nat";
    s.inflight = 1024;
    s.warm = quick ? 10000 : 30000;
    s.measure = quick ? 50000 : 300000;
    s.restore = true;
    specs.emplace_back(v.name, s);
  }
  std::map<std::string, Runs> acc;
  const std::string what = "nicmode_bench: " + std::to_string(frame) + " B";
  if (!run_interleaved(env, frames, reps, specs, what, acc)) return false;
  std::printf("\n%u B frames, chain nat, %d reps, %llu packets/rep\n", frame, reps,
              (unsigned long long)acc["host"].last.packets);
  std::printf("  %-9s %8s %-24s %8s %-24s %9s %-8s %6s %6s\n", "mode", "srvMpps", "server ratio",
              "loopMpps", "loop ratio", "bndry B/p", "vs host", "kept", "drops");
  double host_bytes = 0, kept = 0;
  boundary(acc["host"].last, host_bytes, kept);
  for (const Variant& v : kVariants) {
    if (!selected(v.name, "host")) continue;
    const Runs& a = acc[v.name];
    const LoopResult& r = a.last;
    double bytes = 0;
    boundary(r, bytes, kept);
    Ratio rs{acc["host"].server, a.server}, rl{acc["host"].cpu, a.cpu};
    char rel[32];
    std::snprintf(rel, sizeof rel, "%.3fx", host_bytes > 0 ? bytes / host_bytes : 0);
    std::printf("  %-9s %8.3f %-24s %8.3f %-24s %9.1f %-8s %5.1f%% %6llu\n", v.name,
                1e-6 / a.server.min(), rs.text().c_str(), 1e-6 / a.cpu.min(), rl.text().c_str(),
                bytes, rel, 100 * kept,
                (unsigned long long)(r.mode_drops + r.nf_drops + r.rebuilt));
    if (v.mode != dp::Mode::kBaseline) {
      summary.push_back("RATIO nic " + std::string(v.name) + "/host " + std::to_string(frame) +
                        "B nf-server-rate " + rs.text() + "; boundary bytes " + rel);
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = parse_quick(argc, argv,
                                 "usage: nicmode_bench [--quick]\n"
                                 "  NF server rate and host-boundary bytes per NIC mode vs host\n");
  DpEnv env;
  if (!init_or_report(env, "nicmode_bench")) return 1;
  std::printf("nicmode_bench%s: one lcore, EAL --no-huge, ring ports, 1024 mbufs in flight\n",
              quick ? " --quick" : "");
  std::vector<std::string> summary;
  bool ok = bench_size(env, 1518, quick, summary) && bench_size(env, 64, quick, summary);
  return finish(env, summary, ok);
}
