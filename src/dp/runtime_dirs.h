// Runtime directories of nfpark runs that are gone. EAL makes one per file prefix
// (/var/run/dpdk/nfpark<PID> as root, $XDG_RUNTIME_DIR/dpdk/... or /tmp/dpdk/... otherwise) and a
// run that ends normally removes its own (eal.cc). A run killed with SIGKILL cannot: its
// directory and telemetry socket stay, one per killed run, for ever. Each run therefore sweeps
// the directories of nfpark processes that no longer exist before EAL starts.
//
// Only directories named exactly `<prefix><PID>` whose PID is not a live process are touched,
// only DPDK's telemetry sockets are unlinked in them, and the directory itself is removed only if
// that leaves it empty (rmdir): nothing else a user keeps there is lost. A PID that is alive
// again (reused by another process) keeps its directory until that process is gone too.
#pragma once
#include <string>

namespace nfpark::dp {

// Where EAL puts runtime directories for this user (the rule of DPDK 22.11's eal_get_runtime_dir).
std::string dpdk_runtime_base();

// Removes `base`/<prefix><PID> for every PID that is not running. Returns how many it removed.
unsigned remove_stale_runtime_dirs(const std::string& base, const std::string& prefix);

}  // namespace nfpark::dp
