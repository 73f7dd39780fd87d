// SimRunConfig: one simulated run — traffic, switch, NF servers, mode and measurement — as plain
// structs (scenario.h fills them from a scenario file). Units are in the names or the types
// (Picos); rates are Gbps on the wire (frames + 24 B of preamble, FCS and gap).
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nf/toml_fwd.h"
#include "park/fault_injector.h"
#include "park/payload_park.h"
#include "park/queue_mem_config.h"
#include "run/run_config.h"
#include "sim/nf_server.h"
#include "sim/nic_program.h"
#include "sim/programs.h"
#include "sim/rate_pattern.h"
#include "sim/switch_config.h"
#include "trace/generator.h"

namespace nfpark::sim {

enum class SourceKind : uint8_t { kSynthetic, kPcap };

struct TrafficConfig {
  SourceKind source = SourceKind::kSynthetic;
  uint16_t ports = 1;        // traffic ports (each in and out)
  double line_gbps = 100;    // their line rate
  RatePattern pattern;       // offered load per port (synthetic, or pcap with timing = "rate")
  trace::GenConfig gen;      // synthetic: flows per port, size, slf, proto, zipf, ipv6, vlan, seed
  std::string pcap;          // capture to replay
  bool trace_timing = true;  // pcap: its own timestamps (else `pattern`)
  uint64_t loops = 0;        // pcap: passes over the capture (0 = until the duration)
  bool ecmp = false;         // output port by flow hash (else the port it came in on)
};

// Finding the largest healthy load instead of running one (rate_search.h).
struct SearchConfig {
  bool max_rate = false;        // [sim] search = "max_rate"
  double max_drop = 0.001;      // lost / offered (PayloadPark's health criterion: < 0.1%)
  Picos max_p99 = 200 * kUs;    // latency bound (PayloadPark's worst-case Split->Merge delta)
  double max_shortfall = 0.02;  // output rate may fall this far below the input rate
  int steps = 8;                // bisection steps below the pattern's rate
};

struct SimRunConfig {
  SimMode mode = SimMode::kBaseline;
  TrafficConfig traffic;
  SwitchConfig sw;  // port rates are set by the run: traffic ports, then NF ports
  uint16_t nf_servers = 1;
  NfServerConfig nf;  // each server's (seeds differ per server)
  std::string chain = "forward";
  std::shared_ptr<const toml::table> nf_params;  // [nf.NAME] tables for the chain
  park::ParkConfig park;
  park::QueueMemConfig queuemem = sim_queuemem();  // [queuemem]
  Picos queuemem_poll = kUs;                       // [queuemem] poll_ns: the program's timer
  NicConfig nic;                                   // [nfslicer], [nicmem]: the NIC modes
  park::FaultConfig faults;                        // [faults]: on the NF servers' way back
  double reframe_us = 0;  // [nf_server] reframe_us: Reframer's T_buff (µs; 0: no Reframer)
  run::Reframe reframe;   // [reframe]: its other settings, placement (in-chain or box)
  // QUEUE-MEM's defaults in the simulator: the P4's (31 payload queues a port, 15 slices,
  // batches of 20), and a recovery timeout fit for microsecond NF latencies.
  static park::QueueMemConfig sim_queuemem() {
    park::QueueMemConfig c;
    c.queues = 31;
    c.slices = 15;
    c.lost_after = 100 * kMicro;
    c.seal_after = 20 * kMicro;
    return c;
  }
  Picos duration = 10 * kMs;      // traffic starts at 0 and stops here
  Picos warmup = 0;               // throughput counts [warmup, duration)
  Picos interval = 100 * kUs;     // time-series step
  Picos drain_limit = 100 * kMs;  // after `duration`, stop waiting for in-flight packets
  uint64_t seed = 1;
  bool full_bytes = false;            // records hold whole frames (else the first record_bytes)
  uint32_t record_bytes = 192;        // bytes a record holds when not full_bytes
  bool reorder = true;                // analyse the output order (RFC 4737) after the run
  uint64_t reorder_cap = 10'000'000;  // packets whose order is analysed (the first ones)
  SearchConfig search;
  // What this run is, for the report: ("variant", "\"pp160\""), ("traffic.size", "256"), ...
  // (values are JSON literals).
  std::vector<std::pair<std::string, std::string>> params;
  std::string label;     // for progress lines
  std::string out_pcap;  // write every output frame here (the collector's tap; --out-pcap)
};

}  // namespace nfpark::sim
