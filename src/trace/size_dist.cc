#include "trace/size_dist.h"

#include <charconv>

namespace nfpark::trace {

bool SizeSpec::parse(std::string_view s, SizeSpec& out, std::string* error) {
  if (s == "dc")
    out = {SizeKind::kDc, 0};
  else if (s == "imix")
    out = {SizeKind::kImix, 0};
  else if (s == "caida")
    out = {SizeKind::kCaida, 0};
  else {
    uint32_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || v < 64 || v > 9000) {
      if (error)
        *error = "bad size '" + std::string(s) + "': use a frame size 64..9000, dc, imix or caida";
      return false;
    }
    out = {SizeKind::kFixed, v};
  }
  return true;
}

std::string SizeSpec::name() const {
  switch (kind) {
    case SizeKind::kFixed:
      return std::to_string(fixed);
    case SizeKind::kDc:
      return "dc";
    case SizeKind::kImix:
      return "imix";
    case SizeKind::kCaida:
      return "caida";
  }
  return "?";
}

uint32_t SizeSpec::sample(Rng& rng) const {
  switch (kind) {
    case SizeKind::kFixed:
      return fixed;
    case SizeKind::kDc:
      return rng.below(10) < 3 ? uint32_t(rng.range(64, 192)) : uint32_t(rng.range(892, 1518));
    case SizeKind::kImix: {
      uint64_t r = rng.below(12);
      return r < 7 ? 64 : r < 11 ? 594 : 1518;
    }
    case SizeKind::kCaida: {
      uint64_t r = rng.below(100);
      if (r < 32) return 64;
      if (r < 40) return uint32_t(rng.range(65, 575));
      if (r < 43) return 590;
      if (r < 50) return uint32_t(rng.range(591, 1513));
      return 1514;
    }
  }
  return 64;
}

double SizeSpec::mean() const {
  switch (kind) {
    case SizeKind::kFixed:
      return fixed;
    case SizeKind::kDc:
      return 0.3 * 128 + 0.7 * 1205;
    case SizeKind::kImix:
      return 4342.0 / 12;
    case SizeKind::kCaida:
      return 0.32 * 64 + 0.08 * 320 + 0.03 * 590 + 0.07 * 1052 + 0.5 * 1514;
  }
  return 0;
}

}  // namespace nfpark::trace
