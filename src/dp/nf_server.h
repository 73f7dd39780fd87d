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

namespace nfpark::dp {

class NfServer {
 public:
  NfServer(std::unique_ptr<nf::Chain> chain, std::optional<park::TagFormat> format, bool notify,
           const Faults& faults, rte_mempool* dup_pool);
  // One poll: up to one burst from `port` through the chain and back. Returns packets read.
  uint16_t poll(Port& port, Nanos now);
  // Sends every delayed packet now (end of run).
  void flush(Port& port, Nanos now);
  size_t held() const { return faults_ ? faults_->held() : 0; }

  uint64_t rx = 0, nf_drops = 0;
  const nf::Chain& chain() const { return *chain_; }
  const park::NfEndpointCounters& endpoint() const { return ep_.counters(); }
  const FaultCounters* faults() const { return faults_ ? &faults_->counters() : nullptr; }

 private:
  std::unique_ptr<nf::Chain> chain_;
  park::NfEndpoint<MbufOps> ep_;
  std::unique_ptr<FaultInjector> faults_;
  std::vector<rte_mbuf*> out_;
};

}  // namespace nfpark::dp
