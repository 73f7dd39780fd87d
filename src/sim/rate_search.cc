#include "sim/rate_search.h"

#include <cstdio>

namespace nfpark::sim {

uint64_t lost_packets(const RunReport& r) {
  uint64_t nf = 0;
  for (auto& [k, v] : r.drops)
    if (k == "nf") nf = v;
  return r.drops_total + r.in_flight_at_end - nf;
}

namespace {

bool healthy(const SimRunConfig& cfg, const RunReport& r) {
  return double(lost_packets(r)) <= cfg.search.max_drop * double(r.packets_in) &&
         r.out_mpps >= (1 - cfg.search.max_shortfall) * r.in_mpps &&
         r.latency_p99_us <= double(cfg.search.max_p99) / double(kUs);
}

std::string rate_literal(double g) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", g);
  return b;
}

}  // namespace

bool run_max_rate(const SimRunConfig& cfg, RunReport& out, std::string& err,
                  const ProgressFn& progress) {
  if (cfg.traffic.pattern.kind != PatternKind::kConstant ||
      cfg.traffic.source != SourceKind::kSynthetic)
    return err = "[sim] search = \"max_rate\" needs synthetic traffic at a constant rate", false;
  double lo = 0, hi = cfg.traffic.pattern.gbps;
  bool found = false;
  SimRunConfig c = cfg;
  for (int step = 0; step <= cfg.search.steps; ++step) {
    const double rate = step == 0 ? hi : (lo + hi) / 2;
    c.traffic.pattern.gbps = rate;
    RunReport r;
    if (!run_sim(c, r, err, progress)) return false;
    if (healthy(cfg, r)) {
      lo = rate;
      out = std::move(r);
      found = true;
      if (step == 0) break;  // the upper bound itself is healthy
    } else {
      hi = rate;
    }
  }
  if (!found) {
    err = "no healthy rate found down to " + rate_literal(hi) +
          " Gbps per port ([sim] search_max_drop / search_max_p99_us, or more search_steps)";
    return false;
  }
  out.params.emplace_back("search.rate_gbps", rate_literal(lo));
  return true;
}

}  // namespace nfpark::sim
