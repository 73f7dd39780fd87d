// classify(): computes a packet's PacketMeta for FlowReorder from its bytes and parse — the flow
// id (FlowKeyHash64 of the 5-tuple, direction-sensitive, never 0), the bypass decision and the
// pure-ACK facts. Engines call it once per packet while building the burst, outside the reorder
// loop.
#pragma once
#include <cstdint>
#include <functional>

#include "core/parse.h"
#include "reframe/packet_meta.h"

namespace nfpark::reframe {

struct BypassRules {
  bool tcp_syn = true;     // TCP SYN (and SYN-ACK) is never delayed (paper)
  uint64_t dscp_mask = 0;  // bit d set: packets with DSCP d bypass
  // Any header match; called only for parsed IP packets. Empty: none.
  std::function<bool(const uint8_t* pkt, const PacketLayout& layout)> match;
};

// Non-IP and malformed packets get flow 0 (untracked, forwarded in order with other untracked
// packets) and the bypass flag.
PacketMeta classify(const uint8_t* pkt, const PacketLayout& layout, const BypassRules& rules);

}  // namespace nfpark::reframe
