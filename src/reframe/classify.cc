#include "reframe/classify.h"

#include <cstring>

#include "core/bytes.h"
#include "core/flow_key.h"

namespace nfpark::reframe {

namespace {
constexpr uint8_t kTcpSyn = 0x02, kTcpAck = 0x10;

uint8_t dscp_of(const uint8_t* pkt, const PacketLayout& L) {
  const uint8_t* ip = pkt + L.l3_off;
  if (L.ip_version == 4) return ip[1] >> 2;
  return uint8_t(((ip[0] & 0x0F) << 4 | ip[1] >> 4) >> 2);  // IPv6 traffic class
}
// A later fragment, or an ICMP error: packets whose meaning depends on other flows (PacketMeta).
bool depends_on_other_flows(const uint8_t* pkt, const PacketLayout& L) {
  if (L.ip_version == 0) return false;
  if (L.fragment && !L.first_fragment) return true;
  if (L.l4_off == 0 || L.captured <= L.l4_off) return false;
  if (L.l4_proto == proto::kIcmp) return icmpv4_is_error(pkt[L.l4_off]);
  if (L.l4_proto == proto::kIcmpV6) return icmpv6_is_error(pkt[L.l4_off]);
  return false;
}

// FlowKeyHash64 of the packet's FlowKey (extract_flow_key's fields), IPv4 read straight from the
// packet: no 40-byte key zeroed and filled per packet.
uint64_t flow_hash(const uint8_t* pkt, const PacketLayout& L) {
  if (L.ip_version != 4) {
    FlowKey key;
    extract_flow_key(pkt, L, key);
    return FlowKeyHash64{}(key);
  }
  const uint8_t* ip = pkt + L.l3_off;
  uint32_t s, d;
  std::memcpy(&s, ip + 12, 4);
  std::memcpy(&d, ip + 16, 4);
  uint16_t sport = 0, dport = 0;
  if (L.l4_off) {
    const uint8_t* l4 = pkt + L.l4_off;
    if (L.has_ports()) {
      sport = load_be16(l4);
      dport = load_be16(l4 + 2);
    } else if (L.l4_proto == proto::kIcmp || L.l4_proto == proto::kIcmpV6) {
      sport = dport = load_be16(l4 + 4);  // echo identifier
    }
  }
  return FlowKeyHash64::v4(s, d, sport, dport, L.l4_proto);
}
}  // namespace

PacketMeta classify_general(const uint8_t* pkt, const PacketLayout& L, const BypassRules& rules) {
  PacketMeta m;
  if (depends_on_other_flows(pkt, L)) m.flags = PacketMeta::kBarrier | PacketMeta::kBypass;
  if (!L.ok() || L.ip_version == 0) {  // extract_flow_key's refusal
    m.flags |= PacketMeta::kBypass;
    return m;
  }
  m.flow = flow_hash(pkt, L);
  if (m.flow == 0) m.flow = 1;
  bool bypass = (rules.dscp_mask >> dscp_of(pkt, L)) & 1;
  if (L.is_tcp() && L.payload_off >= L.l4_off + proto::kTcpHeader) {
    const uint8_t* tcp = pkt + L.l4_off;
    const uint8_t flags = tcp[13];
    if (rules.tcp_syn && (flags & kTcpSyn)) bypass = true;
    if (flags == kTcpAck && L.payload_len() == 0) {
      m.flags |= PacketMeta::kPureAck;
      m.ack = load_be32(tcp + 8);
    }
  }
  if (!bypass && rules.match && rules.match(pkt, L)) bypass = true;
  if (bypass) m.flags |= PacketMeta::kBypass;
  return m;
}

}  // namespace nfpark::reframe
