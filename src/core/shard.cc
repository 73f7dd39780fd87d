#include "core/shard.h"

#include <algorithm>

#include "core/flow_key.h"
#include "core/parse.h"

namespace nfpark {

uint32_t Shard::of(const uint8_t* data, uint32_t len) const {
  if (n_ == 1) return 0;
  const PacketLayout L = parse_packet(data, len);
  FlowKey k;
  if (!extract_flow_key(data, L, k)) return 0;  // not IP, or its headers cut or malformed
  if (L.fragment) k.sport = k.dport = 0;        // every fragment of a datagram alike
  if (k.ip_version == 4 && !rules_.empty()) {
    uint32_t dst = 0;
    for (int i = 0; i < 4; ++i) dst = dst << 8 | k.dst[12 + i];
    for (const SteerRule& r : rules_)
      if (std::find(r.dst4.begin(), r.dst4.end(), dst) != r.dst4.end())
        return uint32_t(uint16_t(k.dport - r.port_min)) % n_;
  }
  // Mixed once more: the server choice (park/server_choice.h) takes its home server from the
  // same hashes (h % M), and worker and server must be independent.
  return uint32_t(mix64(k.symmetric_hash() ^ 0x5348415244ULL) % n_);
}

}  // namespace nfpark
