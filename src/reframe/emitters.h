// Output adaptors for FlowReorder. An emitter receives handles in emission order through
// `emit(h)` and pure ACKs removed by coalescing through `coalesced(h)` (the engine frees and
// counts those: in = out + coalesced).
// An emitter that also has `emit_run(h, flow, run_start)` gets that call instead of emit(h):
// `flow` is the packet's PacketMeta::flow (FlowKeyHash64 of its key, the NF flow tables' hash;
// 0 for untracked packets) and `run_start` is true when the previous emitted packet was of
// another flow (or this one has flow 0: each such packet is its own run). A batch never mixes
// flows (two flows sharing a slot tag get separate batches), so a run is one flow's packets.
//
//   VectorEmitter  appends to two vectors (tests, simulator).
//   BurstEmitter   packs emitted handles into bursts of kTxBurst and hands each full burst to
//                  `on_burst(std::span<Handle>)`; call finish() after a push/poll to hand over
//                  the partial burst. Flows stay contiguous across burst boundaries.
#pragma once
#include <array>
#include <cstddef>
#include <span>
#include <vector>

namespace nfpark::reframe {

constexpr size_t kTxBurst = 32;

template <class Handle>
struct VectorEmitter {
  std::vector<Handle> out;
  std::vector<Handle> dropped;
  void emit(Handle h) { out.push_back(h); }
  void coalesced(Handle h) { dropped.push_back(h); }
};

template <class Handle, class OnBurst, class OnCoalesced>
class BurstEmitter {
 public:
  BurstEmitter(OnBurst on_burst, OnCoalesced on_coalesced)
      : on_burst_(std::move(on_burst)), on_coalesced_(std::move(on_coalesced)) {}
  void emit(Handle h) {
    buf_[n_++] = h;
    if (n_ == kTxBurst) finish();
  }
  void coalesced(Handle h) { on_coalesced_(h); }
  void finish() {
    if (n_ == 0) return;
    on_burst_(std::span<Handle>(buf_.data(), n_));
    n_ = 0;
  }
  size_t pending() const { return n_; }

 private:
  OnBurst on_burst_;
  OnCoalesced on_coalesced_;
  std::array<Handle, kTxBurst> buf_{};
  size_t n_ = 0;
};

}  // namespace nfpark::reframe
