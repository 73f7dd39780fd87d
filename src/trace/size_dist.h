// Packet-size distributions of the trace generator. Sizes are Ethernet frame bytes without FCS.
//
//   fixed N  every frame is N bytes (64..9000).
//   dc       bimodal datacenter mix built to the two moments PayloadPark states for its
//            Benson et al. (IMC'10) trace: mean 882 B, 30% of packets with < 160 B of payload.
//            30%: uniform 64..192 B; 70%: uniform 892..1518 B. Mean = 0.3*128 + 0.7*1205 = 882 B.
//   imix     simple IMIX, 7:4:1 of 64/594/1518 B. Mean = 4342/12 = 361.8 B.
//   caida    trimodal Internet mix shaped like CAIDA backbone traces (minimum-size ACKs, 576 B
//            IP datagrams, 1500 B MTU datagrams) with weights chosen for a mean ≈ 900 B:
//            32% 64 B, 8% uniform 65..575 B, 3% 590 B, 7% uniform 591..1513 B, 50% 1514 B.
//            Mean = 894.4 B.
// See docs/traces.md for sources and for how sizes too small for the headers are raised.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "trace/rng.h"

namespace nfpark::trace {

enum class SizeKind : uint8_t { kFixed, kDc, kImix, kCaida };

struct SizeSpec {
  SizeKind kind = SizeKind::kFixed;
  uint32_t fixed = 64;  // frame bytes, for kFixed

  // Parses "64".."9000", "dc", "imix" or "caida". False with `*error` set otherwise.
  static bool parse(std::string_view s, SizeSpec& out, std::string* error);
  std::string name() const;
  uint32_t sample(Rng& rng) const;
  double mean() const;  // exact mean of the distribution as defined (before any raising)
};

}  // namespace nfpark::trace
