// The NF side of the mode fuzzer: byte edits an NF makes (tracked: the bytes it writes become
// Src::kNf, the bytes it copies keep their origin) and the honest NF.
//
// The honest NF is a deterministic function of a packet's headers, so the same function applied
// to whole frames gives the baseline: per flow (FlowKey hash) it drops, rewrites the source port
// (as a NAT does) and pushes a VLAN tag (the header grows by 4 bytes). It never touches a byte at
// or past the end of the L4 header, so a tag or a token stays as the switch wrote it.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/bytes.h"
#include "core/flow_key.h"
#include "core/parse.h"
#include "fuzz/track_buffer.h"

namespace nfpark::fuzz {

inline void nf_write(TPkt& p, uint32_t off, const uint8_t* b, uint32_t n) {
  for (uint32_t i = 0; i < n && off + i < p.size(); ++i) {
    p.bytes[off + i] = b[i];
    p.from[off + i] = Origin{Src::kNf, 0, 0};
  }
}
inline void nf_insert(TPkt& p, uint32_t off, const uint8_t* b, uint32_t n) {
  off = std::min(off, p.head);
  p.bytes.insert(p.bytes.begin() + off, b, b + n);
  p.from.insert(p.from.begin() + off, n, Origin{Src::kNf, 0, 0});
  p.head += n;
  p.headroom -= std::min(p.headroom, n);
  p.reshaped = true;
}
// Copies src[so, so + n) over dst[doff, ...), origins included (an NF moving bytes around).
inline void nf_copy(TPkt& dst, uint32_t doff, const TPkt& src, uint32_t so, uint32_t n) {
  dst.reshaped = true;
  for (uint32_t i = 0; i < n && doff + i < dst.size() && so + i < src.size(); ++i) {
    dst.bytes[doff + i] = src.bytes[so + i];
    dst.from[doff + i] = src.from[so + i];
  }
}
inline void nf_truncate(TPkt& p, uint32_t len) {
  if (len >= p.size()) return;
  p.reshaped = true;
  p.bytes.resize(len);
  p.from.resize(len);
  p.head = std::min(p.head, len);
}

struct HonestNf {
  uint8_t drop_level = 0;  // flows with (hash & 15) < drop_level are dropped
  uint16_t port_xor = 0;   // the source port is XORed with this
  bool push_vlan = false;  // flows with hash bit 4 set get a VLAN tag pushed
  bool notify = true;      // drops are notified to the switch (explicit drop)

  // Parses the headers in the first segment, as an NF does. True: pass (p edited); false: drop.
  bool apply(TPkt& p) const {
    const PacketLayout L = parse_packet(p.bytes.data(), p.head);
    if (!L.ok() || !L.has_ports()) return true;
    FlowKey k;
    extract_flow_key(p.bytes.data(), L, k);
    const uint64_t h = k.hash();
    if ((h & 15) < drop_level) return false;
    if (port_xor) {
      uint8_t b[2];
      store_be16(b, uint16_t(load_be16(p.bytes.data() + L.l4_off) ^ port_xor));
      nf_write(p, L.l4_off, b, 2);
    }
    if (push_vlan && (h >> 4 & 1) && L.vlans < 2) {
      const uint8_t tag[4] = {0x81, 0x00, 0x00, 0x05};
      nf_insert(p, 12, tag, 4);
    }
    return true;
  }
};

}  // namespace nfpark::fuzz
