#include "park/slicer_token.h"

#include <algorithm>

#include "core/bytes.h"
#include "core/checksum.h"
#include "core/flow_key.h"

namespace nfpark::park {

GenerationScrambler::GenerationScrambler(uint32_t bits, uint64_t key)
    : bits_(std::clamp<uint32_t>(bits, 1, 63)),
      mask_((uint64_t(1) << bits_) - 1),
      k0_(mix64(key ^ 0x6e66736c69636572ull)),
      k1_(mix64(key + 0x9e3779b97f4a7c15ull)),
      m0_(mix64(key + 2 * 0x9e3779b97f4a7c15ull) | 1),
      m1_(mix64(key + 3 * 0x9e3779b97f4a7c15ull) | 1) {}

uint64_t GenerationScrambler::operator()(uint64_t x) const {
  const uint32_t s = std::max<uint32_t>(1, bits_ / 2);
  x = (x ^ k0_) & mask_;
  x = (x * m0_) & mask_;  // odd multiplier: a bijection modulo 2^bits
  x ^= x >> s;
  x = (x + k1_) & mask_;
  x = (x * m1_) & mask_;
  x ^= x >> s;
  return x;
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

SliceInfo inspect_slice(const uint8_t* pkt, uint32_t len, uint32_t pkt_len, const PacketLayout& L,
                        uint8_t mark) {
  SliceInfo s;
  s.wire_len = pkt_len;
  if (!L.ok() || L.ip_version == 0 || read_dscp(pkt, L) != mark) return s;
  const uint32_t at = L.payload_off;
  if (at + kTokenBytes > len) return s;  // not a token we can read: the splice side judges it
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
