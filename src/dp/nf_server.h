// NfServer: the NF server role. Reads packets from its port (header packets with a parking tag,
// or whole packets), runs the NF chain over a burst, and sends survivors back to the switch with
// their tag intact. An NF drop becomes an explicit-drop notification (PayloadPark's OP bit) when
// the packet is tagged and notification is on; otherwise the packet is freed here.
// Optional fault injection (fault_injector.h) acts on what goes back.
// The burst step itself (view, chain, drop notice, Reframer, trace time) is park::NfBurst
// (park/nf_burst.h), shared with the simulator; this class only adapts the port and mbufs.
#pragma once
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/counters.h"
#include "dp/fault_injector.h"
#include "dp/mbuf_ops.h"
#include "dp/port.h"
#include "dp/reframe_box.h"
#include "nf/nf.h"
#include "park/nf_burst.h"

namespace nfpark::dp {

class NfServer {
 public:
  // `step`: the burst step as run::build_nf_step assembled it from the run config (chain, tag
  // format, notification, Reframer, trace time: run/nf_assembly.h); `faults` are injected on the
  // way back (`shape`: where the mode's tags are, run::nf_tag_shape), duplicates copied into
  // `dup_pool`.
  NfServer(std::unique_ptr<park::NfBurst<MbufOps>> step, const park::FaultConfig& faults,
           park::TagShape shape, rte_mempool* dup_pool);
  // Reframer runs in a box (dp/reframe_box.h): the server reads what `lane` released instead of
  // reading `port` (the box reads it), and reports the box's Reframer as its own.
  void from_box(BoxLane* lane) { box_ = lane; }
  // One poll: up to one burst from `port` (or the box) through the chain and back to `port`.
  // Returns packets read.
  uint16_t poll(Port& port, Nanos now);
  // Sends every delayed packet now (end of run).
  void flush(Port& port, Nanos now);

  // The direct hand-off (dp/switch_loop.h, "NF link"): the switch calls the server instead of
  // going through its NF link's rings. Valid when the server never holds a packet for a later
  // poll and sends back only what it got: no fault injection, no Reframer (in-chain or box).
  bool direct_ok() const { return !faults_ && !box_ && step_->reframer() == nullptr; }
  // Runs `n` (<= kBurst) packets handed over at `now` through the chain, as poll() would had it
  // read them from its port; returns the survivors and drop notices, in order (valid until the
  // next call; when they are the first of pkts[0, n), in place, they are not copied). The caller
  // counts what crossed (the link's port counters). `wire_bytes`: the packets' wire bytes when the
  // caller knows them (park::NfBurst::run).
  std::span<rte_mbuf* const> hand(rte_mbuf** pkts, uint16_t n, Nanos now,
                                  const uint64_t* wire_bytes = nullptr);
  // hand() returned exactly the packets it was given, in order and as long as they came
  // (park::NfBurst::passed_whole()): the caller's counts of them hold for what came back.
  bool handed_whole() const { return step_->passed_whole(); }
  // What an empty poll does with the clock: the mode's timers run on it (SwitchMode::poll).
  void tick(Nanos now) {
    step_->clock(static_cast<rte_mbuf* const*>(nullptr), 0, now,
                 [](rte_mbuf* m) { return MbufMeta::ts(m); });
  }
  // The clock the server's last poll ran on (trace time when replaying): Reframer's and the
  // fault delays'. INT64_MIN before it has one.
  Nanos clock() const { return step_->clock(); }
  // Packets held for later here (fault delays, Reframer in-chain); the box's are its own.
  size_t held() const { return (faults_ ? faults_->held() : 0) + step_->held(); }

  // Packets the server took in (with a box: what the box released, and the ACKs it coalesced).
  uint64_t rx() const { return step_->rx + (box_ ? box_->stage->coalesced : 0); }
  uint64_t nf_drops() const { return step_->nf_drops; }
  // pure ACKs removed by Reframer's ACK coalescing (freed, counted)
  uint64_t coalesced() const { return step_->coalesced() + (box_ ? box_->stage->coalesced : 0); }
  const nf::Chain& chain() const { return step_->chain(); }
  const park::NfEndpointCounters& endpoint() const { return step_->endpoint(); }
  const FaultCounters* faults() const { return faults_ ? &faults_->counters() : nullptr; }
  const auto* reframer() const { return box_ ? &box_->stage->reframer() : step_->reframer(); }

  // park::NfBurst's sink: survivors go to the fault injector (if any) and out_.
  void viewed(rte_mbuf*, bool) {}
  void burst(rte_mbuf** pkts, const uint32_t* tag_at, const bool*, uint16_t n, Nanos now) {
    if (faults_) {
      faults_->apply(pkts, tag_at, n, now, out_);
      return;
    }
    if (handed_ && pkts == handed_ + handed_kept_) {  // hand(): they are where they came in
      handed_kept_ += n;
      return;
    }
    if (handed_) {  // not in place after all: what was kept in place goes first
      out_.assign(handed_, handed_ + handed_kept_);
      handed_ = nullptr;
    }
    out_.insert(out_.end(), pkts, pkts + n);
  }

 private:
  std::unique_ptr<park::NfBurst<MbufOps>> step_;
  std::unique_ptr<FaultInjector> faults_;
  std::vector<rte_mbuf*> out_;
  // hand(): the burst handed over, whose first handed_kept_ packets are the output so far
  // (nullptr: not handing, or the output is out_)
  rte_mbuf** handed_ = nullptr;
  uint16_t handed_kept_ = 0;
  BoxLane* box_ = nullptr;
};

}  // namespace nfpark::dp
