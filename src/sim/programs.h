// The switch programs of the parking modes: thin adapters from the switch model's passes to the
// engine-neutral logic in src/park, which does the work — the same code `nfpark run` runs.
//
//   baseline     traffic port -> its NF server's port (queue 0); NF port -> the packet's output
//                port (queue 0). Whole packets both ways.
//   payloadpark  traffic port -> park::PayloadPark::split (slice = the NF server) -> NF port;
//                NF port -> PayloadPark::merge -> output port. The slot tables are charged to the
//                switch's register budget: slots x slices x (bytes parked + 4 B of EXP/clock);
//                park_bytes = all is charged at 1500 B a slot (a hypothetical switch that parks
//                whole payloads). Parking more than `pass_bytes` (160 B, PayloadPark §6.2.5) a
//                packet takes one recirculation per further 160 B, on the split and again on the
//                merge (the header packet recirculates as it is).
//   queuemem     park::QueueMem over the switch's egress queues: queue_mem_program.h.
//   nfslicer, nicmem, split   the switch forwards as baseline; the mode is the NF server's NIC
//                program (nic_program.h: park::SlicerNic, park::NicSplit in front of PCIe).
#pragma once
#include <memory>
#include <string>

#include "park/payload_park.h"
#include "park/server_choice.h"
#include "sim/sim_buffer.h"
#include "sim/switch.h"

namespace nfpark::sim {

// How the switch's ports are used: traffic ports 0..traffic-1, then one port per NF server. A
// packet's NF server is park::ServerChoice's pick over its flow (5-tuple), the rule `nfpark
// run --nf-servers` uses; a header packet hashes as its original (the same L2-L4 headers).
struct Topology {
  uint16_t traffic = 1;
  uint16_t nf_servers = 1;
  uint16_t nf_port_of(const Packet* p) const {
    if (nf_servers <= 1) return traffic;
    const park::ServerChoice choice(nf_servers, park::Spread::kFiveTuple, 0);
    return uint16_t(traffic + choice.pick(SimBuffer::data(const_cast<Packet*>(p)),
                                          SimBuffer::head_len(const_cast<Packet*>(p))));
  }
  bool is_nf_port(uint16_t port) const { return port >= traffic && port < traffic + nf_servers; }
  uint8_t slice_of(uint16_t nf_port) const { return uint8_t(nf_port - traffic); }
  uint16_t ports() const { return uint16_t(traffic + nf_servers); }
  uint16_t recirc_port() const { return ports(); }  // the switch's internal port
};

enum class SimMode : uint8_t { kBaseline, kPayloadPark, kQueueMem, kNfSlicer, kNicmem, kSplit };
// Parses a mode name as `nfpark run` spells it. False with `err` set for an unknown name.
bool parse_sim_mode(std::string_view s, SimMode& out, std::string& err);
const char* to_string(SimMode m);

class BaselineProgram final : public SwitchProgram {
 public:
  explicit BaselineProgram(const Topology& t) : topo_(t) {}
  void ingress(Pass& pass, Packet* p) override;

 private:
  Topology topo_;
};

class PayloadParkProgram final : public SwitchProgram {
 public:
  PayloadParkProgram(const Topology& t, const park::ParkConfig& c, uint32_t pass_bytes = 160);
  // Charges the slot tables to the switch's registers. False with `err` set past the budget.
  bool reserve(Switch& sw, std::string& err) const;
  void ingress(Pass& pass, Packet* p) override;
  void drain() override { pp_.drain(); }
  uint64_t drops() const override { return pp_.counters().packet_drops(); }
  void drop_reasons(const CounterSink& s) const override { pp_.counters().drop_reasons(s); }
  uint64_t nf_drops_returned() const override { return pp_.counters().nf_drops_returned(); }
  void report(const CounterSink& s) const override;
  uint64_t held() const override { return pp_.parked(); }
  const park::ParkCounters& counters() const { return pp_.counters(); }

 private:
  enum : uint16_t { kToNf = 1, kToOut = 2 };
  void forward(Pass& pass, Packet* p, uint16_t port, uint16_t where);

  Topology topo_;
  park::ParkConfig cfg_;
  park::PayloadPark<SimBuffer> pp_;
  uint32_t recirculations_;  // per split and per merge of a parked payload
  uint64_t recirc_passes_ = 0;
};

}  // namespace nfpark::sim
