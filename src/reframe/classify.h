// classify(): computes a packet's PacketMeta for FlowReorder from its bytes and parse — the flow
// id (FlowKeyHash64 of the 5-tuple, direction-sensitive, never 0), the bypass decision and the
// pure-ACK facts. Engines call it once per packet while building the burst, outside the reorder
// loop.
//
// Fast path (inline, here): the common packet — parsed kOk, IPv4, not a fragment, TCP or UDP,
// no header-match rule and its DSCP not in the mask — is decided from the bytes the parse
// points at: the v4 hash, and for TCP the flags byte (SYN bypass, pure-ACK facts). Everything
// else, and every packet when a match rule is set, takes classify_general() (classify.cc), which
// gives the same PacketMeta for every input (tests/reframe/classify_test.cc compares the two on
// random and mutated packets under every kind of rule).
#pragma once
#include <bit>
#include <cstdint>
#include <cstring>
#include <functional>

#include "core/bytes.h"
#include "core/flow_key.h"
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
// packets) and the bypass flag. Every packet; the same result as classify().
PacketMeta classify_general(const uint8_t* pkt, const PacketLayout& layout,
                            const BypassRules& rules);

// `fast` is set when the fast path decided: the packet is then parsed kOk, IPv4, not a
// fragment, TCP or UDP (what CarriedLayout::keep() checks, but the IP end); else cleared.
[[gnu::always_inline]] inline PacketMeta classify(const uint8_t* pkt, const PacketLayout& L,
                                                  const BypassRules& rules, bool& fast) {
  fast = false;
  const bool tcp = L.l4_proto == proto::kTcp;
  if (!L.ok() || L.ip_version != 4 || L.fragment || L.l4_off == 0 ||
      !(tcp || L.l4_proto == proto::kUdp) || rules.match) [[unlikely]]
    return classify_general(pkt, L, rules);
  const uint8_t* ip = pkt + L.l3_off;
  if (rules.dscp_mask && ((rules.dscp_mask >> (ip[1] >> 2)) & 1)) [[unlikely]]
    return classify_general(pkt, L, rules);
  PacketMeta m;
  const uint8_t* l4 = pkt + L.l4_off;
  // The addresses in one load (source first in memory: the low half on a little-endian host),
  // the ports in one.
  uint32_t s, d;
  if constexpr (std::endian::native == std::endian::little) {
    uint64_t a;
    std::memcpy(&a, ip + 12, 8);
    s = uint32_t(a);
    d = uint32_t(a >> 32);
  } else {
    std::memcpy(&s, ip + 12, 4);
    std::memcpy(&d, ip + 16, 4);
  }
  const uint32_t ports = load_be32(l4);
  m.flow = FlowKeyHash64::v4(s, d, uint16_t(ports >> 16), uint16_t(ports), L.l4_proto);
  m.flow += m.flow == 0;
  if (tcp) {
    constexpr uint8_t kSyn = 0x02, kAck = 0x10;
    if (L.payload_off < L.l4_off + proto::kTcpHeader) [[unlikely]]
      return classify_general(pkt, L, rules);
    const uint8_t flags = l4[13];
    if (rules.tcp_syn && (flags & kSyn)) m.flags = PacketMeta::kBypass;
    if (flags == kAck && L.payload_len() == 0) {
      m.flags = PacketMeta::kPureAck;
      m.ack = load_be32(l4 + 8);
    }
  }
  fast = true;
  return m;
}
[[gnu::always_inline]] inline PacketMeta classify(const uint8_t* pkt, const PacketLayout& L,
                                                  const BypassRules& rules) {
  bool fast;
  return classify(pkt, L, rules, fast);
}

}  // namespace nfpark::reframe
