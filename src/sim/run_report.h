// RunReport: what one simulated run measured, and its JSON object and CSV time series.
//
// JSON (one element of "runs"; the first keys are the shape issue 15 asks for):
//   mode, params, throughput_in_gbps, throughput_out_gbps, nf_link_gbps, drops {reason: n},
//   latency_us {avg, p50, p90, p99}, peak_buffer_bytes, out_of_order_pct, reordering_extent,
// then: throughput_in_mpps, throughput_out_mpps, goodput_gbps, stream_out_of_order_pct,
//   stream_reordering_extent, packets_in, packets_out, drops_total, in_flight_at_end,
//   duplicates, balanced,
//   pools_full, nf_core_utilization, sim_seconds, wall_seconds, engine_seconds,
//   engine_cpu_seconds, events,
//   sim_packets_per_second (packets in per wall second of the event loop), counters {name: n}.
// Throughputs are Gbps on the wire (frames + 24 B) over [warmup, duration); goodput is
// PayloadPark's: 336 bits (a 42 B Eth+IPv4+UDP header) per packet delivered. out_of_order_pct and
// reordering_extent are within flows (RFC 4737 per flow, as the papers report them; the extent
// is the largest); stream_* are the same over the whole output stream.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/counters.h"
#include "trace/reorder.h"

namespace nfpark::sim {

struct IntervalRow {
  double t_ms = 0;  // end of the interval
  double in_gbps = 0, out_gbps = 0, nf_link_gbps = 0, in_mpps = 0, out_mpps = 0;
  uint64_t buffer_peak_bytes = 0, drops = 0;
  double latency_avg_us = 0, latency_p99_us = 0;
};

struct RunReport {
  std::string mode;
  std::vector<std::pair<std::string, std::string>> params;  // key, JSON literal
  double in_gbps = 0, out_gbps = 0, in_mpps = 0, out_mpps = 0;
  double nf_link_gbps = 0, goodput_gbps = 0;
  std::vector<std::pair<std::string, uint64_t>> drops;  // by reason
  double latency_avg_us = 0, latency_p50_us = 0, latency_p90_us = 0, latency_p99_us = 0;
  uint64_t peak_buffer_bytes = 0;
  trace::ReorderStats reorder;
  uint64_t packets_in = 0, packets_out = 0, drops_total = 0, in_flight_at_end = 0;
  uint64_t duplicates = 0;  // made by [faults] dup: in + duplicates = out + drops
  bool balanced = false, pools_full = false;
  double nf_core_utilization = 0;  // busy share of the NF servers' cores over the run
  double sim_seconds = 0, wall_seconds = 0;
  double engine_seconds = 0;      // wall time in the event loop (not set-up, not the analysis)
  double engine_cpu_seconds = 0;  // the same in this thread's CPU time
  uint64_t events = 0;
  CounterMap counters;
  std::vector<IntervalRow> series;

  std::string to_json() const;
  static std::string csv_header();
  std::string csv_rows() const;
  // A label for file names: the mode and the params' values ("payloadpark_pp160_256").
  std::string slug() const;
};

// {"runs": [...]} with one object per report.
std::string runs_to_json(const std::vector<RunReport>& runs);

}  // namespace nfpark::sim
