// Endpoint: the L2/L3 surface of the KVS server — what it answers besides memcached.
//
// Implements just enough of Ethernet/IPv4 for a kernel (or any host) on the link to reach the
// server: ARP requests for the server's address get a reply; ICMP echo requests to it get an
// echo reply; IPv4 UDP datagrams to its address and port are requests (fragments go to the
// Ipv4Reassembler first). Everything else is dropped with a named reason: other EtherTypes
// (IPv6 included), VLAN tags, frames or packets not addressed to the server, broken IPv4
// headers or checksums, bad UDP lengths or checksums, other IP protocols and UDP ports.
// No routing, no ARP cache: a reply goes back to the MAC, address and port its request came
// from. Replies carry UDP checksum 0 ("none", allowed for IPv4 by RFC 768): computing it would
// read the value, which the zero-copy path must not do (on hardware, checksum offload).
#pragma once
#include <array>
#include <cstdint>
#include <string_view>

namespace nfpark::kvs {

constexpr uint32_t kReplyHeaders = 14 + 20 + 8;  // Ethernet + IPv4 + UDP of a reply

enum class Drop : uint8_t {
  kNone,
  kNotIpv4,
  kVlan,
  kArpOther,
  kBadIp,
  kNotOurs,
  kIcmpOther,
  kBadUdp,
  kOtherProto,
  kOtherPort,
  kCount
};
std::string_view to_string(Drop d);

enum class FrameKind : uint8_t { kArpRequest, kIcmpEcho, kUdp, kFragment, kDrop };

struct Classified {
  FrameKind kind = FrameKind::kDrop;
  Drop drop = Drop::kNone;
  uint32_t ip_off = 14, ip_len = 0;           // the IPv4 packet (kIcmpEcho, kUdp, kFragment)
  uint32_t payload_off = 0, payload_len = 0;  // the UDP payload (kUdp)
};

struct Peer {  // where a reply goes
  std::array<uint8_t, 6> mac{};
  uint32_t ip = 0;
  uint16_t port = 0;
  uint64_t id() const { return uint64_t(ip) << 16 | port; }
};

class Endpoint {
 public:
  Endpoint(std::array<uint8_t, 6> mac, uint32_t ip, uint16_t port)
      : mac_(mac), ip_(ip), port_(port) {}

  Classified classify(const uint8_t* frame, uint32_t len) const;
  // Checks an IPv4 packet (a reassembled one, or a whole one) carrying UDP to our port; sets
  // payload_off (from `ip`) and payload_len, or returns a drop reason.
  Drop udp_payload(const uint8_t* ip, uint32_t len, uint32_t& payload_off,
                   uint32_t& payload_len) const;
  // Turns an ARP request (42+ bytes) into our reply, in place; returns the reply's length.
  uint32_t arp_reply(uint8_t* frame) const;
  // Turns an ICMP echo request into the echo reply, in place (lengths unchanged).
  void icmp_reply(uint8_t* frame, const Classified& c) const;
  // The client of a UDP request: source MAC of `frame`, source address and port of `ip`.
  static Peer peer(const uint8_t* frame, const uint8_t* ip);
  // Writes a reply's Ethernet, IPv4 and UDP headers (kReplyHeaders bytes) to `out`.
  void reply_headers(uint8_t* out, const Peer& to, uint32_t udp_payload, uint16_t ip_id) const;

  const std::array<uint8_t, 6>& mac() const { return mac_; }
  uint32_t ip() const { return ip_; }
  uint16_t port() const { return port_; }

 private:
  std::array<uint8_t, 6> mac_;
  uint32_t ip_;
  uint16_t port_;
};

}  // namespace nfpark::kvs
