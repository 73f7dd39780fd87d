// ServiceTime: how long an NF server core spends on one packet, drawn per packet.
//
// Two means, for header-only packets (a parked payload's headers) and for whole packets: whole
// frames cost more where the payload is DMA'd into the cache and evicts state (QUEUE-MEM Table 1:
// 21.05 W/Mpps for 1.5 KB vs 1.21 W/Mpps for 64 B frames on the same NF). Given as nanoseconds,
// or as cycles at a clock rate (PayloadPark's NF-Light/Medium/Heavy are 50/300/570 cycles);
// nfpark's own cost of a chain is what `nf_bench` prints (ns/pkt on header-only packets).
// Distributions: fixed (every packet the mean), exp (exponential with that mean), uniform
// (mean ± spread * mean). Draws come from the run's seeded Rng: same seed, same times.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "sim/time.h"
#include "trace/rng.h"

namespace nfpark::sim {

enum class ServiceDist : uint8_t { kFixed, kExp, kUniform };
bool parse_service_dist(std::string_view s, ServiceDist& out);
const char* to_string(ServiceDist d);

struct ServiceTime {
  ServiceDist dist = ServiceDist::kFixed;
  double header_ns = 50;  // mean per header-only packet
  double whole_ns = 50;   // mean per whole packet
  double spread = 0.5;    // uniform: half-width as a fraction of the mean
  double burst_ns = 0;    // per burst (the poll, RX/TX descriptor handling)

  Picos sample(bool header_only, trace::Rng& rng) const;
  std::string validate() const;  // empty when usable
};

}  // namespace nfpark::sim
