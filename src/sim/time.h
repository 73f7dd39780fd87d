// Simulated time: picoseconds as a signed 64-bit count (±106 days). Picoseconds keep line-rate
// arithmetic exact enough at Tbps: a 60 B frame (+24 B preamble, FCS and gap) at 100 Gbps is
// 6720 ps. The shared logic (src/park, src/nf) takes nanoseconds (core/time.h): convert with
// to_nanos() at the call.
#pragma once
#include <cstdint>
#include <limits>

#include "core/time.h"

namespace nfpark::sim {

using Picos = int64_t;
constexpr Picos kPs = 1;
constexpr Picos kNs = 1000;
constexpr Picos kUs = 1000 * kNs;
constexpr Picos kMs = 1000 * kUs;
constexpr Picos kSec = 1000 * kMs;
constexpr Picos kNever = std::numeric_limits<Picos>::max();

// Bytes a frame occupies on an Ethernet wire beyond its captured length (no FCS in nfpark's
// frames): preamble + SFD 8, FCS 4, inter-frame gap 12.
constexpr uint32_t kWireOverhead = 24;

inline Nanos to_nanos(Picos t) {
  return t / kNs;
}
inline Picos from_nanos(Nanos t) {
  return t * kNs;
}
inline Picos from_seconds(double s) {
  return Picos(s * double(kSec) + 0.5);
}
inline double to_seconds(Picos t) {
  return double(t) / double(kSec);
}

// Time `bytes` take at `gbps` (10^9 bit/s), rounded to the nearest picosecond.
inline Picos serialization(uint64_t bytes, double gbps) {
  return Picos(double(bytes) * 8000.0 / gbps + 0.5);
}

}  // namespace nfpark::sim
