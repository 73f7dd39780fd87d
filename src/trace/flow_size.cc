#include "trace/flow_size.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace nfpark::trace {

bool FlowSizeSpec::parse(std::string_view s, FlowSizeSpec& out, std::string* error) {
  auto fail = [&](const char* why) {
    if (error) *error = "'" + std::string(s) + "' " + why;
    return false;
  };
  if (s == "even") {
    out = {};
    return true;
  }
  const size_t colon = s.find(':');
  if (colon == std::string_view::npos) return fail("is not even, pareto:ALPHA or lognormal:SIGMA");
  const std::string_view kind = s.substr(0, colon);
  const std::string num(s.substr(colon + 1));
  char* end = nullptr;
  const double v = std::strtod(num.c_str(), &end);
  if (num.empty() || *end != '\0' || !std::isfinite(v)) return fail("has no number after ':'");
  if (kind == "pareto") {
    if (!(v > 1.0 && v <= 10)) return fail("needs a shape ALPHA in (1, 10] (a finite mean)");
    out = {FlowSizeKind::kPareto, v};
    return true;
  }
  if (kind == "lognormal") {
    if (!(v > 0 && v <= 5)) return fail("needs a SIGMA in (0, 5]");
    out = {FlowSizeKind::kLognormal, v};
    return true;
  }
  return fail("is not even, pareto:ALPHA or lognormal:SIGMA");
}

std::string FlowSizeSpec::name() const {
  char b[48];
  switch (kind) {
    case FlowSizeKind::kEven:
      return "even";
    case FlowSizeKind::kPareto:
      std::snprintf(b, sizeof b, "pareto:%g", param);
      return b;
    case FlowSizeKind::kLognormal:
      std::snprintf(b, sizeof b, "lognormal:%g", param);
      return b;
  }
  return "?";
}

uint64_t FlowSizeSpec::sample(Rng& rng, double mean, uint64_t cap) const {
  double x = mean;
  const double u = 1.0 - rng.uniform();  // (0, 1]
  if (kind == FlowSizeKind::kPareto) {
    const double xm = mean * (param - 1) / param;
    x = xm / std::pow(u, 1.0 / param);
  } else if (kind == FlowSizeKind::kLognormal) {
    // Box-Muller from two uniforms (one normal per sample: deterministic draw count).
    const double v = rng.uniform();
    const double z = std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
    x = std::exp(std::log(mean) - param * param / 2 + param * z);
  }
  const double r = std::floor(x + 0.5);
  if (!(r >= 1)) return 1;
  return r >= double(cap) ? cap : uint64_t(r);
}

}  // namespace nfpark::trace
