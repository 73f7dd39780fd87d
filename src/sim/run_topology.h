// RunTopology: the devices of one simulated run, wired together (run.h describes the layout),
// and the end-of-run accounting: drops by reason, in = out + drops, pools full.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "sim/collector.h"
#include "sim/engine.h"
#include "sim/nf_server.h"
#include "sim/programs.h"
#include "sim/run_config.h"
#include "sim/run_report.h"
#include "sim/switch.h"
#include "sim/traffic_mux.h"

namespace nfpark::sim {

struct RunTopology {
  Engine engine;
  Topology topo;
  std::unique_ptr<PacketPool> pool;
  std::unique_ptr<Switch> sw;
  std::unique_ptr<SwitchProgram> program;
  std::unique_ptr<Collector> collector;
  std::vector<std::unique_ptr<NfServer>> servers;
  std::unique_ptr<TrafficMux> sources;  // the traffic ports
  Picos duration = 0;

  bool build(const SimRunConfig& cfg, std::string& err);
  void start();
  // Packets dropped anywhere, each once (switch, NF servers, the mode).
  uint64_t drops_total() const;
  // Drains the mode and fills the report's totals, rates, drops and counters.
  void finish(const SimRunConfig& cfg, RunReport& r);

 private:
  bool build_traffic(const SimRunConfig& cfg, std::string& err);
  bool build_program(const SimRunConfig& cfg, std::string& err);
};

}  // namespace nfpark::sim
