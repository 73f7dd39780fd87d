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
// [park], with the keys and rules of `nfpark run`'s [park].
bool parse_park(const toml::table& root, const std::string& where, park::ParkConfig& pc,
                std::string& err);

}  // namespace nfpark::sim
