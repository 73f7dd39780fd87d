#include "trace/pad.h"

#include <cstring>

#include "core/bytes.h"
#include "core/checksum.h"
#include "core/parse.h"
#include "trace/link_layer.h"

namespace nfpark::trace {

PadResult pad_frame(const uint8_t* in, uint32_t len, uint32_t wire_len, uint8_t* out) {
  PadResult r;
  if (len > kMaxFrame) len = kMaxFrame;
  const uint32_t target = wire_len > len ? (wire_len < kMaxFrame ? wire_len : kMaxFrame) : len;
  std::memcpy(out, in, len);
  r.len = target;
  r.cut = wire_len > target ? wire_len - target : 0;
  if (target == len) return r;
  std::memset(out + len, 0, target - len);
  r.padded = true;
  // The checksum: only where the captured bytes held every header up to L4.
  const PacketLayout cap = parse_packet(in, len);
  if (!cap.ok() || !cap.l4_off || cap.fragment) return r;
  const uint8_t p = cap.l4_proto;
  if (p != proto::kTcp && p != proto::kUdp && p != proto::kIcmp && p != proto::kIcmpV6) return r;
  const PacketLayout L = parse_packet(out, target);
  if (!L.ok() || L.l4_off != cap.l4_off || L.ip_end > target) return r;
  const uint32_t at = L.l4_off + (p == proto::kTcp ? 16 : p == proto::kUdp ? 6 : 2);
  if (p == proto::kUdp && L.ip_version == 4 && load_be16(out + at) == 0) return r;  // no checksum
  store_be16(out + at, l4_checksum(out, L));
  r.checksum_fixed = true;
  return r;
}

}  // namespace nfpark::trace
