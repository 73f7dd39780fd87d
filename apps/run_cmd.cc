// nfpark run: the dataplane on DPDK ports — a parking switch and an NF server, in one process.
#include <cstdio>
#include <string>

#include "args.h"
#include "commands.h"
#include "dp/run_config.h"
#include "dp/runner.h"

namespace nfpark::app {

namespace {

bool apply_flags(Args& a, dp::RunConfig& c, std::string& err) {
  if (a.has("mode")) {
    auto m = dp::parse_mode(a.get("mode"));
    if (!m) {
      err = "--mode: '" + a.get("mode") + "' is not a mode (baseline, payloadpark, queuemem, nfslicer, nicmem, split)";
      return false;
    }
    c.mode = *m;
  }
  if (a.has("chain")) c.chain = a.get("chain");
  if (a.has("role")) {
    auto r = dp::parse_role(a.get("role"));
    if (!r) return err = "--role: expected all, switch or nf", false;
    c.role = *r;
  }
  if (a.has("nf-port")) c.nf_port = a.get("nf-port");
  if (a.has("port")) c.port = a.get("port");
  if (a.has("in")) c.in_path = a.get("in");
  if (a.has("traffic")) {
    std::string v = a.get("traffic");
    c.traffic_ports.clear();
    // Port specs contain commas (devargs), so the two ports are separated by '+'.
    size_t plus = v.find('+');
    if (plus == std::string::npos) {
      err = "--traffic: expected two port specs joined by '+', e.g. "
            "vdev:net_af_packet0,iface=vethA+vdev:net_af_packet1,iface=vethB";
      return false;
    }
    c.traffic_ports = {v.substr(0, plus), v.substr(plus + 1)};
  }
  if (a.has("out")) c.out_path = a.get("out");
  if (a.has("nf-lcore")) c.nf_lcore = true;
  if (a.has("no-drop-notify")) c.notify_drops = false;
  if (a.has("no-progress")) c.progress = false;
  if (a.has("pace")) c.pace = true;
  uint64_t u = 0;
  double d = 0;
  struct {
    const char* flag;
    double* dst;
    bool fraction;
  } fracs[] = {{"nf-drop", &c.faults.drop, true},       {"nf-dup", &c.faults.dup, true},
               {"nf-reorder", &c.faults.reorder, true}, {"nf-corrupt-tag", &c.faults.corrupt_tag, true},
               {"nf-forge-tag", &c.faults.forge_tag, true},
               {"nf-delay-share", &c.faults.delay_share, true},
               {"nf-delay-us", &c.faults.delay_us, false}, {"reframe", &c.reframe_us, false},
               {"timeout", &c.timeout_s, false},        {"idle-exit", &c.idle_exit_s, false}};
  for (auto& f : fracs) {
    if (!a.has(f.flag)) continue;
    if (!a.get_double(f.flag, d)) return err = a.error(), false;
    if (d < 0 || (f.fraction && d > 1)) {
      err = std::string("--") + f.flag + ": " + a.get(f.flag) +
            (f.fraction ? " is not a fraction from 0 to 1" : " must be >= 0");
      return false;
    }
    *f.dst = d;
  }
  struct {
    const char* flag;
    uint64_t max;
    void (*set)(dp::RunConfig&, uint64_t);
  } ints[] = {
      {"seed", UINT64_MAX, [](dp::RunConfig& r, uint64_t v) { r.faults.seed = v; }},
      {"slots", 1u << 24, [](dp::RunConfig& r, uint64_t v) { r.park.slots = uint32_t(v); }},
      {"max-exp", 255, [](dp::RunConfig& r, uint64_t v) { r.park.max_exp = uint8_t(v); }},
      {"min-payload", 9000, [](dp::RunConfig& r, uint64_t v) { r.park.min_payload = uint32_t(v); }},
      {"mem-mb", 1u << 20, [](dp::RunConfig& r, uint64_t v) { r.mem_mb = uint32_t(v); }},
  };
  for (auto& f : ints) {
    if (!a.has(f.flag)) continue;
    if (!a.get_u64(f.flag, u)) return err = a.error(), false;
    if (u > f.max || (u == 0 && std::string(f.flag) == "slots")) {
      err = std::string("--") + f.flag + ": " + a.get(f.flag) + " is out of range (1.." + std::to_string(f.max) + ")";
      return false;
    }
    f.set(c, u);
  }
  if (a.has("park-bytes")) {
    std::string v = a.get("park-bytes");
    if (v == "all") {
      c.park.park_bytes = 0;
    } else {
      if (!a.get_u64("park-bytes", u) || u == 0 || u > 9000) {
        err = "--park-bytes: '" + v + "' must be 160, 352, another byte count, or 'all'";
        return false;
      }
      c.park.park_bytes = uint32_t(u);
    }
  }
  if (a.has("tag-format")) {
    auto f = park::parse_tag_format(a.get("tag-format"));
    if (!f) return err = "--tag-format: expected nfpark or payloadpark", false;
    c.park.format = *f;
  }
  if (a.has("tag-key")) {
    std::array<uint8_t, 16> k{};
    if (!dp::parse_tag_key(a.get("tag-key"), k)) return err = "--tag-key: expected 32 hex digits", false;
    c.park.key = k;
  }
  return true;
}

}  // namespace

int run_main(int argc, char** argv) {
  Args a("nfpark run", "Run packets through a parking switch and an NF chain on DPDK ports.");
  a.option("mode", "MODE", "baseline | payloadpark | queuemem | nfslicer | nicmem | split", "baseline")
      .option("chain", "NFS", "NF chain, e.g. nat,counter (see docs/nfs.md)", "forward")
      .option("in", "FILE", "input pcap/pcapng, replayed through the switch")
      .option("out", "FILE", "output pcap (packets as they leave the switch)")
      .option("traffic", "A+B", "live traffic on two DPDK ports instead of --in/--out: packets in\n"
              "on A leave on B and back (e.g. af_packet on veth pairs; see docs/run.md)")
      .option("park-bytes", "N|all", "payload bytes parked per packet (payloadpark)", "160")
      .option("min-payload", "B", "smallest payload that is parked", "160")
      .option("slots", "N", "parking slots per NF server", "65536")
      .option("max-exp", "N", "PayloadPark EXP: table traversals before eviction", "1")
      .option("tag-format", "F", "nfpark (24 B, checked) | payloadpark (7 B, byte-compatible)", "nfpark")
      .option("tag-key", "HEX", "128-bit SipHash key: reject tags forged by the NF side")
      .option("nf-drop", "P", "fault: NF server drops a fraction P of packets silently", "0")
      .option("nf-delay-us", "D", "fault: NF server delays packets by D microseconds", "0")
      .option("nf-delay-share", "P", "fault: the fraction of packets --nf-delay-us delays", "1")
      .option("nf-dup", "P", "fault: NF server duplicates a fraction P of packets", "0")
      .option("nf-reorder", "P", "fault: NF server swaps neighbours with probability P", "0")
      .option("nf-corrupt-tag", "P", "fault: NF server flips a bit in a fraction P of tags", "0")
      .option("nf-forge-tag", "P", "fault: NF server forges a fraction P of tags (random, replayed, another packet's)", "0")
      .option("seed", "S", "seed for the fault injector", "1")
      .option("reframe", "T_US", "put Reframer (T_buff in µs) in front of the chain", "0")
      .option("timeout", "S", "stop after S seconds", "600")
      .option("role", "R", "all (switch + NF server here) | switch | nf (separate processes)", "all")
      .option("nf-port", "SPEC", "role switch: port to the NF server, e.g. vdev:net_memif0,role=server,socket=/tmp/nf.sock")
      .option("port", "SPEC", "role nf: port to the switch, e.g. vdev:net_memif0,role=client,socket=/tmp/nf.sock")
      .option("idle-exit", "S", "role nf: exit after S seconds without traffic (0: on SIGINT/SIGTERM)", "0")
      .option("mem-mb", "MB", "DPDK memory (default: derived from the pools)")
      .flag("nf-lcore", "run the NF server on a second lcore (default: inline)")
      .flag("no-drop-notify", "NF drops are freed at the server (no explicit-drop notification)")
      .flag("no-progress", "no progress line on stderr")
      .flag("pace", "replay the input at its timestamps (a wire's pace) instead of at once")
      .flag("json", "print the result as JSON")
      .epilog("Usage: nfpark run [CONFIG.toml] [options] — the optional TOML config file (see\n"
              "docs/run.md) comes first; flags override it.\n"
              "Example: nfpark run --mode payloadpark --chain nat,counter --in dc.pcap --out out.pcap --json\n"
              "Every packet in ends as out, an NF drop, or a named drop: the result says whether\n"
              "in = out + drops held and whether every mempool was full again at exit.");
  // An optional config file comes first: nfpark run CONFIG.toml [options].
  std::string config_path;
  int first = 1;
  if (argc > 1 && argv[1][0] != '-') {
    config_path = argv[1];
    first = 2;
  }
  if (!a.parse(argc, argv, first)) {
    std::fprintf(stderr, "nfpark run: %s\n", a.error().c_str());
    return 2;
  }
  if (a.help()) {
    std::fputs(a.usage().c_str(), stdout);
    return 0;
  }
  dp::RunConfig cfg;
  cfg.park.slots = 65536;
  std::string err;
  if (!config_path.empty()) {
    if (!dp::load_run_config(config_path, cfg, err)) {
      std::fprintf(stderr, "nfpark run: %s\n", err.c_str());
      return 2;
    }
  }
  if (!apply_flags(a, cfg, err)) {
    std::fprintf(stderr, "nfpark run: %s\n", err.c_str());
    return 2;
  }
  dp::RunResult res;
  int rc = dp::run(cfg, res, err);
  if (rc == 2 || !res.ran) {
    std::fprintf(stderr, "nfpark run: %s\n", err.c_str());
    return rc == 2 ? 2 : 1;
  }
  if (a.flag_set("json")) std::printf("%s\n", res.to_json().c_str());
  else std::fputs(res.to_text().c_str(), stdout);
  if (rc != 0) {
    std::fprintf(stderr, "nfpark run: %s\n", err.c_str());
    return rc;
  }
  // A run that lost track of a packet, or leaked a buffer, has failed whatever else it did.
  if (!res.balanced() && cfg.role != dp::Role::kNf) {
    std::fprintf(stderr, "nfpark run: packets in != out + drops (see the counters): a bug\n");
    return 1;
  }
  if (!res.pools_full) {
    std::fprintf(stderr, "nfpark run: mempools not full at exit: a buffer leaked\n");
    return 1;
  }
  return 0;
}

}  // namespace nfpark::app
