// run_sim: builds the topology of one SimRunConfig and runs it to the end.
//
//   traffic ports 0..T-1 ── Switch ── NF port T+k ── NfServer k   (k < nf_servers)
//        (TrafficSource in, Collector out)
// A flow goes to the NF server park::ServerChoice picks (5-tuple hash, as `nfpark run
// --nf-servers`). Sources stop at `duration`; the run goes on until every packet in flight has
// come out (or `drain_limit` more has passed), then the mode
// drains what it still holds. A report says whether packets in = out + drops held and whether
// every record went back to its pool.
#pragma once
#include <functional>
#include <string>

#include "sim/run_config.h"
#include "sim/run_report.h"

namespace nfpark::sim {

// Progress: simulated time reached, the run's duration, packets in so far, wall seconds.
using ProgressFn = std::function<void(Picos now, Picos duration, uint64_t packets, double wall)>;

// False with `err` set (naming the setting and the fix) when the run cannot be built.
bool run_sim(const SimRunConfig& cfg, RunReport& out, std::string& err,
             const ProgressFn& progress = {});

}  // namespace nfpark::sim
