#include "sim/programs.h"

namespace nfpark::sim {

bool parse_sim_mode(std::string_view s, SimMode& out, std::string& err) {
  if (s == "baseline" || s == "host") {
    out = SimMode::kBaseline;
    return true;
  }
  if (s == "payloadpark") {
    out = SimMode::kPayloadPark;
    return true;
  }
  if (s == "queuemem") {
    out = SimMode::kQueueMem;
    return true;
  }
  if (s == "nfslicer" || s == "nicmem" || s == "split") {
    err = "mode '" + std::string(s) +
          "' does not run in the simulator yet (baseline, payloadpark and queuemem do; see "
          "docs/sim.md)";
    return false;
  }
  err = "unknown mode '" + std::string(s) +
        "' (baseline, payloadpark, queuemem, nfslicer, nicmem, split)";
  return false;
}

const char* to_string(SimMode m) {
  switch (m) {
    case SimMode::kBaseline:
      return "baseline";
    case SimMode::kPayloadPark:
      return "payloadpark";
    case SimMode::kQueueMem:
      return "queuemem";
  }
  return "?";
}

void BaselineProgram::ingress(Pass& pass, Packet* p) {
  if (topo_.is_nf_port(pass.port()))
    pass.enqueue(p, p->out_port, 0);
  else
    pass.enqueue(p, topo_.nf_port_of(p), 0);
}

namespace {
// Bytes the second pipe adds per recirculation (PayloadPark §6.2.5: 160 -> 352 B).
constexpr uint32_t kRecircBytes = 192;
}  // namespace

PayloadParkProgram::PayloadParkProgram(const Topology& t, const park::ParkConfig& c,
                                       uint32_t pass_bytes)
    : topo_(t), cfg_(c), pp_([&] {
        park::ParkConfig pc = c;
        pc.slices = uint8_t(t.nf_servers);
        return pc;
      }()) {
  cfg_.slices = uint8_t(t.nf_servers);
  recirculations_ =
      c.park_bytes > pass_bytes ? (c.park_bytes - pass_bytes + kRecircBytes - 1) / kRecircBytes : 0;
}

bool PayloadParkProgram::reserve(Switch& sw, std::string& err) const {
  const uint64_t per_slot = (cfg_.park_bytes ? cfg_.park_bytes : 1500) + 4;
  const uint64_t slots = std::min<uint64_t>(cfg_.slots, pp_.codec().index_limit());
  return sw.reserve_registers(slots * cfg_.slices * per_slot,
                              "PayloadPark (" + std::to_string(slots) + " slots x " +
                                  std::to_string(cfg_.slices) + " slices)",
                              err);
}

// Sends p on to `port` through `recirculations_` recirculation passes first (where: kToNf or
// kToOut says where it goes after them).
void PayloadParkProgram::forward(Pass& pass, Packet* p, uint16_t port, uint16_t where) {
  if (recirculations_ == 0) return pass.enqueue(p, port, 0);
  p->user = uint16_t(where << 8 | recirculations_);
  ++recirc_passes_;
  pass.recirculate(p);
}

void PayloadParkProgram::ingress(Pass& pass, Packet* p) {
  const uint16_t in = pass.port();
  if (in == topo_.recirc_port()) {
    const uint16_t left = uint16_t((p->user & 0xFF) - 1), where = p->user >> 8;
    const uint16_t port = where == kToNf ? topo_.nf_port_of(p) : p->out_port;
    if (left == 0) {
      p->user = 0;
      return pass.enqueue(p, port, 0);
    }
    p->user = uint16_t(where << 8 | left);
    ++recirc_passes_;
    return pass.recirculate(p);
  }
  if (topo_.is_nf_port(in)) {
    const uint64_t merges = pp_.counters().merges;
    Packet* m = pp_.merge(p, topo_.slice_of(in));
    if (!m) return;  // dropped and counted by PayloadPark (or an explicit drop)
    if (pp_.counters().merges != merges) return forward(pass, m, m->out_port, kToOut);
    return pass.enqueue(m, m->out_port, 0);
  }
  const uint16_t nf = topo_.nf_port_of(p);
  const uint64_t splits = pp_.counters().splits;
  Packet* h = pp_.split(p, topo_.slice_of(nf));
  if (!h) return;
  if (pp_.counters().splits != splits) return forward(pass, h, nf, kToNf);
  pass.enqueue(h, nf, 0);
}

void PayloadParkProgram::report(const CounterSink& s) const {
  pp_.counters().report([&](std::string_view k, uint64_t v) { s("park." + std::string(k), v); });
  s("park.parked_at_end", pp_.parked());
  s("park.recirculation_passes", recirc_passes_);
}

}  // namespace nfpark::sim
