// PacketMeta: what FlowReorder needs to know about a packet, computed by the engine before the
// hot loop (see classify.h), so the reorder loop never parses.
#pragma once
#include <cstdint>

namespace nfpark::reframe {

struct PacketMeta {
  static constexpr uint8_t kBypass = 1;   // never buffer (SYN, DSCP class, header match, non-IP)
  static constexpr uint8_t kPureAck = 2;  // TCP, flags exactly ACK, no payload: may be coalesced

  uint64_t flow = 0;  // direction-sensitive flow id; 0 = no flow (forwarded untracked)
  uint32_t ack = 0;   // TCP acknowledgment number (host order), valid with kPureAck
  uint8_t flags = 0;

  bool bypass() const { return flags & kBypass; }
  bool pure_ack() const { return flags & kPureAck; }
};

}  // namespace nfpark::reframe
