// ICMPv4 errors through the NAT (RFC 5508): reading and rewriting the quote (nat_icmp.h), and
// Nat's two error paths.
#include "nf/nat_icmp.h"

#include "core/bytes.h"
#include "core/checksum.h"
#include "nf/nat.h"
#include "nf/rewrite.h"

namespace nfpark::nf {
namespace {

// Stores `v` at `at` (inside the ICMP message) and patches the ICMP checksum, which covers it.
void put16(PacketView& p, uint32_t at, uint16_t v) {
  const uint16_t old = load_be16(p.data + at);
  if (old == v) return;
  store_be16(p.data + at, v);
  uint8_t* c = p.data + p.layout.l4_off + 2;
  store_be16(c, csum_update16(load_be16(c), old, v));
}

// Offset of the quoted transport checksum when the quote holds it, else 0.
uint32_t quoted_csum_at(const IcmpQuote& q) {
  switch (q.proto) {
    case proto::kTcp:
      return q.l4_len >= 18 ? q.l4 + 16 : 0;
    case proto::kUdp:
      return q.l4_len >= 8 ? q.l4 + 6 : 0;
    case proto::kIcmp:
      return q.l4_len >= 4 ? q.l4 + 2 : 0;
    default:
      return 0;
  }
}

// Patches the quoted transport checksum for a 16-bit word that changed from `old_v` to `new_v`
// (UDP's 0 means "no checksum" and stays; a computed 0 is sent as 0xFFFF, RFC 768).
void patch_quoted_csum(PacketView& p, const IcmpQuote& q, uint16_t old_v, uint16_t new_v) {
  const uint32_t at = quoted_csum_at(q);
  if (at == 0) return;
  uint16_t hc = load_be16(p.data + at);
  if (q.proto == proto::kUdp && hc == 0) return;
  hc = csum_update16(hc, old_v, new_v);
  if (q.proto == proto::kUdp && hc == 0) hc = 0xFFFF;
  put16(p, at, hc);
}

void set_v4(std::array<uint8_t, 16>& a, uint32_t v) {
  store_be32(a.data() + 12, v);
}

}  // namespace

bool read_icmp_quote(const PacketView& p, IcmpQuote& q) {
  const uint8_t* d = p.data;
  const uint32_t ip = p.layout.l4_off + proto::kIcmpHeader, end = p.layout.payload_off;
  if (ip + proto::kIpv4Header > end || (d[ip] >> 4) != 4) return false;
  const uint32_t ihl = uint32_t(d[ip] & 0x0F) * 4;
  if (ihl < proto::kIpv4Header || ip + ihl > end) return false;
  if (ipv4_header_checksum(d + ip, ihl) != load_be16(d + ip + 10)) return false;
  if (load_be16(d + ip + 6) & 0x1FFF) return false;  // a later fragment: no ports
  q.ip = ip;
  q.l4 = ip + ihl;
  q.l4_len = end - q.l4;
  q.proto = d[ip + 9];
  q.src = load_be32(d + ip + 12);
  q.dst = load_be32(d + ip + 16);
  if (q.proto == proto::kIcmp) {
    if (q.l4_len < 6) return false;
    q.icmp_type = d[q.l4];
    q.sport = q.dport = load_be16(d + q.l4 + 4);
  } else if (q.proto == proto::kTcp || q.proto == proto::kUdp) {
    if (q.l4_len < 4) return false;
    q.sport = load_be16(d + q.l4);
    q.dport = load_be16(d + q.l4 + 2);
  }
  return true;
}

void set_quote_addr(PacketView& p, const IcmpQuote& q, uint32_t field, uint32_t addr) {
  const uint32_t old = load_be32(p.data + q.ip + field);
  if (old == addr) return;
  put16(p, q.ip + field, uint16_t(addr >> 16));
  put16(p, q.ip + field + 2, uint16_t(addr));
  put16(p, q.ip + 10, csum_update32(load_be16(p.data + q.ip + 10), old, addr));
  if (q.proto == proto::kTcp || q.proto == proto::kUdp) {  // the pseudo-header holds it
    patch_quoted_csum(p, q, uint16_t(old >> 16), uint16_t(addr >> 16));
    patch_quoted_csum(p, q, uint16_t(old), uint16_t(addr));
  }
}

void set_quote_port(PacketView& p, const IcmpQuote& q, uint32_t field, uint16_t v) {
  const uint16_t old = load_be16(p.data + q.l4 + field);
  if (old == v) return;
  put16(p, q.l4 + field, v);
  patch_quoted_csum(p, q, old, v);
}

namespace {
// Only TCP, UDP and ICMP queries have sessions an error can belong to.
bool has_session(const IcmpQuote& q) {
  return q.proto == proto::kTcp || q.proto == proto::kUdp ||
         (q.proto == proto::kIcmp && icmp_kind(q.icmp_type) == IcmpKind::kQuery);
}
}  // namespace

// An error from outside about an outbound packet: the quote left with our address and port as
// its source. RFC 5508 REQ-4: revert the quote, send the error to the inside host; REQ-6: the
// flow is neither refreshed nor ended by it.
bool Nat::error_inbound(PacketView& p, Nanos now) {
  IcmpQuote q;
  if (!read_icmp_quote(p, q)) {
    ++drop_bad_quote_;
    return false;
  }
  const int a = external_index(q.src);
  uint32_t s = a >= 0 && has_session(q) ? reverse(size_t(a), q.sport) : kNoSlot;
  if (s == kNoSlot || !table_.live(s, now)) {
    ++drop_error_no_mapping_;
    return false;
  }
  const Table::Entry& e = table_.at(s);
  const bool icmp = q.proto == proto::kIcmp;
  if (e.key.proto != q.proto || load_be32(e.key.dst.data() + 12) != q.dst ||
      (!icmp && e.key.dport != q.dport)) {
    ++drop_error_no_mapping_;
    return false;
  }
  const uint32_t inside = load_be32(e.key.src.data() + 12);
  set_quote_addr(p, q, 12, inside);
  set_quote_port(p, q, icmp ? 4 : 0, e.key.sport);
  set_ipv4_dst(p, inside);
  ++errors_in_;
  return true;
}

// An error from inside about an inbound packet: the quote reached the inside host translated.
// RFC 5508 REQ-5: revert the quote to what the remote host sent; the error leaves from the
// flow's external address.
bool Nat::error_outbound(PacketView& p, Nanos now) {
  IcmpQuote q;
  if (!read_icmp_quote(p, q)) {
    ++drop_bad_quote_;
    return false;
  }
  FlowKey k;  // the flow's forward key: the quote, reversed
  k.ip_version = 4;
  k.proto = q.proto;
  set_v4(k.src, q.dst);
  set_v4(k.dst, q.src);
  k.sport = q.dport;
  k.dport = q.sport;
  const uint32_t s = has_session(q) ? table_.find(k, table_.hash(k), now, false) : Table::kNone;
  if (s == Table::kNone) {
    ++drop_error_no_mapping_;
    return false;
  }
  const Mapping& m = table_.at(s).value;
  set_quote_addr(p, q, 16, m.ext_addr);
  set_quote_port(p, q, q.proto == proto::kIcmp ? 4 : 2, m.ext_port);
  set_ipv4_src(p, m.ext_addr);
  ++errors_out_;
  return true;
}

}  // namespace nfpark::nf
