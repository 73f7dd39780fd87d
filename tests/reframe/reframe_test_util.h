// Helpers shared by the reframe tests: packets are uint32_t ids, metas are made by hand.
#pragma once
#include <cstdint>
#include <vector>

#include "reframe/emitters.h"
#include "reframe/flow_reorder.h"

namespace nfpark::reframe::test {

using Out = VectorEmitter<uint32_t>;

// Also records what FlowReorder tells an emitter that has emit_run(): each packet's flow id and
// whether it starts an output run.
struct RunOut : VectorEmitter<uint32_t> {
  std::vector<uint64_t> flows;
  std::vector<bool> starts;
  void emit_run(uint32_t h, uint64_t flow, bool run_start) {
    emit(h);
    flows.push_back(flow);
    starts.push_back(run_start);
  }
};

inline PacketMeta meta(uint64_t flow, uint8_t flags = 0, uint32_t ack = 0) {
  PacketMeta m;
  m.flow = flow;
  m.flags = flags;
  m.ack = ack;
  return m;
}

// Pushes ids with the given flows (no flags) at `now`.
template <class R, class O>
void push_flows(R& r, const std::vector<uint32_t>& ids, const std::vector<uint64_t>& flows,
                Nanos now, O& out) {
  std::vector<PacketMeta> m;
  for (uint64_t f : flows) m.push_back(meta(f));
  r.push(std::span<const uint32_t>(ids), std::span<const PacketMeta>(m), now, out);
}

inline ReorderConfig small_config() {
  ReorderConfig c;
  c.t_buff = 10 * kMicro;
  c.max_burst = 32;
  c.max_held_packets = 1024;
  c.max_held_flows = 256;
  c.max_flows = 1024;
  c.bypass_first_packet = false;
  c.self_bypass.enabled = false;  // hand-made sequences test the reorder paths
  return c;
}

}  // namespace nfpark::reframe::test
