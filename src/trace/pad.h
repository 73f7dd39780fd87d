// Pad: rebuilds a truncated frame (captured length < wire length, as in a header-only backbone
// trace) to its wire length with a filler payload, as `tcprewrite --fixlen=pad` does, so the
// trace can be replayed at its real sizes (`nfpark trace pad IN OUT`, `nfpark run --pad`).
//
//   filler      zero bytes after the captured ones, up to the wire length (at most kMaxFrame;
//               a longer wire length keeps the rest as not captured).
//   IPv4 header checksum   unchanged: the header bytes are not touched, so it stays as valid as
//               it was in the capture.
//   L4 checksum recomputed over the padded segment (TCP, UDP, ICMP, ICMPv6) when the capture
//               held the whole L4 header, the packet is not a fragment and its IP length ends
//               within the padded frame: the captured checksum covered payload bytes that are
//               gone, so it could never verify; the recomputed one does. A UDP/IPv4 checksum of 0
//               ("none") stays 0. Otherwise (cut inside a header, fragments, IP length beyond the
//               frame, non-IP) the checksum is left as captured.
// Frames that are not truncated are copied unchanged.
#pragma once
#include <cstdint>

namespace nfpark::trace {

struct PadResult {
  uint32_t len = 0;             // bytes written to `out`
  uint32_t cut = 0;             // wire bytes still not held (wire length above kMaxFrame)
  bool padded = false;          // filler was added
  bool checksum_fixed = false;  // the L4 checksum was recomputed
};

// Writes the padded frame to `out`, which has room for kMaxFrame bytes.
PadResult pad_frame(const uint8_t* in, uint32_t len, uint32_t wire_len, uint8_t* out);

}  // namespace nfpark::trace
