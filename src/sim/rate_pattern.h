// RatePattern: the offered load of one traffic port over time, in Gbps on the wire (frames +
// 24 B of preamble, FCS and gap), as QUEUE-MEM's Fig. 6 drives its switch:
//   constant  `gbps` throughout
//   ramp      from `from_gbps` to `to_gbps` linearly over `ramp`, then `to_gbps` (Fig. 6a:
//             200 Gbps -> 1.4 Tbps over 27 s on 14 ports, then 30 s steady)
//   square    `high_gbps` for half of `period`, then `low_gbps` (Fig. 6c: 100 <-> 10 Gbps)
//   random    every `change` each port draws its own rate in [min_gbps, max_gbps] with
//             P(rate <= min + x (max - min)) = x^skew, so skew > 1 favours higher rates
//             (Fig. 6b: 10–100 Gbps every 3 s, "a distribution which privileges higher values")
// A rate above the port's line rate is capped at it. Draws are a hash of (seed, port, period
// index): no state, the same at any query order.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "sim/time.h"

namespace nfpark::sim {

enum class PatternKind : uint8_t { kConstant, kRamp, kSquare, kRandom };
bool parse_pattern(std::string_view s, PatternKind& out);
const char* to_string(PatternKind k);

struct RatePattern {
  PatternKind kind = PatternKind::kConstant;
  double gbps = 10;
  double from_gbps = 1, to_gbps = 10;
  Picos ramp = kMs;
  double high_gbps = 100, low_gbps = 10;
  Picos period = 2 * kMs;
  double min_gbps = 10, max_gbps = 100;
  Picos change = kMs;
  double skew = 2;
  uint64_t seed = 1;

  double rate_at(Picos t, uint16_t port) const;  // Gbps, > 0
  double max_rate() const;                       // the largest rate_at can return
  std::string validate() const;
};

}  // namespace nfpark::sim
