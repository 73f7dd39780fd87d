// Element:  ReframeStage — Reframer as a step of an engine: classify() each packet, FlowReorder
//           push + poll, the released packets appended in order. Written once for both
//           placements: in-chain (park/nf_burst.h runs it in front of the chain, on the NF
//           server's lcore) and the box (src/dp/reframe_box.h runs it on an lcore of its own and
//           only moves the released mbufs to the NF server's lcore).
// Ports:    run(burst, now) / flush(now) -> `out` (released handles, flows kept together)
// Config:   reframe::ReorderConfig (t_buff, max_burst, caps, priority, ACK coalescing,
//           self-bypass, prefetch) and reframe::BypassRules (SYN, DSCP, header match).
// Time:     `now` passed in (the engine's TraceClock: park/trace_clock.h).
// Counters: coalesced (pure ACKs removed by ACK coalescing: freed here) + FlowReorder's own
//           (reframer()->counters(): docs/reframer.md §4).
// Paper:    Reframer (NSDI '22): in front of the chain and as a box of its own.
//
// Nothing here allocates per packet: `out` is the caller's, reserved once (reserve_hint()).
#pragma once
#include <array>
#include <memory>
#include <vector>

#include "core/parse.h"
#include "core/time.h"
#include "nf/nf.h"
#include "park/buffer_ops.h"
#include "reframe/classify.h"
#include "reframe/flow_reorder.h"

namespace nfpark::park {

template <BufferOps B>
class ReframeStage {
 public:
  using Handle = typename B::Handle;
  static constexpr uint16_t kMax = uint16_t(nf::kBurst);

  ReframeStage(const reframe::ReorderConfig& cfg, const reframe::BypassRules& rules)
      : bypass_(rules), reorder_(cfg) {
    reorder_.prefault();  // set-up, not the first packets, pays the flow table's page faults
  }
  // What `out` may have to hold at once: everything held plus a few bursts.
  size_t reserve_hint() const { return size_t(reorder_.config().max_held_packets) + 4 * kMax; }

  // Pushes up to kMax packets read at `now`, then releases what is due at `now` into `out`.
  void run(const Handle* pkts, uint16_t n, Nanos now, std::vector<Handle>& out) {
    Collect c{this, &out};
    if (n && reorder_.passing()) {  // self-bypassed (reframe/self_bypass.h): no classify()
      reorder_.pass({pkts, n}, c);
    } else if (n) {
      std::array<reframe::PacketMeta, kMax> meta;
      for (uint16_t i = 0; i < n; ++i) {
        PacketLayout L;
        parse_handle<B>(pkts[i], L);
        meta[i] = reframe::classify(B::data(pkts[i]), L, bypass_);
        carry_layout<B>(pkts[i], L);  // unchanged bytes: the NF endpoint need not parse again
      }
      reorder_.push({pkts, n}, {meta.data(), n}, now, c);
    }
    reorder_.poll(now, c);
  }
  // End of a run (or a stall): everything held is released into `out`.
  void flush(Nanos now, std::vector<Handle>& out) {
    Collect c{this, &out};
    reorder_.flush_all(now, c);
  }

  size_t held() const { return reorder_.held_packets(); }
  const reframe::FlowReorder<Handle>& reframer() const { return reorder_; }
  uint64_t coalesced = 0;

 private:
  struct Collect {  // FlowReorder's emitter
    ReframeStage* s;
    std::vector<Handle>* out;
    void emit(Handle h) { out->push_back(h); }
    void coalesced(Handle h) {
      ++s->coalesced;
      B::free(h);
    }
  };

  reframe::BypassRules bypass_;
  reframe::FlowReorder<Handle> reorder_;
};

}  // namespace nfpark::park
