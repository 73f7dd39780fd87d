// nfpark sim: runs a scenario (scenarios/*.toml) through the simulator — nfpark's own parking and
// NF code on models of a switch and NF servers, in virtual time. Needs no DPDK.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "args.h"
#include "commands.h"
#include "sim/rate_search.h"
#include "sim/run.h"
#include "sim/scenario.h"

namespace nfpark::app {

namespace {

// "pp160 size=256 park_bytes=160": the variant's name, then the last part of each key.
std::string params_text(const sim::RunReport& r) {
  std::string s;
  for (auto& [k, v] : r.params) {
    std::string val = v.size() >= 2 && v.front() == '"' ? v.substr(1, v.size() - 2) : v;
    if (!s.empty()) s += ' ';
    s += k == "variant" ? val : k.substr(k.rfind('.') + 1) + "=" + val;
  }
  return s.empty() ? "-" : s;
}

void print_text(const sim::Scenario& sc, const std::vector<sim::RunReport>& runs) {
  std::printf("scenario %s (%zu runs)%s%s\n", sc.name.c_str(), runs.size(),
              sc.description.empty() ? "" : ": ", sc.description.c_str());
  std::printf("%-12s %-44s %9s %9s %9s %9s %9s %9s %9s %10s %8s\n", "mode", "params", "in_Gbps",
              "out_Gbps", "out_Mpps", "nf_Gbps", "goodput", "drop_%", "lat_p50", "peak_buf_B",
              "ooo_%");
  for (const auto& r : runs) {
    const double drop_pct = r.packets_in ? 100.0 * double(r.drops_total) / double(r.packets_in) : 0;
    std::printf("%-12s %-44s %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.2f %10llu %8.4f\n",
                r.mode.c_str(), params_text(r).c_str(), r.in_gbps, r.out_gbps, r.out_mpps,
                r.nf_link_gbps, r.goodput_gbps, drop_pct, r.latency_p50_us,
                static_cast<unsigned long long>(r.peak_buffer_bytes),
                r.reorder.flow_out_of_order_pct);
  }
  std::printf(
      "(Gbps on the wire over the measurement window; latency in us; goodput: 42 B of\n"
      " header per packet delivered; ooo: out of order within flows, RFC 4737)\n");
}

bool write_csv(const std::string& dir, const std::vector<sim::RunReport>& runs, std::string& err) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return err = "--csv " + dir + ": " + ec.message(), false;
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string path = dir + "/" + std::to_string(i + 1) + "_" + runs[i].slug() + ".csv";
    std::ofstream f(path);
    f << sim::RunReport::csv_header() << runs[i].csv_rows();
    if (!f) return err = path + ": cannot write", false;
  }
  return true;
}

}  // namespace

int sim_main(int argc, char** argv) {
  Args a("nfpark sim",
         "Simulate a deployment in virtual time: nfpark's parking and NF code on\n"
         "models of a switch and NF servers (scenarios/*.toml, docs/sim.md).");
  a.positional("SCENARIO", "scenario file (TOML), e.g. scenarios/payloadpark-size.toml")
      .flag("json", "print {\"runs\": [...]} as JSON (one object per run)")
      .option("csv", "DIR", "write one time series per run: DIR/<n>_<mode>_<params>.csv")
      .flag("quick", "the scenario's short form ([quick] overrides; < ~30 s)")
      .flag("no-progress", "no progress lines on stderr")
      .epilog(
          "Every packet offered ends as output or a named drop: a run whose packets in !=\n"
          "out + drops, or whose packet records are not all back at the end, fails (exit 1).\n"
          "Exit codes: 0 ok, 1 a run broke an invariant, 2 bad usage or scenario.");
  if (!a.parse(argc, argv)) {
    std::fprintf(stderr, "nfpark sim: %s\n", a.error().c_str());
    return 2;
  }
  if (a.help()) {
    std::fputs(a.usage().c_str(), stdout);
    return 0;
  }
  sim::Scenario sc;
  std::string err;
  if (!sim::load_scenario(a.pos(0), a.flag_set("quick"), sc, err)) {
    std::fprintf(stderr, "nfpark sim: %s\n", err.c_str());
    return 2;
  }
  const bool progress = !a.flag_set("no-progress");
  const bool tty = isatty(STDERR_FILENO);
  std::vector<sim::RunReport> runs;
  for (size_t i = 0; i < sc.runs.size(); ++i) {
    const sim::SimRunConfig& c = sc.runs[i];
    char head[64];
    std::snprintf(head, sizeof head, "[sim %s] %zu/%zu", sc.name.c_str(), i + 1, sc.runs.size());
    double last_line = 0;
    sim::ProgressFn fn = [&](sim::Picos now, sim::Picos dur, uint64_t pkts, double wall) {
      if (!tty && wall - last_line < 10) return;
      last_line = wall;
      std::fprintf(stderr, "%s%s %s: %3.0f%% of %.3g ms simulated, %.2f M packets, %.2f M pkt/s%s",
                   tty ? "\r" : "", head, sim::to_string(c.mode), 100.0 * double(now) / double(dur),
                   double(dur) / 1e9, double(pkts) / 1e6, double(pkts) / wall / 1e6,
                   tty ? "" : "\n");
    };
    sim::RunReport r;
    const sim::ProgressFn pf = progress ? fn : sim::ProgressFn{};
    if (!(c.search.max_rate ? sim::run_max_rate(c, r, err, pf) : sim::run_sim(c, r, err, pf))) {
      if (progress && tty) std::fputc('\n', stderr);
      std::fprintf(stderr, "nfpark sim: %s: %s\n", c.label.c_str(), err.c_str());
      return 2;
    }
    if (progress)
      std::fprintf(stderr, "%s%s %s %s: %llu packets, %.2f s (event loop %.2f M pkt/s)%s\n",
                   tty ? "\r" : "", head, r.mode.c_str(), params_text(r).c_str(),
                   static_cast<unsigned long long>(r.packets_in), r.wall_seconds,
                   r.engine_seconds > 0 ? double(r.packets_in) / r.engine_seconds / 1e6 : 0.0,
                   tty ? "\033[K" : "");
    runs.push_back(std::move(r));
  }
  if (a.has("csv") && !write_csv(a.get("csv"), runs, err)) {
    std::fprintf(stderr, "nfpark sim: %s\n", err.c_str());
    return 2;
  }
  if (a.flag_set("json"))
    std::fputs(sim::runs_to_json(runs).c_str(), stdout);
  else
    print_text(sc, runs);
  int rc = 0;
  for (const auto& r : runs) {
    if (!r.balanced) {
      std::fprintf(stderr, "nfpark sim: %s %s: packets in != out + drops: a bug\n", r.mode.c_str(),
                   params_text(r).c_str());
      rc = 1;
    }
    if (!r.pools_full) {
      std::fprintf(stderr, "nfpark sim: %s %s: packet records not all returned: a leak\n",
                   r.mode.c_str(), params_text(r).c_str());
      rc = 1;
    }
  }
  return rc;
}

}  // namespace nfpark::app
