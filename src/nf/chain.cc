// Chain::process: the NFs in order over one burst, run-aware or packet by packet (nf.h).
#include "nf/nf.h"
#include "nf/run_burst.h"

namespace nfpark::nf {

Chain::Chain() : runs_(std::make_unique<FlowRuns>()) {}
Chain::~Chain() = default;

void Chain::process(std::span<PacketView> pkts, std::span<Verdict> verdicts, Nanos now) {
  if (!run_aware_ || pkts.size() > kBurst) {
    for (auto& nf : nfs_) nf->process(pkts, verdicts, now);
    return;
  }
  bool fresh = false;  // runs_ describes the packets as the next NF sees them
  for (auto& nf : nfs_) {
    if (nf->run_aware() && (fresh || nf->finds_runs())) {
      if (!fresh) runs_->build(pkts, verdicts);
      fresh = true;
      nf->process_runs(pkts, verdicts, *runs_, now);
    } else {
      nf->process(pkts, verdicts, now);
    }
    if (nf->rewrites_flow_key()) fresh = false;
  }
}

}  // namespace nfpark::nf
