#include "sim/rate_pattern.h"

#include <algorithm>
#include <cmath>

#include "core/flow_key.h"

namespace nfpark::sim {

bool parse_pattern(std::string_view s, PatternKind& out) {
  if (s == "constant")
    out = PatternKind::kConstant;
  else if (s == "ramp")
    out = PatternKind::kRamp;
  else if (s == "square")
    out = PatternKind::kSquare;
  else if (s == "random")
    out = PatternKind::kRandom;
  else
    return false;
  return true;
}

const char* to_string(PatternKind k) {
  switch (k) {
    case PatternKind::kConstant:
      return "constant";
    case PatternKind::kRamp:
      return "ramp";
    case PatternKind::kSquare:
      return "square";
    case PatternKind::kRandom:
      return "random";
  }
  return "?";
}

double RatePattern::rate_at(Picos t, uint16_t port) const {
  switch (kind) {
    case PatternKind::kConstant:
      return gbps;
    case PatternKind::kRamp:
      if (t >= ramp) return to_gbps;
      return from_gbps + (to_gbps - from_gbps) * double(t) / double(ramp);
    case PatternKind::kSquare:
      return (t % period) < period / 2 ? high_gbps : low_gbps;
    case PatternKind::kRandom: {
      const uint64_t k = uint64_t(t / change);
      const uint64_t h = mix64(seed * 0x9E3779B97F4A7C15ull ^ mix64(uint64_t(port) << 40 ^ k));
      const double u = double(h >> 11) * 0x1.0p-53;
      return min_gbps + (max_gbps - min_gbps) * std::pow(u, 1.0 / skew);
    }
  }
  return gbps;
}

double RatePattern::max_rate() const {
  switch (kind) {
    case PatternKind::kConstant:
      return gbps;
    case PatternKind::kRamp:
      return std::max(from_gbps, to_gbps);
    case PatternKind::kSquare:
      return std::max(high_gbps, low_gbps);
    case PatternKind::kRandom:
      return max_gbps;
  }
  return gbps;
}

std::string RatePattern::validate() const {
  auto pos = [](double g) { return g > 0 && g <= 1e5; };
  switch (kind) {
    case PatternKind::kConstant:
      if (!pos(gbps)) return "rate_gbps must be > 0";
      break;
    case PatternKind::kRamp:
      if (!pos(from_gbps) || !pos(to_gbps)) return "ramp rates must be > 0";
      if (ramp <= 0) return "ramp_ms must be > 0";
      break;
    case PatternKind::kSquare:
      if (!pos(high_gbps) || !pos(low_gbps)) return "square rates must be > 0";
      if (period <= 1) return "period_ms must be > 0";
      break;
    case PatternKind::kRandom:
      if (!pos(min_gbps) || !pos(max_gbps) || min_gbps > max_gbps)
        return "random rates need 0 < min_gbps <= max_gbps";
      if (change <= 0) return "change_ms must be > 0";
      if (!(skew > 0)) return "skew must be > 0";
      break;
  }
  return "";
}

}  // namespace nfpark::sim
