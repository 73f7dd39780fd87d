// [park] of a scenario is `nfpark run`'s: decoded by its settings table (run/settings.cc, one
// declaration per setting) through run::Loader, with the same keys, ranges and messages.
// ([queuemem] too: scenario_queuemem.cc, with the simulator's defaults and its poll_ns.)
// `slices` is the number of NF servers in the simulator ([nf_server] servers).
#include "run/load.h"
#include "sim/scenario_sections.h"

namespace nfpark::sim {

bool parse_park(const toml::table& root, const std::string& where, park::ParkConfig& pc,
                std::string& err) {
  run::Loader l;
  if (!l.load_sections(root, where, {"park"}, err)) return false;
  if (l.config().park.slices > 1) {
    err = where + ": [park] slices: [nf_server] servers instead (one slice per NF server)";
    return false;
  }
  pc = l.config().park;
  return true;
}

}  // namespace nfpark::sim
