// [queuemem] of a scenario is `nfpark run`'s: decoded by its settings table (run/settings.cc, one
// declaration per setting) through run::Loader in the simulator's mode — the same keys, ranges
// and messages, the table's simulator defaults (the P4's queues and slices, microsecond
// timeouts: SimRunConfig::sim_queuemem() holds the same values for configs built in code), and
// the simulator-only poll_ns (the program's timer). `ports` is the number of traffic ports here.
#include "run/load.h"
#include "sim/scenario_sections.h"

namespace nfpark::sim {

bool parse_queuemem(const toml::table& root, const std::string& where, SimRunConfig& c,
                    std::string& err) {
  run::Loader l(run::Loader::For::kSim);
  if (!l.load_sections(root, where, {"queuemem"}, err)) return false;
  if (!l.check_queuemem(err)) {
    if (err.rfind(where, 0) != 0) err = where + ": [queuemem] " + err;
    return false;
  }
  const park::QueueMemConfig& from = l.config().queuemem;
  park::QueueMemConfig& q = c.queuemem;
  q.queues = from.queues;
  q.slices = from.slices;
  q.batch = from.batch;
  q.header_array = from.header_array;
  q.min_payload = from.min_payload;
  q.lost_after = from.lost_after;
  q.seal_after = from.seal_after;
  c.queuemem_poll = Picos(l.config().sim.queuemem_poll_ns * double(kNs) + 0.5);
  return true;
}

}  // namespace nfpark::sim
