// Chain::process: the NFs in order over one burst, run-aware or packet by packet (nf.h).
#include "nf/nf.h"
#include "nf/run_burst.h"

namespace nfpark::nf {

Chain::Chain() : runs_(std::make_unique<FlowRuns>()) {}
Chain::~Chain() = default;

// True when an NF of the segment that starts at nfs_[k] (up to and including the next NF that
// rewrites flow keys) finds runs for itself: the chain then finds them at the segment's start,
// so that the NFs before that one (a router) use them too and every NF's lines are prefetched.
bool Chain::segment_finds_runs(size_t k) const {
  for (; k < nfs_.size(); ++k) {
    if (nfs_[k]->run_aware() && nfs_[k]->finds_runs()) return true;
    if (nfs_[k]->rewrites_flow_key()) return false;
  }
  return false;
}

// Stage 1 of every run-aware NF of the segment that starts at nfs_[k], issued at once.
void Chain::prefetch_segment(size_t k) const {
  for (; k < nfs_.size(); ++k) {
    if (nfs_[k]->run_aware()) nfs_[k]->prefetch_runs(*runs_);
    if (nfs_[k]->rewrites_flow_key()) return;
  }
}

ViewNeed Chain::reads() const {
  ViewNeed need = ViewNeed::kLengths;
  for (size_t k = 0; k < nfs_.size(); ++k) {
    const ViewNeed r = nfs_[k]->reads();
    if (r > need) need = r;
    if (run_aware_ && nfs_[k]->run_aware()) need = ViewNeed::kHeaders;  // runs read the parse
  }
  return need;
}

void Chain::process(std::span<PacketView> pkts, std::span<Verdict> verdicts, Nanos now,
                    const RunHints* hints) {
  if (!run_aware_ || pkts.size() > kBurst) {
    for (auto& nf : nfs_) nf->process(pkts, verdicts, now);
    return;
  }
  bool fresh = false;  // runs_ describes the packets as the next NF sees them
  for (size_t k = 0; k < nfs_.size(); ++k) {
    Nf& nf = *nfs_[k];
    if (!fresh && segment_finds_runs(k)) {
      runs_->build(pkts, verdicts, hints);
      fresh = true;
      prefetch_segment(k);
    }
    if (fresh && nf.run_aware())
      nf.process_runs(pkts, verdicts, *runs_, now);
    else
      nf.process(pkts, verdicts, now);
    if (nf.rewrites_flow_key()) {  // remapped only for a segment that would find them again
      hints = nullptr;             // the ids were of the keys before this NF
      fresh = fresh && nf.run_aware() && segment_finds_runs(k + 1) &&
              nf.remap_runs(pkts, verdicts, *runs_);
      if (fresh) prefetch_segment(k + 1);
    }
  }
}

}  // namespace nfpark::nf
