// Sharded<Handle>: flows partitioned by flow id over N private FlowReorder instances.
//
// Reframer keeps no shared state: on a multi-lcore engine each lcore owns one FlowReorder and
// receives only its flows (RSS on the NIC, or shard_of() in software), so there are no locks and
// per-flow order holds because a flow never spans two instances. The engine calls
// `at(lcore)` from that lcore only. `push()` here routes a mixed burst on one thread — for
// tests, the simulator and software fan-out; it is not thread-safe.
#pragma once
#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "reframe/flow_reorder.h"

namespace nfpark::reframe {

// Uses the top bits of the id (FlowSlots picks sets by its two halves xor-ed, so the shards'
// sets stay evenly used). Flow 0 goes to shard 0.
inline size_t shard_of(uint64_t flow, size_t shards) {
  return size_t(((flow >> 32) * uint64_t(shards)) >> 32);
}

template <class Handle>
class Sharded {
 public:
  Sharded(size_t shards, const ReorderConfig& cfg) {
    for (size_t i = 0; i < shards; ++i)
      shards_.push_back(std::make_unique<FlowReorder<Handle>>(cfg));
  }
  size_t size() const { return shards_.size(); }
  FlowReorder<Handle>& at(size_t i) { return *shards_[i]; }

  template <class Out>
  void push(std::span<const Handle> pkts, std::span<const PacketMeta> meta, Nanos now, Out& out) {
    for (size_t s = 0; s < shards_.size(); ++s) {
      size_t n = 0;
      for (size_t i = 0; i < pkts.size(); ++i) {
        if (shard_of(meta[i].flow, shards_.size()) != s) continue;
        h_[n] = pkts[i];
        m_[n++] = meta[i];
        if (n == h_.size()) {
          shards_[s]->push(std::span<const Handle>(h_.data(), n), {m_.data(), n}, now, out);
          n = 0;
        }
      }
      if (n) shards_[s]->push(std::span<const Handle>(h_.data(), n), {m_.data(), n}, now, out);
    }
  }
  template <class Out>
  void poll(Nanos now, Out& out) {
    for (auto& s : shards_) s->poll(now, out);
  }
  template <class Out>
  void flush_all(Nanos now, Out& out) {
    for (auto& s : shards_) s->flush_all(now, out);
  }
  // Sum of every shard's counters.
  void counters(const CounterSink& sink) const {
    ReorderStats total;
    uint64_t held = 0, held_flows = 0;
    for (const auto& s : shards_) {
      total += s->stats();
      held += s->held_packets();
      held_flows += s->held_flows();
    }
    total.counters(sink);
    sink("held_now", held);
    sink("held_flows_now", held_flows);
  }

 private:
  std::vector<std::unique_ptr<FlowReorder<Handle>>> shards_;
  std::array<Handle, 64> h_{};
  std::array<PacketMeta, 64> m_{};
};

}  // namespace nfpark::reframe
