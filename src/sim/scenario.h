// Scenario: a TOML file describing one or more simulated runs (docs/sim.md lists every key).
//
//   [sim]        name, description, mode, duration_ms, warmup_ms, interval_us, drain_ms, seed,
//                full_bytes, record_bytes, reorder, reorder_cap, search, search_max_drop,
//                search_max_p99_us, search_max_shortfall, search_steps
//   [traffic]    source, ports, line_gbps, pattern and its rates, size, flows, slf, proto, zipf,
//                ipv6, vlan, pcap, timing, loops, forward
//   [switch]     preset, buffer_mb, register_mb, cell_bytes, queues, ingress_ns, egress_ns,
//                link_delay_ns, queue_limit_kb, dt_alpha, recirc_gbps
//   [nf_server]  servers, link_gbps, pcie_gbps, pcie_overhead_bytes, nic_buffer_kb, cores,
//                rx_ring, burst, service, header_ns, whole_ns, cycles_header, cycles_whole,
//                clock_ghz, burst_ns, spread, latency_us, drop, chain, notify_drops
//   [park]       as `nfpark run`'s [park] (min_payload, park_bytes, slots, max_exp, format, key,
//                no_split)
//   [nf.NAME]    the chain's NF parameters, as `nfpark run`'s
//   [[variant]]  name, mode, and "section.key" = value overrides: one run each
//   [sweep]      "section.key" = [values]: every variant at every point (several keys: every
//                combination)
//   [quick]      "section.key" = value overrides applied first under --quick; a [quick.sweep]
//                table replaces [sweep]
// Runs are expanded in order: sweep points outermost, variants inside.
#pragma once
#include <string>
#include <vector>

#include "sim/run_config.h"

namespace nfpark::sim {

struct Scenario {
  std::string name, description, path;
  std::vector<SimRunConfig> runs;
};

// Loads and expands a scenario. False with `err` naming the file, the section, the key and the
// fix (and the run, for an error in one variant or sweep point).
bool load_scenario(const std::string& path, bool quick, Scenario& out, std::string& err);

}  // namespace nfpark::sim
