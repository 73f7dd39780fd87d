#include "sim/service.h"

#include <cmath>

namespace nfpark::sim {

bool parse_service_dist(std::string_view s, ServiceDist& out) {
  if (s == "fixed")
    out = ServiceDist::kFixed;
  else if (s == "exp")
    out = ServiceDist::kExp;
  else if (s == "uniform")
    out = ServiceDist::kUniform;
  else
    return false;
  return true;
}

const char* to_string(ServiceDist d) {
  switch (d) {
    case ServiceDist::kFixed:
      return "fixed";
    case ServiceDist::kExp:
      return "exp";
    case ServiceDist::kUniform:
      return "uniform";
  }
  return "?";
}

Picos ServiceTime::sample(bool header_only, trace::Rng& rng) const {
  const double mean_ps = (header_only ? header_ns : whole_ns) * double(kNs);
  switch (dist) {
    case ServiceDist::kFixed:
      return Picos(mean_ps + 0.5);
    case ServiceDist::kExp:
      return Picos(-std::log(1.0 - rng.uniform()) * mean_ps + 0.5);
    case ServiceDist::kUniform:
      return Picos(mean_ps * (1.0 + spread * (2.0 * rng.uniform() - 1.0)) + 0.5);
  }
  return 0;
}

std::string ServiceTime::validate() const {
  if (!(header_ns >= 0) || !(whole_ns >= 0) || !(burst_ns >= 0))
    return "service times must be >= 0 ns";
  if (!(spread >= 0 && spread <= 1)) return "service spread must be a fraction from 0 to 1";
  return "";
}

}  // namespace nfpark::sim
