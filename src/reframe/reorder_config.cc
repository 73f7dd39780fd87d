#include "reframe/reorder_config.h"

namespace nfpark::reframe {

std::string_view to_string(Priority p) {
  switch (p) {
    case Priority::kOldestInQueue:
      return "oldest_in_queue";
    case Priority::kOldestFlow:
      return "oldest_flow";
    case Priority::kShortestFlow:
      return "shortest_flow";
    case Priority::kReady:
      return "ready";
  }
  return "?";
}

std::optional<Priority> parse_priority(std::string_view s) {
  for (Priority p : {Priority::kOldestInQueue, Priority::kOldestFlow, Priority::kShortestFlow,
                     Priority::kReady}) {
    if (s == to_string(p)) return p;
  }
  return std::nullopt;
}

std::string ReorderConfig::validate() const {
  if (t_buff < 0) return "t_buff must be >= 0 (microseconds; 0 groups flows within one burst)";
  if (max_burst < 1) return "max_burst must be >= 1 (packets; default 32)";
  if (max_held_packets < 1) return "max_held_packets must be >= 1 (default 16384)";
  if (max_held_flows < 1) return "max_held_flows must be >= 1 (default 4096)";
  if (max_flows < 16) return "max_flows must be >= 16 (default 1048576)";
  if (max_flows > (1u << 30)) return "max_flows must be <= 2^30";
  if (flow_timeout <= t_buff) return "flow_timeout must exceed t_buff (default 10 s)";
  if (flow_timeout > 1800 * kSecond) return "flow_timeout must be <= 1800 s (default 10 s)";
  if (max_held_packets > (1u << 24)) return "max_held_packets must be <= 16777216";
  if (!(self_bypass.min_gain >= 1.0 && self_bypass.min_gain <= 100))
    return "min_gain must be in 1..100 (SLF out / SLF in below which Reframer bypasses itself; "
           "default 1.1)";
  if (self_bypass.probe_packets < 64)
    return "probe_packets must be >= 64 (packets per self-bypass probe; default 16384)";
  return {};
}

}  // namespace nfpark::reframe
