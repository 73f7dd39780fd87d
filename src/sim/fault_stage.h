// Element:  FaultStage — `[faults]` on the simulated NF server's way back to the switch: the
//           dataplane's fault injector (park::FaultInjector, park/fault_injector.h: drops,
//           duplicates, delays, reordering, corrupted and forged tags) on SimBuffer records.
// Ports:    apply(survivors of one chain burst) -> out (leave with the burst) ; delayed packets
//           -> Host::fault_send(p) when due ; dropped -> Host::fault_lose(p)
// Config:   park::FaultConfig ([faults], the same keys, ranges and seed as `nfpark run`'s) and
//           the mode's park::TagShape (run::nf_tag_shape, as the dataplane's NF server gets it).
// Time:     the engine's clock; one engine event, at the oldest delayed packet's due time.
// Counters: park::FaultCounters, reported as faults.{dropped, duplicated, reordered, corrupted,
//           forged, delayed}; the dropped ones are the run's `fault_injected` drops and the
//           duplicates its `duplicates` (in + duplicates = out + drops).
// Refs:     docs/sim.md §3 and §8; docs/run.md "Faults".
//
// Theory of operation
//  Every decision is park::FaultInjector's, with the dataplane's seed semantics (`[faults] seed`,
//  the same for every NF server of a process, as `nfpark run --nf-servers` has it): given the
//  same packets in the same chain bursts, the simulator drops, duplicates, corrupts, delays,
//  reorders and forges exactly what the dataplane does. Drops, duplicates, corruptions and
//  delays (with delay_share 1 or < 1) draw per packet, so they follow the packet stream alone;
//  reordering (neighbours within one burst) and forging from an earlier packet of the burst
//  also depend on which packets share a chain burst, which is the engine's timing (the
//  dataplane reads bursts of 32 at CPU speed; the model's cores take what their ring holds).
//  What the engine supplies: the duplicate's copy (SimBuffer::copy: a linear record in host
//  memory, as rte_pktmbuf_copy gives the dataplane), the clock, and a timer for the delayed
//  packets — the dataplane calls release() on every poll, this calls it when the oldest is due.
#pragma once
#include <cstdint>
#include <vector>

#include "core/counters.h"
#include "park/fault_injector.h"
#include "sim/engine.h"
#include "sim/sim_buffer.h"

namespace nfpark::sim {

class FaultStage final : private EventHandler {
 public:
  // The NF server the stage belongs to.
  class Host {
   public:
    virtual void fault_send(Packet* p) = 0;  // a delayed packet leaves now
    virtual void fault_lose(Packet* p) = 0;  // a dropped packet: free it (and its NIC buffer)

   protected:
    ~Host() = default;
  };

  FaultStage(Engine& e, const park::FaultConfig& f, park::TagShape shape, Host& host)
      : e_(e), host_(host), fi_(f, shape) {
    rel_.reserve(64);
  }
  // The survivors of one chain burst (tag offsets as the endpoint found them): what leaves with
  // the burst is appended to `out`; delayed packets leave through Host::fault_send when due.
  void apply(Packet** pkts, const uint32_t* tag_at, uint16_t n, std::vector<Packet*>& out);

  // The NF server it belongs to (its events' tie: Rank::kNfFault, `server`).
  void set_server(uint16_t server) { set_tie(Rank::kNfFault, server); }
  size_t held() const { return fi_.held(); }
  const park::FaultCounters& counters() const { return fi_.counters(); }
  void report(const CounterSink& s) const;

 private:
  void on_event(uint64_t) override;  // the oldest delayed packets are due
  void arm();

  Engine& e_;
  Host& host_;
  park::FaultInjector<SimBuffer> fi_;
  std::vector<Packet*> rel_;
  Picos armed_ = kNever;  // the pending event's time (kNever: none)
};

}  // namespace nfpark::sim
