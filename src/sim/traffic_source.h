// TrafficSource: one traffic port's sender — it takes frames from a FrameSource and offers them
// to the switch at the port's rate pattern (or the capture's own timing), from `start` until
// `stop` (no frame starts at or after it).
//
// Timing: frame k starts at s_k; its last bit reaches the switch at a_k = s_k + wire time at line
// rate ((len + 24) * 8 / line rate); s_{k+1} = s_k + max(wire time, gap), where gap is
// (len + 24) * 8 / rate_at(s_k) for a rate pattern, or the capture's time between the two
// frames for trace timing. a_k is the packet's t_in (latency is last bit in to last bit out).
// The source runs the switch's ingress itself at a_k + ingress latency (one event per frame, no
// separate ingress delay line) and tells the observer about every packet first.
#pragma once
#include <memory>

#include "sim/frames.h"
#include "sim/rate_pattern.h"
#include "sim/switch.h"

namespace nfpark::sim {

// Sees every packet entering the switch from a traffic port, before the switch does.
class InputObserver {
 public:
  virtual void on_input(Packet* p) = 0;

 protected:
  ~InputObserver() = default;
};

class TrafficSource final : public EventHandler {
 public:
  // trace_timing: use the FrameSource's own gaps (pcap) instead of `pattern`.
  TrafficSource(Engine& e, Switch& sw, uint16_t port, std::unique_ptr<FrameSource> frames,
                const RatePattern& pattern, bool trace_timing, PacketPool& pool,
                InputObserver* obs);
  void start(Picos start, Picos stop);  // schedules the first frame
  void on_event(uint64_t) override;
  uint64_t sent() const { return sent_; }

 private:
  bool prepare(Picos start_of_frame);  // builds the next frame: false when there is none

  Engine& e_;
  Switch& sw_;
  uint16_t port_;
  double line_gbps_;
  std::unique_ptr<FrameSource> frames_;
  RatePattern pattern_;
  bool trace_timing_;
  PacketPool& pool_;
  InputObserver* obs_;
  Picos stop_ = 0;
  Picos s_ = 0;  // start of the pending frame
  Packet* pending_ = nullptr;
  uint64_t sent_ = 0;
};

}  // namespace nfpark::sim
