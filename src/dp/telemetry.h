// LiveStats: a live run (live ports, role switch or nf) made observable while it runs.
//
// - About once a second the run's loop hands its counters to publish(); they are copied under
//   a mutex into a snapshot (never per packet: the loop's own counters stay plain integers).
// - DPDK's telemetry thread answers `/nfpark/stats` from that snapshot, so
//   `dpdk-telemetry.py -f nfpark<PID>` (socket /var/run/dpdk/nfpark<PID>/dpdk_telemetry.v2)
//   reads a dict: role, seconds, packets/bytes in and out, to and from the NF, drops, and every
//   extra counter the loop adds. `/nfpark/rates` gives the rates over the last interval.
// - Every 2 s, unless `--quiet`, one line on stderr:
//     nfpark run [switch]: 12 s  in 8.2 kpps 95.1 Mb/s  out 8.2 kpps 95.0 Mb/s  to NF 8.2 kpps
//     from NF 8.2 kpps  drops 0
// Parameters: the interval (2 s) and the role's name. Counters: those published, no others.
// One instance per process (telemetry commands are process-wide).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/time.h"

namespace nfpark::dp {

struct LiveSample {
  uint64_t in_packets = 0, in_bytes = 0, out_packets = 0, out_bytes = 0;
  uint64_t to_nf = 0, from_nf = 0, drops = 0;
  std::vector<std::pair<std::string, uint64_t>> extra;  // the mode's counters, named
};

class LiveStats {
 public:
  // Registers the telemetry commands (once per process) and makes this the one they read.
  // `start`: when the run started on the loop's clock (0: at the first publish()).
  LiveStats(std::string role, bool quiet, Nanos start);
  ~LiveStats();
  LiveStats(const LiveStats&) = delete;
  LiveStats& operator=(const LiveStats&) = delete;

  // True when a sample is due (the loop builds one only then).
  bool due(Nanos now) const { return now >= next_; }
  void publish(Nanos now, LiveSample s);

 private:
  std::string role_;
  bool quiet_;
  Nanos start_, next_, last_ = 0;
  LiveSample prev_;
};

}  // namespace nfpark::dp
