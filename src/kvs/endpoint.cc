#include "kvs/endpoint.h"

#include <cstring>

#include "core/bytes.h"
#include "core/checksum.h"

namespace nfpark::kvs {

namespace {
constexpr uint16_t kEthArp = 0x0806, kEthIpv4 = 0x0800;
constexpr uint8_t kIcmp = 1, kUdp = 17;
}  // namespace

std::string_view to_string(Drop d) {
  switch (d) {
    case Drop::kNone:
      return "none";
    case Drop::kNotIpv4:
      return "not_ipv4";
    case Drop::kVlan:
      return "vlan";
    case Drop::kArpOther:
      return "arp_other";
    case Drop::kBadIp:
      return "bad_ip";
    case Drop::kNotOurs:
      return "not_ours";
    case Drop::kIcmpOther:
      return "icmp_other";
    case Drop::kBadUdp:
      return "bad_udp";
    case Drop::kOtherProto:
      return "other_proto";
    case Drop::kOtherPort:
      return "other_port";
    case Drop::kCount:
      break;
  }
  return "?";
}

Classified Endpoint::classify(const uint8_t* f, uint32_t len) const {
  Classified c;
  auto drop = [&c](Drop d) {
    c.kind = FrameKind::kDrop;
    c.drop = d;
    return c;
  };
  if (len < 14) return drop(Drop::kNotIpv4);
  const uint16_t type = load_be16(f + 12);
  if (type == 0x8100 || type == 0x88A8) return drop(Drop::kVlan);
  if (type == kEthArp) {
    // Ethernet/IPv4 ARP request for our address.
    if (len < 42 || load_be16(f + 14) != 1 || load_be16(f + 16) != kEthIpv4 || f[18] != 6 ||
        f[19] != 4 || load_be16(f + 20) != 1 || load_be32(f + 38) != ip_)
      return drop(Drop::kArpOther);
    c.kind = FrameKind::kArpRequest;
    return c;
  }
  if (type != kEthIpv4) return drop(Drop::kNotIpv4);
  const uint8_t* ip = f + 14;
  const uint32_t avail = len - 14;
  if (avail < 20 || (ip[0] >> 4) != 4) return drop(Drop::kBadIp);
  const uint32_t hlen = uint32_t(ip[0] & 0x0F) * 4, total = load_be16(ip + 2);
  if (hlen < 20 || total < hlen || total > avail ||
      ipv4_header_checksum(ip, hlen) != load_be16(ip + 10))
    return drop(Drop::kBadIp);
  if (load_be32(ip + 16) != ip_ || std::memcmp(f, mac_.data(), 6) != 0) return drop(Drop::kNotOurs);
  c.ip_len = total;
  if (load_be16(ip + 6) & 0x3FFF) {  // MF or a fragment offset
    if (ip[9] != kUdp) return drop(Drop::kOtherProto);
    c.kind = FrameKind::kFragment;
    return c;
  }
  if (ip[9] == kIcmp) {
    if (total < hlen + 8 || ip[hlen] != 8 || ip[hlen + 1] != 0) return drop(Drop::kIcmpOther);
    c.kind = FrameKind::kIcmpEcho;
    return c;
  }
  if (ip[9] != kUdp) return drop(Drop::kOtherProto);
  uint32_t off = 0, plen = 0;
  const Drop d = udp_payload(ip, total, off, plen);
  if (d != Drop::kNone) return drop(d);
  c.kind = FrameKind::kUdp;
  c.payload_off = 14 + off;
  c.payload_len = plen;
  return c;
}

Drop Endpoint::udp_payload(const uint8_t* ip, uint32_t len, uint32_t& payload_off,
                           uint32_t& payload_len) const {
  const uint32_t hlen = uint32_t(ip[0] & 0x0F) * 4;
  if (len < hlen + 8) return Drop::kBadUdp;
  const uint8_t* udp = ip + hlen;
  const uint32_t ulen = load_be16(udp + 4);
  if (ulen < 8 || ulen > len - hlen) return Drop::kBadUdp;
  if (load_be16(udp + 2) != port_) return Drop::kOtherPort;
  if (load_be16(udp + 6) != 0) {  // RFC 768: 0 means the sender computed none
    uint32_t s = csum_partial(ip + 12, 8);
    s += kUdp + ulen;
    s = csum_partial(udp, ulen, s);
    if (csum_fold(s) != 0xFFFF) return Drop::kBadUdp;
  }
  payload_off = hlen + 8;
  payload_len = ulen - 8;
  return Drop::kNone;
}

uint32_t Endpoint::arp_reply(uint8_t* f) const {
  uint8_t* a = f + 14;
  std::memcpy(f, f + 6, 6);  // to the requester
  std::memcpy(f + 6, mac_.data(), 6);
  store_be16(a + 6, 2);                // reply
  std::memcpy(a + 18, a + 8, 10);      // target = the sender (MAC + IPv4)
  std::memcpy(a + 8, mac_.data(), 6);  // sender = us
  store_be32(a + 14, ip_);
  return 42;
}

void Endpoint::icmp_reply(uint8_t* f, const Classified& c) const {
  uint8_t* ip = f + 14;
  const uint32_t hlen = uint32_t(ip[0] & 0x0F) * 4;
  std::memcpy(f, f + 6, 6);
  std::memcpy(f + 6, mac_.data(), 6);
  std::memcpy(ip + 16, ip + 12, 4);
  store_be32(ip + 12, ip_);
  ip[8] = 64;
  store_be16(ip + 10, ipv4_header_checksum(ip, hlen));
  uint8_t* icmp = ip + hlen;
  icmp[0] = 0;  // echo reply: RFC 1624 update of the type/code word (0x0800 -> 0x0000)
  store_be16(icmp + 2, csum_update16(load_be16(icmp + 2), 0x0800, 0x0000));
  (void)c;
}

Peer Endpoint::peer(const uint8_t* frame, const uint8_t* ip) {
  Peer p;
  std::memcpy(p.mac.data(), frame + 6, 6);
  p.ip = load_be32(ip + 12);
  const uint32_t hlen = uint32_t(ip[0] & 0x0F) * 4;
  p.port = load_be16(ip + hlen);
  return p;
}

void Endpoint::reply_headers(uint8_t* o, const Peer& to, uint32_t udp_payload,
                             uint16_t ip_id) const {
  std::memcpy(o, to.mac.data(), 6);
  std::memcpy(o + 6, mac_.data(), 6);
  store_be16(o + 12, kEthIpv4);
  uint8_t* ip = o + 14;
  ip[0] = 0x45;
  ip[1] = 0;
  store_be16(ip + 2, uint16_t(20 + 8 + udp_payload));
  store_be16(ip + 4, ip_id);
  store_be16(ip + 6, 0x4000);  // DF: replies are never larger than the link's datagrams
  ip[8] = 64;
  ip[9] = kUdp;
  store_be32(ip + 12, ip_);
  store_be32(ip + 16, to.ip);
  store_be16(ip + 10, ipv4_header_checksum(ip, 20));
  uint8_t* udp = ip + 20;
  store_be16(udp, port_);
  store_be16(udp + 2, to.port);
  store_be16(udp + 4, uint16_t(8 + udp_payload));
  store_be16(udp + 6, 0);
}

}  // namespace nfpark::kvs
