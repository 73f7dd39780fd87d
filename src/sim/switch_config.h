// SwitchConfig: the switch model's parameters (switch.h), with the presets scenarios name.
//
//   preset     buffer  registers  pipeline (ingress/egress)  source
//   tofino1    20 MB   12 MB      400 / 400 ns               QUEUE-MEM §3 ("20 MB on 16-nm
//                                                            3.2-Tbps switches"); PayloadPark's
//                                                            "50–100 MB of stateful SRAM" is for
//                                                            6.4 Tbps chips: 12 MB ≈ a quarter
//                                                            of one pipe's share (Table 1: 26%)
//   tofino2    64 MB   24 MB      400 / 400 ns               QUEUE-MEM §3 ("64 MB on 7-nm
//                                                            12.8-Tbps switches", ref. [25])
// Pipeline latencies are assumptions (Tofino port-to-port latency is a few hundred ns); cells of
// 80 B are Tofino-1's buffer cell (Tofino-2: 176 B); both are settings.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/time.h"

namespace nfpark::sim {

struct SwitchConfig {
  std::vector<double> port_gbps;  // one entry per port (traffic ports, then NF ports)
  uint16_t queues = 8;            // egress queues per port (<= 64)
  std::vector<uint8_t> priority;  // per queue, higher is served first; empty = all equal
  Picos ingress_latency = 400 * kNs;
  Picos egress_latency = 400 * kNs;
  Picos link_delay = 0;                 // propagation on every link (0 = a short cable)
  uint64_t buffer_bytes = 20ull << 20;  // shared packet buffer, tail drop
  uint32_t cell_bytes = 80;             // buffer allocation unit
  uint64_t queue_limit_bytes = 0;       // per-queue cap on top of the shared buffer; 0 = none
  // Dynamic threshold (Choudhury-Hahne, as switch buffers share memory): a queue may grow to
  // dt_alpha x the buffer still free, so one congested queue cannot take the whole buffer and
  // starve the others. 0 = off (plain shared tail drop).
  double dt_alpha = 1.0;
  uint64_t register_bytes = 12ull << 20;  // stateful SRAM programs may reserve (registers)
  double recirc_gbps = 100;               // recirculation port bandwidth

  // Applies a preset by name ("tofino1", "tofino2"); false for an unknown name.
  bool apply_preset(std::string_view name);
  // Empty when usable, else what is wrong and how to fix it.
  std::string validate() const;
};

}  // namespace nfpark::sim
