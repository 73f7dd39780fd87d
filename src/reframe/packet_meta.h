// PacketMeta: what FlowReorder needs to know about a packet, computed by the engine before the
// hot loop (see classify.h), so the reorder loop never parses.
#pragma once
#include <cstdint>

namespace nfpark::reframe {

struct PacketMeta {
  static constexpr uint8_t kBypass = 1;   // never buffer (SYN, DSCP class, header match, non-IP)
  static constexpr uint8_t kPureAck = 2;  // TCP, flags exactly ACK, no payload: may be coalesced
  // Keeps its place in the stream: everything that arrived before it leaves before it, nothing
  // that arrives after it leaves before it. For packets whose meaning depends on other flows'
  // earlier packets — a later IP fragment (its first fragment carries the ports), an ICMP error
  // (about a datagram of another flow) — so a stateful NF (NAT) sees them after what they need.
  static constexpr uint8_t kBarrier = 4;

  uint64_t flow = 0;  // direction-sensitive flow id; 0 = no flow (forwarded untracked)
  uint32_t ack = 0;   // TCP acknowledgment number (host order), valid with kPureAck
  uint8_t flags = 0;

  bool bypass() const { return flags & kBypass; }
  bool pure_ack() const { return flags & kPureAck; }
  bool barrier() const { return flags & kBarrier; }
};

}  // namespace nfpark::reframe
