#include "dp/eal.h"

#include <rte_eal.h>
#include <rte_errno.h>
#include <sched.h>
#include <unistd.h>

#include <string>

#include "dp/control_gate.h"
#include "dp/runtime_dirs.h"

namespace nfpark::dp {

namespace {
// EAL makes a runtime directory per file prefix (/var/run/dpdk/nfpark<PID>) even with
// --no-shconf, and leaves it behind empty; --in-memory, which would not make it, refuses
// --no-huge in DPDK 22.11. Removed here (rmdir: only when empty, so nothing else is lost).
// The telemetry sockets (live runs) are removed first: DPDK unlinks them only at exit.
void remove_runtime_dir() {
  const char* dir = rte_eal_get_runtime_dir();
  if (!dir || !*dir) return;
  for (const char* sock : {"/dpdk_telemetry.v2", "/telemetry"})
    unlink((dir + std::string(sock)).c_str());
  rmdir(dir);
}
}  // namespace

bool eal_init(const EalOptions& o, std::string& err) {
  remove_stale_runtime_dirs(dpdk_runtime_base(), "nfpark");  // left by runs that were killed
  std::vector<std::string> args = {"nfpark", "-m", std::to_string(o.mem_mb),
                                   "--file-prefix=nfpark" + std::to_string(getpid()),
                                   "--log-level=*:error"};
  // More lcores than CPUs this process may use (--workers N on a small machine): every lcore
  // floats over all of them, and the kernel shares them out (busy loops still progress).
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  unsigned ncpu = 0;
  std::string list;
  if (sched_getaffinity(0, sizeof cpus, &cpus) == 0)
    for (unsigned c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &cpus)) {
        list += (ncpu++ ? "," : "") + std::to_string(c);
      }
  if (o.lcores > 1 && ncpu > 0 && o.lcores > ncpu) {
    args.push_back("--lcores=(0-" + std::to_string(o.lcores - 1) + ")@(" + list + ")");
  } else {
    args.push_back("-l");
    args.push_back(o.lcores > 1 ? "0-" + std::to_string(o.lcores - 1) : "0");
  }
  if (!o.hugepages) {
    args.push_back("--no-huge");
    args.push_back("--no-pci");
    args.push_back("--no-shconf");
    if (!o.telemetry) args.push_back("--no-telemetry");
  }
  args.insert(args.end(), o.extra.begin(), o.extra.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  if (rte_eal_init(int(args.size()), argv.data()) < 0) {
    err = std::string("DPDK EAL init failed: ") + rte_strerror(rte_errno) +
          " (nfpark needs no hugepages; try --mem-mb to change memory)";
    remove_runtime_dir();
    return false;
  }
  return true;
}

void eal_cleanup() {
  ControlGate::instance().park_for_exit();  // no interrupt-thread work during the teardown
  rte_eal_cleanup();
  remove_runtime_dir();
}

}  // namespace nfpark::dp
