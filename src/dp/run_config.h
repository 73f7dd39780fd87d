// RunConfig: everything `nfpark run` needs, as a plain struct. Filled from a TOML file
// (`nfpark run CONFIG.toml`) and/or command-line flags; see docs/run.md for every key.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "park/fault_injector.h"
#include "park/payload_park.h"
#include "park/queue_mem_config.h"
#include "park/slicer.h"

#include <toml++/toml.h>

namespace nfpark::dp {

// Which roles this process plays: both (embedded, NF link = in-process rings), only the switch
// (NF link = an external port, e.g. memif to another process), or only the NF server.
enum class Role : uint8_t { kAll, kSwitch, kNf };
std::optional<Role> parse_role(std::string_view s);

enum class Mode : uint8_t { kBaseline, kPayloadPark, kQueueMem, kNfSlicer, kNicmem, kSplit };
std::optional<Mode> parse_mode(std::string_view s);
std::string_view to_string(Mode m);

using Faults = park::FaultConfig;  // [faults], --nf-*: park/fault_injector.h

struct RunConfig {
  Mode mode = Mode::kBaseline;
  Role role = Role::kAll;
  std::string nf_port;                    // role switch: the port to the NF server (vdev:...)
  std::string port;                       // role nf: the port to the switch (vdev:...)
  double idle_exit_s = 0;                 // role nf: exit after this long without traffic
                                          // once traffic was seen (0: run until SIGINT/SIGTERM)
  std::string chain = "forward";
  std::string in_path, out_path;          // pcap replay in / pcap written out
  std::vector<std::string> traffic_ports; // live traffic: two port specs instead of in/out
  park::ParkConfig park;                  // PayloadPark parameters ([park])
  park::QueueMemConfig queuemem;          // QUEUE-MEM parameters ([queuemem])
  park::SlicerConfig slicer;              // NFSlicer parameters ([nfslicer])
  uint32_t header_segment = 64;           // nicmem/split: bytes in the host header segment
                                          // (grown to cover L2-L4 headers when longer)
  uint32_t nicmem_mbufs = 8192;           // nicmem: capacity of the NIC-memory pool (packets)
  bool notify_drops = true;               // NF server returns explicit drops
  bool nf_lcore = false;                  // NF server on its own lcore (else inline)
  Faults faults;
  double reframe_us = 0;                  // Reframer T_buff in front of the chain; 0 = off
  bool pace = false;                      // replay the input at its timestamps (else at once)
  uint32_t pool_mbufs = 0;                // 0 = derived from slots and rings
  uint32_t mem_mb = 0;                    // EAL memory; 0 = derived from the pools
  double timeout_s = 600;                 // hard stop
  bool progress = true;                   // progress line on stderr for long runs
  std::shared_ptr<toml::table> nf_config; // the whole config; the chain reads [nf.NAME]
  std::string source;                     // where this came from (file name or "command line")
};

// Loads a TOML config file. On error returns false with `err` naming the file, key and fix.
bool load_run_config(const std::string& path, RunConfig& cfg, std::string& err);
// Parses a 32-hex-digit tag key.
bool parse_tag_key(const std::string& hex, std::array<uint8_t, 16>& key);

}  // namespace nfpark::dp
