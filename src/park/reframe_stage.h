// Element:  ReframeStage — Reframer as a step of an engine: classify() each packet, FlowReorder
//           push + poll, the released packets appended in order. Written once for both
//           placements: in-chain (park/nf_burst.h runs it in front of the chain, on the NF
//           server's lcore) and the box (src/dp/reframe_box.h runs it on an lcore of its own and
//           only moves the released mbufs to the NF server's lcore).
// Ports:    run(burst, now) / flush(now) -> `out` (released packets, flows kept together): a
//           vector of handles (the box), or of Released (in-chain: each handle with the parse
//           classify() made of it and its flow id, so the chain behind neither parses it again
//           nor compares keys where a run starts: park/nf_burst.h, nf::RunHints).
// Config:   reframe::ReorderConfig (t_buff, max_burst, caps, priority, ACK coalescing,
//           self-bypass, prefetch) and reframe::BypassRules (SYN, DSCP, header match).
// Time:     `now` passed in (the engine's TraceClock: park/trace_clock.h).
// Counters: coalesced (pure ACKs removed by ACK coalescing: freed here) + FlowReorder's own
//           (reframer()->counters(): docs/reframer.md §4).
// Paper:    Reframer (NSDI '22): in front of the chain and as a box of its own. FastClick's
//           flow subsystem classifies a packet once for every element behind it; here one parse
//           serves classify() and the NF view (in-chain; the box's packets cross lcores as bare
//           mbufs, and the NF server parses them there, as a Reframer box's next hop would).
//
// Held packets are (handle, CarriedLayout) pairs in FlowReorder's node pool: the parse of a
// held packet (16 B, core/carried_layout.h) waits with it, no side table, no lookup. A packet
// whose parse cannot be carried (not an unfragmented TCP/UDP packet) is parsed again behind.
// Nothing here allocates per packet: `out` is the caller's, reserved once (reserve_hint()).
#pragma once
#include <array>
#include <memory>
#include <vector>

#include "core/carried_layout.h"
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

  // What FlowReorder holds per packet: the handle and classify()'s parse of it.
  struct Held {
    Handle h;
    CarriedLayout layout;  // ip_version 0: none carried (self-bypassed, or not carriable)
  };
  // A packet released in-chain: the handle, its parse and its flow id (reframe::PacketMeta::
  // flow, FlowKeyHash64 of its key; 0: untracked or passed through): where the id changes, a
  // run of one flow starts (nf::RunHints).
  struct Released {
    Handle h;
    CarriedLayout layout;
    uint64_t flow = 0;
  };
  using Reorder = reframe::FlowReorder<Held>;

  ReframeStage(const reframe::ReorderConfig& cfg, const reframe::BypassRules& rules)
      : bypass_(rules), reorder_(cfg) {
    reorder_.prefault();  // set-up, not the first packets, pays the flow table's page faults
  }
  // What `out` may have to hold at once: everything held plus a few bursts.
  size_t reserve_hint() const { return size_t(reorder_.config().max_held_packets) + 4 * kMax; }

  // Pushes up to kMax packets read at `now`, then releases what is due at `now` into `out`
  // (std::vector<Handle> or std::vector<Released>).
  template <class Out>
  void run(const Handle* pkts, uint16_t n, Nanos now, std::vector<Out>& out) {
    Collect<Out> c{this, &out};
    auto& held = held_;  // members: local arrays would be zeroed (32 entries) every call
    auto& meta = meta_;
    PacketLayout& L = layout_;      // parse_packet writes all of it: no initialisation per packet
    if (n && reorder_.passing()) {  // self-bypassed (reframe/self_bypass.h): no classify()
      for (uint16_t i = 0; i < n; ++i) held[i] = Held{pkts[i], {}};
      reorder_.pass({held.data(), n}, c);
    } else if (n) {
      for (uint16_t i = 0; i < n; ++i) {
        parse_handle<B>(pkts[i], L);
        bool fast;
        meta[i] = reframe::classify(B::data(pkts[i]), L, bypass_, fast);
        held[i].h = pkts[i];
        if constexpr (kHandles<Out>) {  // the box: its releases are bare handles (the layout
          carry_layout<B>(pkts[i], L);  // held is never read): carried by the handle, if it can
        } else if (fast ? !held[i].layout.keep_ports(L) : !held[i].layout.keep(L)) [[unlikely]] {
          held[i].layout = CarriedLayout{};  // in-chain: carried to the view, when it can be
        }
      }
      reorder_.push({held.data(), n}, {meta.data(), n}, now, c);
    }
    reorder_.poll(now, c);
  }
  // End of a run (or a stall): everything held is released into `out`.
  template <class Out>
  void flush(Nanos now, std::vector<Out>& out) {
    Collect<Out> c{this, &out};
    reorder_.flush_all(now, c);
  }

  size_t held() const { return reorder_.held_packets(); }
  const Reorder& reframer() const { return reorder_; }
  // Starts a fresh self-bypass probe (FlowReorder::probe_now), e.g. after a warm-up.
  void probe_now() { reorder_.probe_now(); }
  uint64_t coalesced = 0;

 private:
  template <class Out>
  static constexpr bool kHandles = std::is_same_v<Out, Handle>;

  template <class Out>
  struct Collect {  // FlowReorder's emitter
    ReframeStage* s;
    std::vector<Out>* out;
    void emit(const Held& h) {  // passed through (self-bypass): its own run, no flow id
      if constexpr (kHandles<Out>)
        out->push_back(h.h);
      else
        out->push_back(Released{h.h, h.layout, 0});
    }
    void emit_run(const Held& h, uint64_t flow, bool) {
      if constexpr (kHandles<Out>)
        out->push_back(h.h);
      else {  // an lvalue: push_back(const T&) is inlined; the rvalue overload calls
        // emplace_back, which GCC kept out of line here (~23 instructions a packet)
        const Released r{h.h, h.layout, flow};
        out->push_back(r);
      }
    }
    void coalesced(const Held& h) {
      ++s->coalesced;
      B::free(h.h);
    }
  };

  reframe::BypassRules bypass_;
  Reorder reorder_;
  std::array<Held, kMax> held_;                 // run()'s burst (see there)
  std::array<reframe::PacketMeta, kMax> meta_;  // its classify() results
  PacketLayout layout_;                         // run()'s parse of one packet
};

}  // namespace nfpark::park
