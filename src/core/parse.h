// Packet parser: Ethernet, 802.1Q/802.1ad (up to two tags), IPv4 with options, IPv6 with its
// common extension headers, TCP with options, UDP, ICMP and ICMPv6 — over a byte span.
//
// The parser never reads outside [data, data + len). It reports layer offsets and a status:
//   kOk         every header up to and including L4 (or L3 when there is no known L4) is present
//               and self-consistent. The L4 payload may be partly or wholly absent from the buffer
//               (header-only packets): compare `captured_end()` with `ip_end`.
//   kTruncated  the buffer ends inside a header.
//   kMalformed  a header is present but invalid (IPv4 IHL < 5, total length below the header,
//               TCP data offset < 5, UDP length < 8, an extension-header loop, ...).
//   kNotIp      the innermost EtherType is neither IPv4 nor IPv6 (ARP, LLDP, ...).
// Fragments: `fragment` is set; only the first fragment carries an L4 header.
// ICMPv4 errors: the quoted IPv4 header and the first 8 bytes of its transport header (20 for
// TCP) count as headers (payload_off is after them, as far as they were captured), because NATs
// rewrite them (RFC 5508); the rest of the quote is payload.
#pragma once
#include <cstdint>
#include <string_view>

namespace nfpark {

enum class ParseStatus : uint8_t { kOk, kTruncated, kMalformed, kNotIp };
std::string_view to_string(ParseStatus s);

namespace proto {
constexpr uint8_t kIcmp = 1, kTcp = 6, kUdp = 17, kIcmpV6 = 58;
constexpr uint16_t kEthIpv4 = 0x0800, kEthIpv6 = 0x86DD, kEthVlan = 0x8100, kEthQinQ = 0x88A8,
                   kEthVlanOld = 0x9100;
constexpr uint32_t kEthHeader = 14, kVlanTag = 4, kIpv4Header = 20, kIpv6Header = 40,
                   kUdpHeader = 8, kTcpHeader = 20, kIcmpHeader = 8;
}  // namespace proto

struct PacketLayout {
  ParseStatus status = ParseStatus::kTruncated;
  uint8_t vlans = 0;       // number of VLAN tags (0..2)
  uint8_t ip_version = 0;  // 4, 6, or 0 when not IP
  uint8_t l4_proto = 0;    // final protocol number (TCP 6, UDP 17, ...), 0 if none
  bool fragment = false;   // IPv4 MF/offset or IPv6 Fragment header present
  bool first_fragment = true;
  uint16_t ethertype = 0;    // innermost EtherType
  uint16_t l3_off = 0;       // IP header
  uint16_t l4_off = 0;       // L4 header; 0 when there is none (non-first fragment, unknown proto)
  uint16_t payload_off = 0;  // first byte after all headers (end of L4 header, or of L3)
  uint32_t ip_end = 0;       // where the IP header's length field says the packet ends
  uint32_t captured = 0;     // bytes that were available to the parser

  bool ok() const { return status == ParseStatus::kOk; }
  bool has_ports() const {
    return l4_off != 0 && (l4_proto == proto::kTcp || l4_proto == proto::kUdp);
  }
  bool is_tcp() const { return l4_off != 0 && l4_proto == proto::kTcp; }
  bool is_udp() const { return l4_off != 0 && l4_proto == proto::kUdp; }
  // L4 payload length as declared by the IP header (independent of what was captured).
  uint32_t payload_len() const { return ip_end > payload_off ? ip_end - payload_off : 0; }
  // Payload bytes actually present in the buffer.
  uint32_t captured_payload() const {
    uint32_t end = captured < ip_end ? captured : ip_end;
    return end > payload_off ? end - payload_off : 0;
  }
};

PacketLayout parse_packet(const uint8_t* data, uint32_t len);
// The same, written into `out` (a view's layout): no copy of a freshly written struct, whose
// wide reload would wait for the parser's narrow stores (a store-forwarding stall per packet).
void parse_packet(const uint8_t* data, uint32_t len, PacketLayout& out);
// parse_packet without its fast path for untagged IPv4 UDP/TCP (parse.cc): the same result for
// every input, by construction and by test (tests/core/parse_fast_test.cc); for that test.
void parse_packet_general(const uint8_t* data, uint32_t len, PacketLayout& out);

// ICMP messages that report an error about another datagram (and quote it): ICMPv4 destination
// unreachable 3, source quench 4, redirect 5, time exceeded 11, parameter problem 12 (RFC 792);
// ICMPv6 types 1-127 (RFC 4443 §2.1: types below 128 are errors; 1-4 are defined so far).
constexpr bool icmpv4_is_error(uint8_t type) {
  return type == 3 || type == 4 || type == 5 || type == 11 || type == 12;
}
constexpr bool icmpv6_is_error(uint8_t type) {
  return type >= 1 && type < 128;
}

}  // namespace nfpark
