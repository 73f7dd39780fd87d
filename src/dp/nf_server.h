// NfServer: the NF server role. Reads packets from its port (header packets with a parking tag,
// or whole packets), runs the NF chain over a burst, and sends survivors back to the switch with
// their tag intact. An NF drop becomes an explicit-drop notification (PayloadPark's OP bit) when
// the packet is tagged and notification is on; otherwise the packet is freed here.
// Optional fault injection (fault_injector.h) acts on what goes back.
#pragma once
#include <memory>
#include <optional>
#include <vector>

#include "core/counters.h"
#include "dp/fault_injector.h"
#include "dp/mbuf_ops.h"
#include "dp/port.h"
#include "nf/nf.h"
#include "park/nf_endpoint.h"
#include "reframe/classify.h"
#include "reframe/flow_reorder.h"

namespace nfpark::dp {

class NfServer {
 public:
  // `slicer`: packets come from an NFSlicer shim (token instead of a parking tag).
  NfServer(std::unique_ptr<nf::Chain> chain, std::optional<park::TagFormat> format, bool notify,
           const Faults& faults, rte_mempool* dup_pool, bool slicer = false);
  // Puts Reframer in front of the chain (reframe/flow_reorder.h): packets are held per flow for
  // up to t_buff and reach the chain flow by flow.
  void set_reframer(const reframe::ReorderConfig& cfg, const reframe::BypassRules& rules = {});
  // Replaying a trace: the chain's `now` is the trace time of the newest packet seen (carried in
  // each mbuf), not the wall clock, so results do not depend on the replay speed.
  void use_trace_time(bool on) { trace_time_ = on; }
  // One poll: up to one burst from `port` through the chain and back. Returns packets read.
  uint16_t poll(Port& port, Nanos now);
  // Sends every delayed packet now (end of run).
  void flush(Port& port, Nanos now);
  // The clock the server's last poll ran on (trace time when replaying): Reframer's and the
  // fault delays'. INT64_MIN before it has one.
  Nanos clock() const { return clock_; }
  size_t held() const {
    return (faults_ ? faults_->held() : 0) + (reorder_ ? reorder_->held_packets() : 0);
  }

  uint64_t rx = 0, nf_drops = 0;
  const nf::Chain& chain() const { return *chain_; }
  const park::NfEndpointCounters& endpoint() const { return ep_.counters(); }
  const FaultCounters* faults() const { return faults_ ? &faults_->counters() : nullptr; }
  const reframe::FlowReorder<rte_mbuf*>* reframer() const { return reorder_.get(); }
  uint64_t coalesced = 0;  // pure ACKs removed by Reframer's ACK coalescing (freed, counted)

 private:
  std::unique_ptr<nf::Chain> chain_;
  park::NfEndpoint<MbufOps> ep_;
  std::unique_ptr<FaultInjector> faults_;
  struct Collect {  // Reframer's emitter: gathers released packets in order
    NfServer* s;
    void emit(rte_mbuf* m) { s->ready_.push_back(m); }
    void coalesced(rte_mbuf* m) {
      ++s->coalesced;
      rte_pktmbuf_free(m);
    }
  };
  void process_burst(rte_mbuf** pkts, uint16_t n, Nanos now);
  void run_ready(Nanos now);

  std::vector<rte_mbuf*> out_, ready_;
  std::unique_ptr<reframe::FlowReorder<rte_mbuf*>> reorder_;
  bool trace_time_ = false;
  Nanos trace_now_ = INT64_MIN;
  Nanos clock_ = INT64_MIN;
  reframe::BypassRules bypass_;
};

}  // namespace nfpark::dp
