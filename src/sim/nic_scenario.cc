// [nfslicer] and [nicmem] of a scenario are `nfpark run`'s: decoded by its settings table
// (run/settings.cc) through run::Loader, with the same keys, ranges and messages. The slicer's
// generations are keyed from the run's seed (nfpark run draws its secret from the OS): a run is
// a function of its scenario.
#include "park/secret.h"
#include "run/load.h"
#include "sim/scenario_sections.h"

namespace nfpark::sim {

bool parse_nic(const toml::table& root, const std::string& where, SimRunConfig& c,
               std::string& err) {
  run::Loader l;
  if (!l.load_sections(root, where, {"nfslicer", "nicmem"}, err)) return false;
  const run::RunConfig& rc = l.config();
  if (auto e = park::check(rc.slicer)) return err = where + ": [nfslicer] " + *e, false;
  c.nic.slicer = rc.slicer;
  c.nic.header_segment = rc.header_segment;
  c.nic.nicmem_pool = rc.nicmem_mbufs;
  park::Key128 seed{};
  for (size_t i = 0; i < 8; ++i) seed[i] = uint8_t(c.seed >> (8 * i));
  c.nic.slicer.key = park::derive_key(seed, park::kLabelSlicerGen);
  return true;
}

}  // namespace nfpark::sim
