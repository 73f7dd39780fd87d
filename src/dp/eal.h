// Eal: DPDK's environment, set up for this machine or a real one. Without hugepages or NICs it
// runs with --no-huge --no-pci and no shared config (no files shared between processes), which
// is all that ring, pcap, memif and af_packet ports need. Nothing of it stays on disk: the
// runtime directory EAL makes (/var/run/dpdk/nfpark<PID>) is removed at cleanup, and those of
// killed runs at the next start (runtime_dirs.h).
#pragma once
#include <string>
#include <vector>

namespace nfpark::dp {

struct EalOptions {
  unsigned mem_mb = 512;  // memory EAL may use (no hugepages: plain pages)
  unsigned lcores = 1;    // 1: everything on one core; 2: NF server on a second one; N + 1 for
                          // --workers N (floated over the CPUs when there are fewer)
  bool hugepages = false;
  bool telemetry = false;  // DPDK's telemetry socket in the runtime directory          // use
                           // hugepages and PCI devices (real deployments)
  std::vector<std::string> extra;  // more EAL arguments, e.g. --vdev=...
};

// Initialises EAL once per process. Returns false with `err` set on failure.
bool eal_init(const EalOptions& o, std::string& err);
void eal_cleanup();

}  // namespace nfpark::dp
