#include "core/parse.h"

#include "core/bytes.h"

namespace nfpark {

std::string_view to_string(ParseStatus s) {
  switch (s) {
    case ParseStatus::kOk:
      return "ok";
    case ParseStatus::kTruncated:
      return "truncated";
    case ParseStatus::kMalformed:
      return "malformed";
    case ParseStatus::kNotIp:
      return "not_ip";
  }
  return "unknown";
}

namespace {

// ICMPv4 errors (destination unreachable 3, source quench 4, redirect 5, time exceeded 11,
// parameter problem 12) quote the IPv4 header and the first bytes of the datagram they are
// about. NATs and firewalls read and rewrite that quote (RFC 5508), so it belongs to the
// headers: the quoted IPv4 header and up to 8 bytes of its transport header (20 for TCP, so that
// its checksum is in), as far as the outer IP length and the captured bytes go. Returns the
// quote's header bytes after the 8-byte ICMP header; 0 when the quote is not a whole IPv4 header.
uint32_t icmp_error_quote(const uint8_t* d, uint32_t len, uint32_t off, uint32_t ip_end) {
  if (!icmpv4_is_error(d[off])) return 0;
  const uint32_t q = off + proto::kIcmpHeader;
  const uint32_t end = len < ip_end ? len : ip_end;
  if (q + proto::kIpv4Header > end || (d[q] >> 4) != 4) return 0;
  const uint32_t ihl = uint32_t(d[q] & 0x0F) * 4;
  if (ihl < proto::kIpv4Header || q + ihl > end) return 0;
  const bool first = (load_be16(d + q + 6) & 0x1FFF) == 0;
  const uint32_t l4 = !first ? 0 : d[q + 9] == proto::kTcp ? proto::kTcpHeader : 8;
  return ihl + (l4 < end - q - ihl ? l4 : end - q - ihl);
}

// Parses the L4 header at `off`. Returns the status; sets l4_off/payload_off.
ParseStatus parse_l4(const uint8_t* d, uint32_t len, uint32_t off, PacketLayout& L) {
  uint32_t need = 0;
  switch (L.l4_proto) {
    case proto::kTcp:
      need = proto::kTcpHeader;
      break;
    case proto::kUdp:
      need = proto::kUdpHeader;
      break;
    case proto::kIcmp:
    case proto::kIcmpV6:
      need = proto::kIcmpHeader;
      break;
    default:  // unknown transport: headers end at L3
      L.payload_off = uint16_t(off);
      return ParseStatus::kOk;
  }
  if (off + need > len) return ParseStatus::kTruncated;
  if (off + need > L.ip_end) return ParseStatus::kMalformed;  // IP says the L4 header is cut
  if (L.l4_proto == proto::kTcp) {
    uint32_t doff = uint32_t(d[off + 12] >> 4) * 4;
    if (doff < proto::kTcpHeader) return ParseStatus::kMalformed;
    if (off + doff > L.ip_end) return ParseStatus::kMalformed;
    if (off + doff > len) return ParseStatus::kTruncated;
    need = doff;
  } else if (L.l4_proto == proto::kUdp) {
    uint32_t ulen = load_be16(d + off + 4);
    // A first fragment's UDP length covers the whole datagram, beyond this fragment's end.
    if (ulen < proto::kUdpHeader || (!L.fragment && off + ulen > L.ip_end))
      return ParseStatus::kMalformed;
  } else if (L.l4_proto == proto::kIcmp) {
    need += icmp_error_quote(d, len, off, L.ip_end);
  }
  L.l4_off = uint16_t(off);
  L.payload_off = uint16_t(off + need);
  return ParseStatus::kOk;
}

ParseStatus parse_ipv4(const uint8_t* d, uint32_t len, uint32_t off, PacketLayout& L) {
  if (off + proto::kIpv4Header > len) return ParseStatus::kTruncated;
  if ((d[off] >> 4) != 4) return ParseStatus::kMalformed;
  uint32_t ihl = uint32_t(d[off] & 0x0F) * 4;
  uint32_t total = load_be16(d + off + 2);
  if (ihl < proto::kIpv4Header || total < ihl) return ParseStatus::kMalformed;
  if (off + ihl > len) return ParseStatus::kTruncated;
  L.ip_version = 4;
  L.ip_end = off + total;
  L.l4_proto = d[off + 9];
  uint16_t frag = load_be16(d + off + 6);
  uint16_t frag_off = frag & 0x1FFF;
  L.fragment = (frag & 0x2000) || frag_off;
  L.first_fragment = frag_off == 0;
  if (!L.first_fragment) {
    L.payload_off = uint16_t(off + ihl);
    return ParseStatus::kOk;
  }
  return parse_l4(d, len, off + ihl, L);
}

ParseStatus parse_ipv6(const uint8_t* d, uint32_t len, uint32_t off, PacketLayout& L) {
  if (off + proto::kIpv6Header > len) return ParseStatus::kTruncated;
  if ((d[off] >> 4) != 6) return ParseStatus::kMalformed;
  L.ip_version = 6;
  L.ip_end = off + proto::kIpv6Header + load_be16(d + off + 4);
  uint8_t next = d[off + 6];
  uint32_t pos = off + proto::kIpv6Header;
  for (int hops = 0; hops < 8; ++hops) {
    switch (next) {
      case 0:     // hop-by-hop options
      case 43:    // routing
      case 60: {  // destination options
        if (pos + 2 > len) return ParseStatus::kTruncated;
        uint32_t hlen = (uint32_t(d[pos + 1]) + 1) * 8;
        if (pos + hlen > L.ip_end) return ParseStatus::kMalformed;
        next = d[pos];
        pos += hlen;
        continue;
      }
      case 51: {  // authentication header: length in 4-byte units, minus 2
        if (pos + 2 > len) return ParseStatus::kTruncated;
        uint32_t hlen = (uint32_t(d[pos + 1]) + 2) * 4;
        if (pos + hlen > L.ip_end) return ParseStatus::kMalformed;
        next = d[pos];
        pos += hlen;
        continue;
      }
      case 44: {  // fragment
        if (pos + 8 > len) return ParseStatus::kTruncated;
        if (pos + 8 > L.ip_end) return ParseStatus::kMalformed;
        uint16_t fo = load_be16(d + pos + 2);
        L.fragment = true;
        L.first_fragment = (fo & 0xFFF8) == 0;
        next = d[pos];
        pos += 8;
        if (!L.first_fragment) {
          L.l4_proto = next;
          L.payload_off = uint16_t(pos);
          return ParseStatus::kOk;
        }
        continue;
      }
      default:
        L.l4_proto = next;
        if (pos > len) return ParseStatus::kTruncated;
        return parse_l4(d, len, pos, L);
    }
  }
  return ParseStatus::kMalformed;  // more extension headers than any sane packet carries
}

// The common case in one straight pass: untagged Ethernet, IPv4 (options allowed), not a
// fragment, UDP or TCP, every header present and consistent. Each check below is one the general
// path makes on these packets; any that fails (or any other packet) goes the general way, so the
// result is always the general path's (tests/core/parse_fast_test.cc compares the two).
inline bool parse_fast(const uint8_t* d, uint32_t len, PacketLayout& L) {
  constexpr uint32_t kL3 = proto::kEthHeader;
  if (len < kL3 + proto::kIpv4Header || load_be16(d + 12) != proto::kEthIpv4) return false;
  const uint8_t* ip = d + kL3;
  const uint32_t ihl = uint32_t(ip[0] & 0x0F) * 4, total = load_be16(ip + 2);
  if ((ip[0] >> 4) != 4 || ihl < proto::kIpv4Header || total < ihl) return false;
  if ((load_be16(ip + 6) & 0x3FFF) != 0) return false;  // MF or an offset: a fragment
  const uint32_t l4 = kL3 + ihl, ip_end = kL3 + total;
  const uint8_t p = ip[9];
  uint32_t hdr;
  if (p == proto::kUdp) {
    hdr = proto::kUdpHeader;
    if (l4 + hdr > len || l4 + hdr > ip_end) return false;
    const uint32_t ulen = load_be16(d + l4 + 4);
    if (ulen < proto::kUdpHeader || l4 + ulen > ip_end) return false;
  } else if (p == proto::kTcp) {
    if (l4 + proto::kTcpHeader > len || l4 + proto::kTcpHeader > ip_end) return false;
    hdr = uint32_t(d[l4 + 12] >> 4) * 4;
    if (hdr < proto::kTcpHeader || l4 + hdr > ip_end || l4 + hdr > len) return false;
  } else {
    return false;
  }
  L = PacketLayout{};
  L.status = ParseStatus::kOk;
  L.ip_version = 4;
  L.l4_proto = p;
  L.ethertype = proto::kEthIpv4;
  L.l3_off = uint16_t(kL3);
  L.l4_off = uint16_t(l4);
  L.payload_off = uint16_t(l4 + hdr);
  L.ip_end = ip_end;
  L.captured = len;
  return true;
}

}  // namespace

PacketLayout parse_packet(const uint8_t* d, uint32_t len) {
  PacketLayout L;
  parse_packet(d, len, L);
  return L;
}

void parse_packet(const uint8_t* d, uint32_t len, PacketLayout& L) {
  if (!parse_fast(d, len, L)) parse_packet_general(d, len, L);
}

void parse_packet_general(const uint8_t* d, uint32_t len, PacketLayout& L) {
  L = PacketLayout{};
  L.captured = len;
  if (len < proto::kEthHeader) return;  // kTruncated
  uint32_t off = 12;
  uint16_t type = load_be16(d + off);
  while (type == proto::kEthVlan || type == proto::kEthQinQ || type == proto::kEthVlanOld) {
    if (L.vlans == 2) {
      L.status = ParseStatus::kMalformed;
      return;
    }
    if (off + 2 + proto::kVlanTag > len) return;
    off += proto::kVlanTag;
    type = load_be16(d + off);
    ++L.vlans;
  }
  off += 2;
  L.ethertype = type;
  L.l3_off = uint16_t(off);
  if (type == proto::kEthIpv4) {
    L.status = parse_ipv4(d, len, off, L);
  } else if (type == proto::kEthIpv6) {
    L.status = parse_ipv6(d, len, off, L);
  } else {
    L.payload_off = uint16_t(off);
    L.status = ParseStatus::kNotIp;
  }
}

}  // namespace nfpark
