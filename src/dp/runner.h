// Runner: `nfpark run` end to end in one process — the "embedded" deployment.
//
//   input pcap --feeder--> [traffic port] --switch: split--> [NF link] --> NF server (chain)
//   output pcap <--writer-- [traffic port] <--switch: merge-- [NF link] <--'
//
// The traffic port and the NF link are DPDK ring ports (rte_eth_from_rings), so the switch and
// the NF server use the ethdev API exactly as on memif or a NIC. The feeder plays the wire: it
// copies the input trace into mbufs and enqueues them on the traffic port's RX ring; the writer
// drains the traffic port's TX ring into the output pcap, stamping each packet with its input
// timestamp (carried in an mbuf dynamic field), so the output of two modes can be compared byte
// for byte. The NF server runs inline on the same lcore (default) or on a second lcore.
//
// The run ends when the input is exhausted and nothing has moved for a while; whatever a mode
// still holds is drained (counted), and every mempool must then be full again.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/counters.h"
#include "dp/run_config.h"

namespace nfpark::dp {

struct RunResult {
  std::string mode;
  uint64_t packets_in = 0, bytes_in = 0, packets_out = 0, bytes_out = 0;
  uint64_t packets_to_nf = 0, bytes_to_nf = 0, packets_from_nf = 0, bytes_from_nf = 0;
  uint64_t nf_drops = 0, fault_drops = 0, duplicates = 0, switch_drops = 0;
  CounterMap drops;      // reason -> count (NF drops included as "nf")
  CounterMap park;       // the mode's counters
  CounterMap nf;         // the chain's counters
  CounterMap faults;
  CounterMap ports;      // per-port packets/bytes: "<port>.rx_packets", ...
  CounterMap reframe;    // Reframer's counters, when it ran
  std::vector<std::string> warnings;  // the NFs' end-of-run warnings, "<nf>: <what and fix>"
  bool reframe_on = false;
  double reframe_slf_in = 0, reframe_slf_out = 0, reframe_useless_wait_us = 0;
  uint64_t reframe_held = 0;
  uint64_t held_at_exit = 0;
  bool pools_full = false;
  bool ran = false;      // the dataplane started (false: nothing to report)
  double seconds = 0;
  bool balanced() const {
    return packets_in + duplicates == packets_out + nf_drops + fault_drops + switch_drops;
  }
  std::string to_json() const;
  std::string to_text() const;
};

// Runs the config. Returns 0 on success, 1 if the run failed (with `err`), 2 on bad input.
int run(const RunConfig& cfg, RunResult& res, std::string& err);
// The NF-server role alone (nf_role.cc): serves `cfg.port` until a signal or idle exit.
int run_nf_role(const RunConfig& cfg, RunResult& res, std::string& err);

}  // namespace nfpark::dp
