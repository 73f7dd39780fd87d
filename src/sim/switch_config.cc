#include "sim/switch_config.h"

namespace nfpark::sim {

bool SwitchConfig::apply_preset(std::string_view name) {
  if (name == "tofino1") {
    buffer_bytes = 20ull << 20;
    register_bytes = 12ull << 20;
    cell_bytes = 80;
  } else if (name == "tofino2") {
    buffer_bytes = 64ull << 20;
    register_bytes = 24ull << 20;
    cell_bytes = 176;
  } else {
    return false;
  }
  ingress_latency = egress_latency = 400 * kNs;
  return true;
}

std::string SwitchConfig::validate() const {
  if (port_gbps.empty()) return "the switch needs at least one port";
  for (double g : port_gbps)
    if (!(g > 0) || g > 1e5) return "port rates must be > 0 and <= 100000 Gbps";
  if (queues < 1 || queues > 64) return "queues per port must be 1..64";
  if (priority.size() > queues) return "more priorities than queues";
  if (ingress_latency < 0 || egress_latency < 0 || link_delay < 0) return "latencies must be >= 0";
  if (cell_bytes == 0) return "cell_bytes must be >= 1";
  if (buffer_bytes == 0) return "buffer_mb must be > 0";
  if (!(recirc_gbps > 0)) return "recirc_gbps must be > 0";
  if (!(dt_alpha >= 0)) return "dt_alpha must be >= 0";
  return "";
}

}  // namespace nfpark::sim
