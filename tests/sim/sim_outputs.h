// Test helper: the frames a simulated run sends out, by input sequence number.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "sim/run.h"
#include "sim/run_topology.h"

namespace nfpark::sim {

// Runs `c` to its end; `tap` sees every output packet in output order. Returns the report.
inline RunReport run_tapped(const SimRunConfig& c, const std::function<void(const Packet&)>& tap) {
  RunTopology t;
  std::string err;
  EXPECT_TRUE(t.build(c, err)) << err;
  t.collector->set_tap([&](const Packet& p, Picos) { tap(p); });
  t.start();
  t.engine.run();
  RunReport r;
  t.finish(c, r);
  return r;
}

// A counter of the report by name (0 when the run did not report it).
inline uint64_t counter_of(const RunReport& r, const std::string& name) {
  auto it = r.counters.values.find(name);
  return it == r.counters.values.end() ? 0 : it->second;
}

// Runs `c` (which must drop nothing: checked balanced, pools full, no drop) and returns each
// output frame's bytes by its input sequence number; `each` sees every output packet too.
inline std::map<uint64_t, std::vector<uint8_t>> run_outputs(
    const SimRunConfig& c, const std::function<void(const Packet&)>& each = {}) {
  std::map<uint64_t, std::vector<uint8_t>> out;
  const RunReport r = run_tapped(c, [&](const Packet& p) {
    out[p.seq].assign(p.data(), p.data() + p.head);
    if (each) each(p);
  });
  EXPECT_TRUE(r.balanced && r.pools_full);
  EXPECT_EQ(r.drops_total, 0u);
  return out;
}

}  // namespace nfpark::sim
