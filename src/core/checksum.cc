#include "core/checksum.h"

#include "core/bytes.h"

namespace nfpark {

uint32_t csum_partial(const uint8_t* d, uint32_t len, uint32_t seed) {
  uint64_t sum = seed;
  uint32_t i = 0;
  for (; i + 8 <= len; i += 8) {
    sum += load_be32(d + i);
    sum += load_be32(d + i + 4);
  }
  for (; i + 2 <= len; i += 2) sum += load_be16(d + i);
  if (i < len) sum += uint32_t(d[i]) << 8;
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return uint32_t(sum);
}

uint16_t csum_update_bytes(uint16_t hc, const uint8_t* o, const uint8_t* n, uint32_t len) {
  for (uint32_t i = 0; i + 1 < len; i += 2) hc = csum_update16(hc, load_be16(o + i), load_be16(n + i));
  if (len & 1) hc = csum_update16(hc, uint16_t(o[len - 1] << 8), uint16_t(n[len - 1] << 8));
  return hc;
}

uint16_t ipv4_header_checksum(const uint8_t* ip, uint32_t ihl) {
  uint32_t s = csum_partial(ip, 10);
  s = csum_partial(ip + 12, ihl - 12, s);
  return csum_finish(s);
}

namespace {
uint32_t pseudo_header(const uint8_t* pkt, const PacketLayout& L, uint32_t l4_len) {
  const uint8_t* ip = pkt + L.l3_off;
  uint32_t s;
  if (L.ip_version == 4) {
    s = csum_partial(ip + 12, 8);
  } else {
    s = csum_partial(ip + 8, 32);
  }
  s += L.l4_proto;
  s += l4_len & 0xFFFF;
  s += l4_len >> 16;
  return s;
}
uint32_t csum_offset(const PacketLayout& L) {
  switch (L.l4_proto) {
    case proto::kTcp: return 16;
    case proto::kUdp: return 6;
    default: return 2;  // ICMP, ICMPv6
  }
}
}  // namespace

uint16_t l4_checksum(const uint8_t* pkt, const PacketLayout& L) {
  uint32_t l4_len = L.ip_end - L.l4_off;
  uint32_t off = csum_offset(L);
  const uint8_t* l4 = pkt + L.l4_off;
  uint32_t s = (L.l4_proto == proto::kIcmp) ? 0 : pseudo_header(pkt, L, l4_len);
  s = csum_partial(l4, off, s);
  s = csum_partial(l4 + off + 2, l4_len - off - 2, s);
  uint16_t c = csum_finish(s);
  if (c == 0 && L.l4_proto == proto::kUdp) c = 0xFFFF;  // RFC 768: 0 means "no checksum"
  return c;
}

void fill_checksums(uint8_t* pkt, const PacketLayout& L) {
  if (L.ip_version == 4) {
    uint8_t* ip = pkt + L.l3_off;
    store_be16(ip + 10, 0);
    store_be16(ip + 10, ipv4_header_checksum(ip, uint32_t(ip[0] & 0xF) * 4));
  }
  if (L.l4_off && !L.fragment && L.captured >= L.ip_end) {
    store_be16(pkt + L.l4_off + csum_offset(L), l4_checksum(pkt, L));
  }
}

bool verify_checksums(const uint8_t* pkt, const PacketLayout& L) {
  if (L.ip_version == 4) {
    const uint8_t* ip = pkt + L.l3_off;
    if (ipv4_header_checksum(ip, uint32_t(ip[0] & 0xF) * 4) != load_be16(ip + 10)) return false;
  }
  if (L.l4_off && !L.fragment && L.captured >= L.ip_end) {
    uint16_t stored = load_be16(pkt + L.l4_off + csum_offset(L));
    if (L.l4_proto == proto::kUdp && L.ip_version == 4 && stored == 0) return true;
    return stored == l4_checksum(pkt, L);
  }
  return true;
}

}  // namespace nfpark
