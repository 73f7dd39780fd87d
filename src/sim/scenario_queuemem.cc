// [queuemem] of a scenario: park::QueueMemConfig's keys as `nfpark run` names them
// (docs/queuemem.md), with the simulator's defaults (SimRunConfig::sim_queuemem: the P4's
// queues, slices and batch). `ports` is the number of traffic ports here.
#include "sim/scenario_sections.h"
#include "sim/toml_section.h"

namespace nfpark::sim {

bool parse_queuemem(const toml::table& root, const std::string& where, SimRunConfig& c,
                    std::string& err) {
  TomlSection s(root.get_as<toml::table>("queuemem"), "queuemem", err, where);
  park::QueueMemConfig& q = c.queuemem;
  double lost_us = double(q.lost_after) / 1e3, seal_us = double(q.seal_after) / 1e3;
  double poll_ns = double(c.queuemem_poll) / double(kNs);
  if (!s.get("queues", q.queues) || !s.get("slices", q.slices) || !s.get("batch", q.batch) ||
      !s.get("header_array", q.header_array) || !s.get("min_payload", q.min_payload) ||
      !s.get("lost_after_us", lost_us) || !s.get("seal_after_us", seal_us) ||
      !s.get("poll_ns", poll_ns))
    return false;
  if (!s.check_unknown()) return false;
  q.lost_after = Nanos(lost_us * 1e3 + 0.5);
  q.seal_after = Nanos(seal_us * 1e3 + 0.5);
  if (poll_ns < 1) return s.fail("poll_ns", "a number of nanoseconds >= 1");
  c.queuemem_poll = Picos(poll_ns * double(kNs) + 0.5);
  if (std::string e = q.validate(); !e.empty()) return err = where + ": [queuemem] " + e, false;
  return true;
}

}  // namespace nfpark::sim
