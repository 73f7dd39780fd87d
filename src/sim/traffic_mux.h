// TrafficMux: one event source for all of a run's traffic ports (TrafficSource).
//
// Theory of operation
//  Each port's next frame has a due time (when it enters the switch's ingress). Instead of one
//  engine event per port, the mux keeps the ports' due times itself and holds one engine event,
//  for the earliest. When it fires it sends that port's frame, and then the earliest frame of
//  all ports (the same port or another) as long as it comes before every other pending event
//  (Engine::run_inline); then it schedules itself for the earliest again.
//  Exactly the order of one event per port: a port's frame is an ingress pass, at tie
//  (Rank::kIngress, port) (sim/tie.h), and frames run in (due, tie) order, among themselves and
//  with every other event. So a run's output and counters are those of per-port events (the
//  determinism and dp≡sim tests hold it); only the engine's event count drops.
//  The earliest port is the root of a winner tree over the ports' (due, tie) keys: sending a
//  frame updates one leaf and its log2(ports) ancestors.
// Cost: ~4 compares a frame for 14 ports (a scan of the 14 keys per frame was ~230
//  instructions a packet, docs/sim.md §9) instead of a calendar insert and removal (~160).
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
  // (due, tie) as one number, so a comparison is one 128-bit compare: due (>= 0) in the high
  // half, the port's tie key (sim/tie.h) in the low half.
  using Key = unsigned __int128;
  static constexpr Key kDone = ~Key(0);  // a source with no frame left
  Key key(size_t i) const {
    return Key(uint64_t(src_[i]->due())) << 64 | sim::tie(Rank::kIngress, src_[i]->port());
  }
  static Picos due_of(Key k) { return Picos(uint64_t(k >> 64)); }
  static uint64_t tie_of(Key k) { return uint64_t(k); }
  // Recomputes the winners on the path from source i's leaf to the root.
  void update(size_t i) {
    for (size_t n = (leaves_ + i) >> 1; n; n >>= 1) {
      const uint32_t l = win_[2 * n], r = win_[2 * n + 1];
      win_[n] = key_[r] < key_[l] ? r : l;
    }
  }

  Engine& e_;
  std::vector<std::unique_ptr<TrafficSource>> src_;
  std::vector<Key> key_;       // per source (padded to `leaves_`): its next frame's (due, number)
  size_t leaves_ = 1;          // a power of two >= the number of sources
  std::vector<uint32_t> win_;  // winner tree: win_[1] the earliest; leaves at leaves_ + i
};

}  // namespace nfpark::sim
