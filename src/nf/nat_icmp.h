// What the NAT knows of ICMPv4: which types are queries (translated by identifier) and which
// are errors (translated through the datagram they quote, RFC 5508), how to read an error's
// quote, and how to rewrite it with every checksum that covers it kept right.
//
// An error's quote is the IPv4 header and the first bytes of the datagram the error is about;
// the parser counts the quoted IPv4 header and up to 8 bytes of its transport header (20 for
// TCP) as headers (core/parse.h), so these helpers work on header-only packets and never read
// past layout.payload_off. Checksums, all patched incrementally (RFC 1624):
//   quoted IPv4 header checksum   changes with a quoted address (RFC 5508 REQ-4 a: the
//                                 quote is reverted to its original form, checksum included);
//   quoted transport checksum     UDP (unless 0, "none") and TCP change with a quoted address
//                                 (pseudo-header) or port; an ICMP query's with its identifier.
//                                 Patched when it lies in the quote — always for UDP and ICMP
//                                 (8 bytes quoted at least), for TCP when 18+ bytes are — and
//                                 otherwise absent; never validated (REQ-3 c): it covers bytes
//                                 the quote does not hold. Linux's nf_nat does the same;
//   ICMP checksum                 covers the whole ICMP message, so every rewritten word of
//                                 the quote — checksums included — patches it too.
#pragma once
#include <cstdint>

#include "core/packet_view.h"

namespace nfpark::nf {

enum class IcmpKind : uint8_t { kQuery, kError, kOther };

// RFC 792: echo (8/0), timestamp (13/14), information (15/16), address mask (17/18: RFC 950)
// queries carry an identifier; destination unreachable (3), source quench (4), redirect (5),
// time exceeded (11) and parameter problem (12) quote a datagram. Linux tracks the same sets.
inline IcmpKind icmp_kind(uint8_t type) {
  switch (type) {
    case 0:
    case 8:
    case 13:
    case 14:
    case 15:
    case 16:
    case 17:
    case 18:
      return IcmpKind::kQuery;
    case 3:
    case 4:
    case 5:
    case 11:
    case 12:
      return IcmpKind::kError;
    default:
      return IcmpKind::kOther;
  }
}

// The datagram an ICMPv4 error quotes, as far as the error's headers hold it.
struct IcmpQuote {
  uint32_t ip = 0;      // offset of the quoted IPv4 header in the frame
  uint32_t l4 = 0;      // offset of its transport header
  uint32_t l4_len = 0;  // transport header bytes present
  uint8_t proto = 0;
  uint8_t icmp_type = 0;          // when proto is ICMP
  uint32_t src = 0, dst = 0;      // host order
  uint16_t sport = 0, dport = 0;  // ICMP query: its identifier, in both
};

// Reads the quote of `p`, an ICMPv4 error (layout ok). False when it cannot be translated: not
// IPv4, its IP header cut or its checksum wrong (RFC 5508 REQ-3 a), a non-first fragment, or its
// ports (ICMP: identifier) not quoted. Quotes of other protocols are read without ports.
bool read_icmp_quote(const PacketView& p, IcmpQuote& q);

// Rewrites the quoted address at `field` (12: source, 16: destination) to `addr` (host order).
void set_quote_addr(PacketView& p, const IcmpQuote& q, uint32_t field, uint32_t addr);
// Rewrites the quoted 16-bit field at `field` of the transport header (TCP/UDP: 0 source port,
// 2 destination port; ICMP query: 4 identifier) to `v`.
void set_quote_port(PacketView& p, const IcmpQuote& q, uint32_t field, uint16_t v);

}  // namespace nfpark::nf
