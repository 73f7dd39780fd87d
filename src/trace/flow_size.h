// Flow-size distributions of the trace generator (packets per flow), for `--flow-sizes`.
//
//   even           every flow sends its exact share of the packets (packets / flows, the first
//                  packets % flows flows one more) — the generator's historic behaviour.
//   pareto:ALPHA   Pareto (type I) with shape ALPHA > 1 and the mean M = ceil(packets / flows):
//                  scale x_m = M (ALPHA - 1) / ALPHA; heavy-tailed (ALPHA 1.1..1.5 is typical of
//                  Internet flow sizes: most flows are mice, most packets belong to elephants).
//   lognormal:S    log-normal with sigma S > 0 and the same mean M: mu = ln M - S^2 / 2.
// Every sample is rounded to a whole number of packets, >= 1 and capped at `cap` (the trace's
// packet count), so the realised mean is a little below M for the heaviest tails.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "trace/rng.h"

namespace nfpark::trace {

enum class FlowSizeKind : uint8_t { kEven, kPareto, kLognormal };

struct FlowSizeSpec {
  FlowSizeKind kind = FlowSizeKind::kEven;
  double param = 0;  // pareto: shape alpha (> 1); lognormal: sigma (> 0)

  // Parses "even", "pareto:A" or "lognormal:S". False with `*error` set otherwise.
  static bool parse(std::string_view s, FlowSizeSpec& out, std::string* error);
  std::string name() const;
  bool even() const { return kind == FlowSizeKind::kEven; }
  // A flow's packets, for a distribution of mean `mean` (not for kEven), in 1..cap.
  uint64_t sample(Rng& rng, double mean, uint64_t cap) const;
};

}  // namespace nfpark::trace
