// Readers of a scenario's sections (scenario.h lists the keys). `where` names the file (and the
// run) in error messages; `dir` is the file's directory, for relative paths.
#pragma once
#include <string>

#include "nf/toml_fwd.h"
#include "sim/run_config.h"

namespace nfpark::sim {

// [sim], [traffic], [switch], [nf_server] and [park] of one expanded run.
bool parse_run(const toml::table& root, const std::string& where, const std::string& dir,
               SimRunConfig& c, std::string& err);
// [park] (and the other mode sections), decoded by `nfpark run`'s settings table.
bool parse_park(const toml::table& root, const std::string& where, park::ParkConfig& pc,
                std::string& err);
// [queuemem]: queues, slices, batch, header_array, min_payload, lost_after_us, seal_after_us,
// key, poll_ns.
bool parse_queuemem(const toml::table& root, const std::string& where, SimRunConfig& c,
                    std::string& err);

// [faults] and [reframe] (scenario_nf.cc): nfpark run's keys; after [nf_server] (reframe_us).
bool parse_nf_extras(const toml::table& root, const std::string& where, SimRunConfig& c,
                     std::string& err);

// [nfslicer] and [nicmem] (nic_scenario.cc): the NIC modes' settings, nfpark run's keys.
bool parse_nic(const toml::table& root, const std::string& where, SimRunConfig& c,
               std::string& err);

}  // namespace nfpark::sim
