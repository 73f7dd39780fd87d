// ReorderConfig: the parameters of Reframer's FlowReorder, with defaults and units.
// See docs/reframer.md for what each one does and how the paper chose it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/time.h"
#include "reframe/self_bypass.h"

namespace nfpark::reframe {

// Order in which the flow batches that became ready in one round are emitted. Every policy emits
// each batch contiguously and never reorders packets of one flow; ties keep readiness order.
enum class Priority : uint8_t {
  kOldestInQueue,  // earliest batch start first: the batch that has waited longest (paper's
                   // "oldest flow in the queue first"; default)
  kOldestFlow,     // earliest first packet of the flow first (flow age; paper's "oldest flow")
  kShortestFlow,   // fewest packets seen from the flow so far first: mice before elephants
  kReady,          // in the order the batches became ready (no sorting)
};
std::string_view to_string(Priority p);
// Accepts "oldest_in_queue", "oldest_flow", "shortest_flow", "ready".
std::optional<Priority> parse_priority(std::string_view s);

struct ReorderConfig {
  Nanos t_buff = 64 * kMicro;         // max time a batch waits after its first packet
  uint32_t max_burst = 32;            // a flow's batch is flushed when it holds this many
  uint32_t max_held_packets = 16384;  // cap on buffered packets: force-flush the oldest flow
  uint32_t max_held_flows = 4096;     // cap on flows with buffered packets: same
  uint32_t max_flows = 1u << 20;      // flow slots (32 B each, rounded up to a power of two)
  Nanos flow_timeout = 10 * kSecond;  // an idle entry older than this is a new flow again
  Priority priority = Priority::kOldestInQueue;
  bool bypass_first_packet = true;  // a flow's first packet is never delayed
  bool coalesce_acks = false;       // drop superseded pure TCP ACKs within a batch
  bool prefetch = true;             // prefetch flow slots kPrefetchAhead packets ahead
  SelfBypassConfig self_bypass;     // pass through while regrouping does not pay (self_bypass.h)

  // Empty when valid; otherwise names the field, the problem and the fix.
  std::string validate() const;
};

}  // namespace nfpark::reframe
