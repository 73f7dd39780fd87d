// TrafficSource: one traffic port's sender — it takes frames from a FrameSource and offers them
// to the switch at the port's rate pattern (or the capture's own timing), from `start` until
// `stop` (no frame starts at or after it).
//
// Timing: frame k starts at s_k; its last bit reaches the switch at a_k = s_k + wire time at line
// rate ((len + 24) * 8 / line rate); s_{k+1} = s_k + max(wire time, gap), where gap is
// (len + 24) * 8 / rate_at(s_k) for a rate pattern, or the capture's time between the two
// frames for trace timing. a_k is the packet's t_in (latency is last bit in to last bit out).
// The source runs the switch's ingress itself at a_k + ingress latency (no separate ingress delay
// line) and tells the observer about every packet first. It has no event of its own: TrafficMux
// (traffic_mux.h) runs all of a run's sources from one event.
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

class TrafficSource {
 public:
  // trace_timing: use the FrameSource's own gaps (pcap) instead of `pattern`.
  TrafficSource(Switch& sw, uint16_t port, std::unique_ptr<FrameSource> frames,
                const RatePattern& pattern, bool trace_timing, PacketPool& pool,
                InputObserver* obs);
  // Prepares the first frame (the first starts at `start`); false when there is none.
  bool start(Picos start, Picos stop);
  // When the pending frame enters the switch's ingress (its last bit + the ingress latency).
  Picos due() const { return due_; }
  // Sends the pending frame into the switch now and prepares the next: false when there is none.
  bool emit();
  uint64_t sent() const { return sent_; }
  uint16_t port() const { return port_; }

 private:
  bool prepare(Picos start_of_frame);  // builds the next frame: false when there is none

  Switch& sw_;
  uint16_t port_;
  double line_gbps_;
  std::unique_ptr<FrameSource> frames_;
  RatePattern pattern_;
  bool trace_timing_;
  PacketPool& pool_;
  InputObserver* obs_;
  Picos stop_ = 0;
  Picos s_ = 0;     // start of the pending frame
  Picos due_ = 0;   // its ingress time
  Picos wire_ = 0;  // its time on the wire at line rate
  Packet* pending_ = nullptr;
  uint64_t sent_ = 0;
};

}  // namespace nfpark::sim
