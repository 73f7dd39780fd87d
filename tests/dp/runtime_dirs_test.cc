// remove_stale_runtime_dirs (src/dp/runtime_dirs.h): the runtime directories of nfpark runs that
// were killed are removed; a live process's directory, other names and anything a user put there
// are kept.
#include "dp/runtime_dirs.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace nfpark::dp {
namespace {

bool exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

pid_t dead_pid() {  // a child that has exited and been reaped: its PID runs nothing (until reused)
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  int status = 0;
  waitpid(pid, &status, 0);
  return pid;
}

struct TempBase {
  std::string dir;
  TempBase() {
    char t[] = "/tmp/nfpark_rtdirs_XXXXXX";
    dir = mkdtemp(t);
  }
  ~TempBase() { std::system(("rm -rf " + dir).c_str()); }
  std::string make(const std::string& name) const {
    const std::string p = dir + "/" + name;
    mkdir(p.c_str(), 0700);
    return p;
  }
};

TEST(RuntimeDirs, RemovesOnlyTheDirectoriesOfDeadNfparkProcesses) {
  TempBase base;
  const pid_t dead = dead_pid();
  const std::string killed = base.make("nfpark" + std::to_string(dead));
  std::ofstream(killed + "/dpdk_telemetry.v2") << "";  // what a killed live run leaves
  const std::string live = base.make("nfpark" + std::to_string(getppid()));
  const std::string self = base.make("nfpark" + std::to_string(getpid()));
  const std::string other = base.make("rte" + std::to_string(dead));            // not ours
  const std::string suffix = base.make("nfpark" + std::to_string(dead) + "x");  // not a PID
  const std::string kept = base.make("nfpark" + std::to_string(dead_pid()));
  std::ofstream(kept + "/notes.txt") << "a user's file";  // not a telemetry socket: stays

  EXPECT_EQ(remove_stale_runtime_dirs(base.dir, "nfpark"), 1u);
  EXPECT_FALSE(exists(killed));
  EXPECT_TRUE(exists(live));
  EXPECT_TRUE(exists(self));
  EXPECT_TRUE(exists(other));
  EXPECT_TRUE(exists(suffix));
  EXPECT_TRUE(exists(kept + "/notes.txt"));
}

TEST(RuntimeDirs, AMissingBaseIsNothingToDo) {
  EXPECT_EQ(remove_stale_runtime_dirs("/nonexistent/nfpark/dpdk", "nfpark"), 0u);
}

TEST(RuntimeDirs, BaseFollowsDpdksRule) {
  if (geteuid() == 0) {
    EXPECT_EQ(dpdk_runtime_base(), "/var/run/dpdk");
  } else {
    const char* xdg = std::getenv("XDG_RUNTIME_DIR");
    EXPECT_EQ(dpdk_runtime_base(), std::string(xdg && *xdg ? xdg : "/tmp") + "/dpdk");
  }
}

}  // namespace
}  // namespace nfpark::dp
