// nfpark: one command, many verbs. C++ verbs (trace, run) run here; the lab's verbs (energy,
// repro, ...) are forwarded to the Python package (`python3 -m nfpark VERB ...`).
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "commands.h"

namespace {

void usage(FILE* out) {
  std::fprintf(out,
               "usage: nfpark <verb> [options]   (nfpark <verb> --help for each)\n\n"
               "Dataplane and traces:\n"
               "  run       run a parking switch + NF chain over pcap/DPDK ports\n"
               "  trace     generate, analyse and compare pcap traces (gen, stats, reorder)\n"
               "  kvs       a memcached-compatible UDP key-value server, hot values zero-copy\n"
               "  sim       simulate a deployment (switch + NF servers) in virtual time\n"
               "Lab (Python):\n"
               "  energy    QUEUE-MEM power model: watts and W/Tbps per system\n"
               "  repro     reproduce the papers' results and plot them\n");
}

int forward_to_python(int argc, char** argv) {
  std::string pydir = std::string(NFPARK_SOURCE_DIR) + "/python";
  // Prefer the project venv (made by scripts/setup.sh), else whatever python3 is on PATH.
  std::string venv = std::string(NFPARK_SOURCE_DIR) + "/.venv/bin/python3";
  const char* py = access(venv.c_str(), X_OK) == 0 ? venv.c_str() : "python3";
  const char* old = std::getenv("PYTHONPATH");
  std::string pp = old && *old ? pydir + ":" + old : pydir;
  setenv("PYTHONPATH", pp.c_str(), 1);
  std::vector<char*> args = {const_cast<char*>(py), const_cast<char*>("-m"),
                             const_cast<char*>("nfpark")};
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  execvp(py, args.data());
  std::fprintf(stderr, "nfpark: cannot run python3 for '%s': %s\n", argv[1], std::strerror(errno));
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
      !std::strcmp(argv[1], "help")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  std::string verb = argv[1];
  if (verb == "trace") return nfpark::app::trace_main(argc - 1, argv + 1);
  if (verb == "sim") return nfpark::app::sim_main(argc - 1, argv + 1);
#ifdef NFPARK_NO_DPDK
  if (verb == "run" || verb == "kvs") {
    std::fprintf(stderr, "nfpark: this build has no DPDK engine (NFPARK_WITH_DPDK=OFF): no '%s'\n",
                 verb.c_str());
    return 2;
  }
#else
  if (verb == "run") return nfpark::app::run_main(argc - 1, argv + 1);
  if (verb == "kvs") return nfpark::app::kvs_main(argc - 1, argv + 1);
#endif
  return forward_to_python(argc, argv);
}
