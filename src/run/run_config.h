// RunConfig: everything `nfpark run` needs, as a plain struct — no DPDK, so the dataplane
// (src/dp) and the simulator load the same files. Filled only through the settings table
// (run/settings.h), from a TOML file and/or command-line flags, and checked by run/load.h; the
// table holds each setting's name, key, flag, type, range, unit, default and help (docs/run.md
// is generated from it).
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nf/toml_fwd.h"
#include "park/fault_injector.h"
#include "park/no_split.h"
#include "park/payload_park.h"
#include "park/queue_mem_config.h"
#include "park/secret.h"
#include "park/server_choice.h"
#include "park/slicer.h"
#include "reframe/reorder_config.h"

namespace nfpark::run {

// Which roles this process plays: both (embedded, NF link = in-process rings), only the switch
// (NF link = an external port, e.g. memif to another process), or only the NF server.
enum class Role : uint8_t { kAll, kSwitch, kNf };
std::optional<Role> parse_role(std::string_view s);

// Where Reframer runs ([reframe] placement): in front of the chain on the NF server's lcore
// (in-chain), or on an lcore of its own between the NF link and the chain (box: dp/reframe_box.h).
enum class Placement : uint8_t { kInChain, kBox };
std::optional<Placement> parse_placement(std::string_view s);

// Reframer's parameters beyond T_buff ([reframe]); t_buff comes from reframe_us and
// max_held_packets 0 means the budget's default (run/budget.h).
struct Reframe {
  reframe::ReorderConfig cfg{.max_held_packets = 0};
  Placement placement = Placement::kInChain;
  bool bypass_syn = true;             // TCP SYN / SYN-ACK never delayed
  std::vector<uint64_t> bypass_dscp;  // packets with these DSCP values never delayed
  park::NoSplitFilter bypass_match;   // header-match bypass class: destinations, ports, protocols
};

enum class Mode : uint8_t { kBaseline, kPayloadPark, kQueueMem, kNfSlicer, kNicmem, kSplit };
std::optional<Mode> parse_mode(std::string_view s);
std::string_view to_string(Mode m);

using Faults = park::FaultConfig;  // [faults], --nf-*: park/fault_injector.h

// Defaults live in the settings table (run/settings.cc), which load.h applies first; the
// initialisers below only keep a default-constructed struct usable in unit tests.
struct RunConfig {
  Mode mode = Mode::kBaseline;
  Role role = Role::kAll;
  std::string nf_port;      // role switch: the port to the NF server (vdev:...); several, one
                            // per NF server, joined by '+' (nf_ports())
  uint32_t nf_servers = 1;  // NF servers, one NF port each
  park::Spread nf_spread = park::Spread::kFiveTuple;  // how flows are spread over them
  double nf_dead_after_ms = 500;                      // role switch: liveness (server_choice.h)
  std::string port;                                   // role nf: the port to the switch (vdev:...)
  double idle_exit_s = 0;  // live / role nf: exit after this long without traffic
                           // once traffic was seen (0: run until signal/timeout)
  std::string chain = "forward";
  std::string in_path, out_path;           // pcap replay in / pcap written out
  std::vector<std::string> traffic_ports;  // live traffic: two port specs instead of in/out
  park::ParkConfig park;                   // PayloadPark parameters ([park])
  park::QueueMemConfig queuemem;           // QUEUE-MEM parameters ([queuemem])
  park::SlicerConfig slicer;               // NFSlicer parameters ([nfslicer])
  uint32_t header_segment = 64;            // nicmem/split: bytes in the host header segment
                                           // (grown to cover L2-L4 headers when longer)
  uint32_t nicmem_mbufs = 8192;            // nicmem: capacity of the NIC-memory pool (packets)
  bool notify_drops = true;                // NF server returns explicit drops
  bool nf_lcore = false;                   // NF server on its own lcore (else inline)
  bool nf_ring = false;                    // inline NF server behind a ring pair (else a
                                           // direct call where valid: dp/switch_loop.h)
  uint32_t workers = 1;                    // lcores flows are sharded over ([dp] workers)
  uint32_t worker = 0;                     // which of them this config is (run/worker_config.h)
  Faults faults;
  double reframe_us = 0;                   // Reframer T_buff in front of the chain; 0 = off
  Reframe reframe;                         // Reframer's other parameters ([reframe])
  bool pace = false;                       // replay the input at its timestamps (else at once)
  bool pad = false;                        // rebuild truncated records to their wire length
  uint32_t pool_mbufs = 0;                 // 0 = derived from slots and rings (run/budget.h)
  uint32_t mem_mb = 0;                     // EAL memory; 0 = derived from the pools
  double timeout_s = 600;                  // hard stop
  bool progress = true;                    // progress line on stderr for long runs
  bool quiet = false;                      // live runs: no rate summary on stderr
  std::optional<park::Key128> secret;      // the run's secret ([run] secret); none: drawn from
                                           // the OS by Loader::finish (park/secret.h)
  std::shared_ptr<toml::table> nf_config;  // the whole config; the chain reads [nf.NAME]
  std::string source;                      // where this came from (file name or "")
  struct SimOnly {                         // settings only the simulator reads (sim_only)
    double queuemem_poll_ns = 1000;        // [queuemem] poll_ns: QueueMemProgram's timer
  } sim;
};

// The NF ports of a role-switch run: nf_port split at '+'.
std::vector<std::string> nf_ports(const RunConfig& c);

// Parses a 32-hex-digit tag key.
bool parse_tag_key(const std::string& hex, std::array<uint8_t, 16>& key);

}  // namespace nfpark::run
