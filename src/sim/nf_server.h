// Element:  NfServer — a model of an NF server: its NIC port, PCIe, RX rings and cores, running
//           nfpark's real NF chain (src/nf, nf::build_chain) and NF endpoint
//           (park/nf_endpoint.h) on every packet, in virtual time.
// Ports:    arrive() from the switch's NF port -> NIC -> PCIe -> ring -> core -> PCIe -> NIC ->
//           the switch's NF port (connect()).
// Config:   NfServerConfig below (units in the names); service times in service.h.
// Time:     one event per core burst; an idle core wakes for the next DMA completion.
// Counters: rx, tx, drop.{nic_buffer_full, rx_ring_full, nf, fault}, explicit drop notices,
//           header_only / whole (the endpoint's), busy time per core.
// Refs:     PayloadPark §6.3 (compute-bound NF servers, PCIe load), pcie-bench (a DPDK NIC needs
//           frames >= 170 B for 40 Gbps), QUEUE-MEM §5 (FAJITA, 100 Mpps of headers).
//
// Theory of operation
//  A frame whose last bit reaches the NIC at t is DMA'd to host memory through a FIFO PCIe
//  channel: done at max(t, channel free) + (len + pcie_overhead) * 8 / pcie rate. If more than
//  nic_buffer bytes wait for the channel, it is dropped at the NIC. When its DMA completes it
//  takes a descriptor of its core's RX ring (RSS: the flow picks the core); a full ring drops it.
//  The ring is filled lazily, when the core next looks (a burst ends, or an idle core wakes at
//  the next completion): ring occupancy only falls when the core takes a burst, so the packets
//  that completed since the last burst see exactly the occupancy they would have seen.
//  An idle core takes up to `burst` packets, runs the endpoint and the chain on them at once
//  (time = the burst's start), and is busy for burst_ns + Σ per-packet service times; then the
//  survivors go back through PCIe (same model, the other direction), wait `latency` more, and the
//  NIC sends them at link rate. An NF drop becomes an explicit-drop notice (OP bit) or is freed,
//  as the endpoint says; `drop` loses that fraction of what survives the chain, silently (a
//  header-drop fault, as QUEUE-MEM's Fig. 7 injects). `[faults]` (set_faults, fault_stage.h)
//  then runs the dataplane's fault injector on the survivors of each chain burst.
//  The burst step (view, chain, drop notification) is park::NfBurst (park/nf_burst.h), the
//  same code the dataplane's NF server runs; this model adds the NIC, PCIe, rings and cores.
//  NIC hook (set_nic, nic_program.h): a frame from the wire first goes through the NIC's
//  program (NFSlicer slices, nicmem/split cut); PCIe then carries what the program says
//  crosses — its bytes + pcie_overhead + 16 B per extra descriptor — and a packet whose payload
//  stays on the NIC costs a header's service time. On the way back the host's packet crosses
//  PCIe (its cost likewise) and the program makes the frame that leaves (splice, gather).
#pragma once
#include <memory>
#include <optional>
#include <vector>

#include "nf/nf.h"
#include "park/nf_burst.h"
#include "sim/egress_port.h"
#include "sim/fault_stage.h"
#include "sim/nic_program.h"
#include "sim/pipe.h"
#include "sim/reframe_box_stage.h"
#include "sim/service.h"
#include "sim/sim_buffer.h"

namespace nfpark::sim {

struct NfServerConfig {
  double link_gbps = 100;             // NIC port
  double pcie_gbps = 50;              // per direction, usable
  uint32_t pcie_overhead_bytes = 72;  // per packet per direction: descriptors, TLP headers
  uint64_t nic_buffer_bytes = 256 << 10;
  uint16_t cores = 1;
  uint32_t rx_ring = 1024;  // descriptors per core
  uint32_t burst = 32;      // <= nf::kBurst
  ServiceTime service;
  Picos latency = 0;     // fixed delay added after processing
  Picos link_delay = 0;  // propagation back to the switch
  double drop = 0;       // fraction of processed packets lost silently (fault)
  uint64_t seed = 1;
  bool notify_drops = true;
  std::string validate() const;
};

struct NfServerCounters {
  uint64_t rx = 0, tx = 0;
  uint64_t drop_nic_buffer = 0, drop_rx_ring = 0, drop_fault = 0;
  uint64_t nf_drops = 0, drop_notices = 0;      // chain drops; those sent back as notices
  uint64_t nf_freed = 0;                        // chain drops freed here (not sent as notices)
  uint64_t fault_injected = 0, duplicates = 0;  // [faults]: dropped, duplicated (fault_stage.h)
  uint64_t reframe_coalesced = 0;               // pure ACKs Reframer's ACK coalescing freed
  // Packets this server lost, each once: a notice is counted where it ends (the switch finds
  // its payload: the mode's explicit drop; or it is lost or refused on the way: that reason).
  uint64_t drops() const {
    return drop_nic_buffer + drop_rx_ring + drop_fault + nf_freed + fault_injected +
           reframe_coalesced;
  }
};

class NfServer final : public PortPeer,
                       private EventHandler,
                       private FaultStage::Host,
                       private ReframeBoxStage::Host {
 public:
  // `format`: the parking tag the switch adds (nullopt: whole packets, no tag).
  NfServer(Engine& e, const NfServerConfig& c, std::unique_ptr<nf::Chain> chain,
           std::optional<park::TagFormat> format);
  // `step`: the burst step as run::build_nf_step assembled it (run/nf_assembly.h).
  NfServer(Engine& e, const NfServerConfig& c, std::unique_ptr<park::NfBurst<SimBuffer>> step);
  void connect(PortPeer* back, uint16_t link) {
    back_ = back;
    back_link_ = link;
  }
  void arrive(Packet* p, Picos at, uint16_t link) override;
  // Without a NIC program or a Reframer box, arrive() only reads `at` and changes what the
  // server's own later events read (PCIe's FIFO, a core's DMA queue): a train may call it ahead.
  bool takes_early() const override { return !nic_ && !box_; }
  // Puts a NIC program in front of PCIe (nullptr: whole frames, as HostNic without counters).
  void set_nic(std::unique_ptr<NicProgram> nic) { nic_ = std::move(nic); }
  // Injects `[faults]` on the way back (fault_stage.h; `shape`: run::nf_tag_shape of the mode).
  void set_faults(const park::FaultConfig& f, park::TagShape shape) {
    if (f.any()) {
      faults_ = std::make_unique<FaultStage>(e_, f, shape, static_cast<FaultStage::Host&>(*this));
      faults_->set_server(index_);
    }
  }
  const FaultStage* faults() const { return faults_.get(); }
  // Reframer as a box in front of the cores (reframe_box_stage.h; `[reframe] placement = "box"`).
  void set_box(std::unique_ptr<park::ReframeStage<SimBuffer>> stage) {
    if (stage) {
      box_ = std::make_unique<ReframeBoxStage>(e_, std::move(stage),
                                               static_cast<ReframeBoxStage::Host&>(*this));
      box_->set_server(index_);
    }
  }
  // The server's number (0..254): its devices' place in the tie order at an instant (sim/tie.h:
  // cores at Rank::kNfCore, index server * 1024 + core).
  void set_index(uint16_t server);
  // Reframer, in-chain or the box's (nullptr: none).
  const auto* reframer() const { return box_ ? &box_->stage().reframer() : step_->reframer(); }
  const NicProgram* nic() const { return nic_.get(); }
  void drain_nic() {
    if (nic_) nic_->drain();
  }

  const NfServerCounters& counters() const { return ctr_; }
  const park::NfEndpointCounters& endpoint() const { return step_->endpoint(); }
  const nf::Chain& chain() const { return step_->chain(); }
  Picos busy_time() const;  // summed over cores
  void report(const CounterSink& s) const;

 private:
  struct Core {
    PacketFifo dma;            // DMA in flight or done, not yet seen by the core (p->due: done)
    PacketFifo ring;           // RX descriptors filled
    std::vector<Packet*> out;  // the burst in service
    bool busy = false;
    bool event = false;  // an event is pending for this core
    Picos busy_ps = 0;
  };
  void on_event(uint64_t core) override;  // a burst is done, or a DMA completion for an idle core
  void fill_ring(Core& core);
  void start_burst(uint16_t core);
  void send_back(Packet* p);
  Picos pcie_time(const PcieCost& c) const;
  void free_host(Packet* p);  // a packet the host drops: its NIC buffer comes back
  void fault_send(Packet* p) override { send_back(p); }
  void fault_lose(Packet* p) override { free_host(p); }
  void box_release(Packet* p) override { to_core(p); }
  void to_core(Packet* p);  // its DMA completes at p->due: to its core's queue (RSS)
  void arm_reframer();      // an idle core polls in-chain Reframer at its next deadline
  struct ReframerPoll final : EventHandler {
    NfServer* s;
    Picos armed = kNever;  // the pending event's time
    explicit ReframerPoll(NfServer* server) : s(server) { set_tie(Rank::kNfPoll, 0); }
    void on_event(uint64_t) override;
  };
  struct Sink {  // park::NfBurst's sink: service time per packet, survivors to the core
    NfServer* s;
    Core* core;
    Picos service;
    uint32_t nic_viewed = 0;  // packets the chain saw whose payload the NIC keeps
    uint32_t nic_held = 0;    // ... those of them that survived the chain and `drop`
    void viewed(Packet*, bool header_only);
    void burst(Packet** pkts, const uint32_t* tag_at, const bool* notice, uint16_t n, Nanos now);
  };

  Engine& e_;
  NfServerConfig cfg_;
  std::unique_ptr<park::NfBurst<SimBuffer>> step_;
  std::unique_ptr<NicProgram> nic_;
  std::unique_ptr<FaultStage> faults_;
  std::unique_ptr<ReframeBoxStage> box_;
  ReframerPoll rf_poll_{this};
  uint16_t index_ = 0;
  uint64_t core_tie(uint16_t c) const {
    return sim::tie(Rank::kNfCore, uint32_t(index_) * 1024 + c);
  }
  std::vector<Core> cores_;
  Picos rx_free_ = 0, tx_free_ = 0, link_free_ = 0;
  trace::Rng rng_;
  PortPeer* back_ = nullptr;
  uint16_t back_link_ = 0;
  NfServerCounters ctr_;
};

}  // namespace nfpark::sim
