#include "dp/runtime_dirs.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace nfpark::dp {

std::string dpdk_runtime_base() {
  if (geteuid() == 0) return "/var/run/dpdk";
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  return std::string(xdg && *xdg ? xdg : "/tmp") + "/dpdk";
}

namespace {
// The PID in `name` if it is `prefix` followed by decimal digits only, else 0.
pid_t pid_of(const char* name, const std::string& prefix) {
  if (std::strncmp(name, prefix.c_str(), prefix.size()) != 0) return 0;
  const char* digits = name + prefix.size();
  if (!*digits || std::strlen(digits) > 9) return 0;
  long pid = 0;
  for (const char* c = digits; *c; ++c) {
    if (*c < '0' || *c > '9') return 0;
    pid = pid * 10 + (*c - '0');
  }
  return pid_t(pid);
}

bool running(pid_t pid) {
  return kill(pid, 0) == 0 || errno != ESRCH;
}
}  // namespace

unsigned remove_stale_runtime_dirs(const std::string& base, const std::string& prefix) {
  DIR* d = opendir(base.c_str());
  if (!d) return 0;
  unsigned removed = 0;
  while (const dirent* e = readdir(d)) {
    const pid_t pid = pid_of(e->d_name, prefix);
    if (pid <= 0 || pid == getpid() || running(pid)) continue;
    const std::string dir = base + "/" + e->d_name;
    for (const char* sock : {"/dpdk_telemetry.v2", "/telemetry"}) unlink((dir + sock).c_str());
    if (rmdir(dir.c_str()) == 0) ++removed;
  }
  closedir(d);
  return removed;
}

}  // namespace nfpark::dp
