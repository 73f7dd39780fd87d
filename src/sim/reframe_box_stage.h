// Element:  ReframeBoxStage — `[reframe] placement = "box"` in the NF server model: Reframer on a
//           core of its own between the NF link and the chain's cores, running
//           park::ReframeStage (classify, hold per flow, release), the stage the dataplane's box
//           lcore runs (dp/reframe_box.*) and the in-chain placement runs inside park::NfBurst.
// Ports:    arrive(p: its DMA to host memory completes at p->due) -> Host::box_release(p) for
//           each packet Reframer releases, in order (to the core RSS picks, at once)
// Config:   the park::ReframeStage run::build_reframe_stage made from [reframe] and
//           [nf_server] reframe_us (T_buff), as `nfpark run --reframe-placement box` does.
// Time:     the engine's clock; one engine event, at the earlier of the next DMA completion and
//           Reframer's next deadline (FlowReorder::next_deadline: the oldest batch's T_buff).
// Cost:     none in the model: the box is a core of its own (the dataplane's box lcore), and
//           Reframer's ~30-40 ns a packet (docs/reframer.md §7) is below any NF core's service
//           time in the scenarios, so it never is the bottleneck; what the model shows is the
//           chain's cores seeing flows in batches (their service per packet is the scenario's).
// Counters: Reframer's (reframe.*, FlowReorder::counters), coalesced ACKs (freed).
//
// The box reads bursts of up to 32 as they complete, as the box lcore reads its port: packets
// whose DMA completes at the same instant share a burst.
#pragma once
#include <memory>
#include <vector>

#include "park/reframe_stage.h"
#include "sim/engine.h"
#include "sim/sim_buffer.h"

namespace nfpark::sim {

class ReframeBoxStage final : private EventHandler {
 public:
  class Host {  // the NF server
   public:
    virtual void box_release(Packet* p) = 0;  // Reframer released p now: to its core

   protected:
    ~Host() = default;
  };

  ReframeBoxStage(Engine& e, std::unique_ptr<park::ReframeStage<SimBuffer>> stage, Host& host);
  // A packet whose DMA completes at p->due (non-decreasing over calls).
  void arrive(Packet* p);

  // The NF server it belongs to (its events' tie: Rank::kNfBox, `server`).
  void set_server(uint16_t server) { set_tie(Rank::kNfBox, server); }
  size_t held() const { return stage_->held() + waiting_.count; }
  const park::ReframeStage<SimBuffer>& stage() const { return *stage_; }

 private:
  void on_event(uint64_t) override;
  void arm();

  Engine& e_;
  std::unique_ptr<park::ReframeStage<SimBuffer>> stage_;
  Host& host_;
  PacketFifo waiting_;  // DMA in flight or done, not yet read by the box (in order of due)
  std::vector<Packet*> out_;
  Picos armed_ = kNever;  // the pending event's time (kNever: none)
};

}  // namespace nfpark::sim
