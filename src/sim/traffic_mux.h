// TrafficMux: one event source for all of a run's traffic ports (TrafficSource).
//
// Theory of operation
//  Each port's next frame has a due time (when it enters the switch's ingress). Instead of one
//  engine event per port, the mux keeps the ports' due times itself and holds one engine event,
//  for the earliest. When it fires it sends that port's frame and keeps going — the same port
//  while its next frame comes strictly before everything else, then the earliest port — as long
//  as that frame comes before every other pending event (Engine::run_inline); then it schedules
//  itself for the earliest again.
//  Exactly the order of one event per port: a port whose next frame is not strictly first takes
//  the tie-break number its own event would have got (Engine::take_seq), and frames due at the
//  same time as other events run in those numbers' order. So a run's output and counters are
//  those of per-port events (the determinism and dp≡sim tests hold it); only the engine's event
//  count drops.
// Cost: a scan of the ports' due times per frame (a few instructions a port) instead of a
//  calendar insert and removal (~190 instructions, docs/sim.md §9).
#pragma once
#include <memory>
#include <vector>

#include "sim/engine.h"
#include "sim/traffic_source.h"

namespace nfpark::sim {

class TrafficMux final : public EventHandler {
 public:
  explicit TrafficMux(Engine& e) : e_(e) {}
  void add(std::unique_ptr<TrafficSource> s);
  // Starts every source (first frames at `start`, none at or after `stop`): one event.
  void start(Picos start, Picos stop);
  void on_event(uint64_t port) override;
  size_t size() const { return src_.size(); }
  TrafficSource& source(size_t i) { return *src_[i]; }

 private:
  // (due, seq) as one number, so the scan for the earliest is a compare and a move a port:
  // due (>= 0) in the high half, the tie-break number (Engine::take_seq) in the low half.
  using Key = unsigned __int128;
  static constexpr Key kDone = ~Key(0);  // a source with no frame left
  static Key key(Picos due, uint64_t seq) { return Key(uint64_t(due)) << 64 | seq; }
  static Picos due_of(Key k) { return Picos(uint64_t(k >> 64)); }
  static uint64_t seq_of(Key k) { return uint64_t(k); }
  // The source with the earliest key, skipping `skip`; -1 when none is left.
  int earliest(size_t skip) const;

  Engine& e_;
  std::vector<std::unique_ptr<TrafficSource>> src_;
  std::vector<Key> key_;  // per source: its next frame's (ingress time, tie-break number)
};

}  // namespace nfpark::sim
