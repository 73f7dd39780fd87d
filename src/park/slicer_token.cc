#include "park/slicer_token.h"

#include "core/bytes.h"
#include "core/checksum.h"

namespace nfpark::park {

bool carries_token(const uint8_t* pkt, uint32_t head, uint32_t pkt_len, const PacketLayout& L) {
  if (!token_eligible(L)) return false;
  const uint32_t at = L.payload_off;
  if (at + kTokenBytes > head) return false;
  return pkt_len < L.ip_end || load_be64(pkt + at) == kEscapeToken;
}

uint8_t read_dscp(const uint8_t* pkt, const PacketLayout& L) {
  const uint8_t* ip = pkt + L.l3_off;
  if (L.ip_version == 4) return ip[1] >> 2;
  const uint8_t tc = uint8_t((ip[0] & 0x0F) << 4 | ip[1] >> 4);
  return tc >> 2;
}

void write_dscp(uint8_t* pkt, const PacketLayout& L, uint8_t dscp) {
  uint8_t* ip = pkt + L.l3_off;
  dscp &= 0x3F;
  if (L.ip_version == 4) {
    const uint16_t old_w = load_be16(ip);
    ip[1] = uint8_t(dscp << 2 | (ip[1] & 0x03));  // keep ECN (RFC 3168)
    const uint16_t new_w = load_be16(ip);
    store_be16(ip + 10, csum_update16(load_be16(ip + 10), old_w, new_w));  // RFC 1624
    return;
  }
  const uint8_t tc = uint8_t((ip[0] & 0x0F) << 4 | ip[1] >> 4);
  const uint8_t ntc = uint8_t(dscp << 2 | (tc & 0x03));
  ip[0] = uint8_t((ip[0] & 0xF0) | ntc >> 4);
  ip[1] = uint8_t((ip[1] & 0x0F) | (ntc & 0x0F) << 4);
}

SliceInfo inspect_slice(const uint8_t* pkt, uint32_t len, uint32_t pkt_len, const PacketLayout& L) {
  SliceInfo s;
  s.wire_len = pkt_len;
  if (!carries_token(pkt, len, pkt_len, L)) return s;
  const uint32_t at = L.payload_off;
  s.token_at = at;
  if (load_be64(pkt + at) == kEscapeToken) {
    s.mark = SliceMark::kEscaped;
    s.wire_len = pkt_len - kTokenBytes;
  } else {
    s.mark = SliceMark::kSliced;
    s.wire_len = L.ip_end;
  }
  return s;
}

}  // namespace nfpark::park
