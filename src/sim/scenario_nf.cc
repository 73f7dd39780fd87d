// [faults] and [reframe] of a scenario are `nfpark run`'s: decoded by its settings table
// (run/settings.cc) through run::Loader, with the same keys, ranges, defaults and messages.
// Reframer's T_buff is [nf_server] reframe_us (nfpark run's [run] reframe_us, beside the chain
// and notify_drops there); [reframe] without it is refused, as `nfpark run` refuses a box
// without --reframe.
#include "run/budget.h"
#include "run/load.h"
#include "sim/scenario_sections.h"
#include "sim/toml_section.h"

namespace nfpark::sim {

bool parse_nf_extras(const toml::table& root, const std::string& where, SimRunConfig& c,
                     std::string& err) {
  run::Loader l;
  if (!l.load_sections(root, where, {"faults", "reframe"}, err)) return false;
  const run::RunConfig& rc = l.config();
  c.faults = rc.faults;
  c.reframe = rc.reframe;
  const toml::table* r = root.get_as<toml::table>("reframe");
  if (c.reframe_us <= 0 && r && !r->empty())
    return err = where + ": [reframe] needs Reframer on: give [nf_server] reframe_us", false;
  if (c.reframe_us > 0) {  // the fields' ranges are the table's; this checks how they combine
    reframe::ReorderConfig cfg = c.reframe.cfg;
    cfg.t_buff = Nanos(c.reframe_us * 1e3);
    if (!cfg.max_held_packets) cfg.max_held_packets = run::kReframeHold;
    if (std::string e = cfg.validate(); !e.empty()) return err = where + ": [reframe] " + e, false;
  }
  return true;
}

}  // namespace nfpark::sim
