// run_max_rate: the largest offered load a deployment carries healthily, found by bisection on
// the traffic ports' constant rate — the way PayloadPark measures peak goodput ("healthy when the
// packet drop rate is below 0.1%", §6.1), instead of driving the system into overload, where
// deep switch buffers and EXP eviction make it collapse (a header queued longer than one slot
// table traversal finds its payload evicted).
//
// A run is healthy when the packets lost (every drop but the NF chain's own verdicts) are at most
// max_drop of the packets offered, the output rate over the measurement window is within
// max_shortfall of the input rate (default 2%: packets in flight at the window's end, about
// latency / window, count as a shortfall), and the 99th-percentile latency is at most max_p99. A
// rate just above capacity is absorbed by the switch buffer during a short run: it shows up as a
// shortfall and as latency before it shows up as loss. Resolution: the shortfall bound plus the
// last bisection step.
#pragma once
#include <string>

#include "sim/run.h"

namespace nfpark::sim {

// Runs `cfg` at most steps + 1 times (its pattern must be constant) and returns in `out` the run
// at the highest healthy rate found, with "search.rate_gbps" added to its params (the rate per
// traffic port). The search starts at the pattern's rate (as the upper bound); a rate that is
// healthy ends it at once. False with `err` set when a run cannot be built or no rate down to
// 1/2^steps of it is healthy.
bool run_max_rate(const SimRunConfig& cfg, RunReport& out, std::string& err,
                  const ProgressFn& progress = {});

// The loss a health check counts: every drop except the chain's verdicts.
uint64_t lost_packets(const RunReport& r);

}  // namespace nfpark::sim
