// The run's config and result come from the DPDK-free run module (src/run); the engine only
// consumes them. These names keep src/dp's spelling short.
#pragma once
#include "run/run_config.h"
#include "run/run_result.h"

namespace nfpark::dp {
using run::End;
using run::Faults;
using run::Mode;
using run::Role;
using run::RunConfig;
using run::RunResult;
using run::to_string;
}  // namespace nfpark::dp
