#include "sim/traffic_source.h"

#include <algorithm>

namespace nfpark::sim {

TrafficSource::TrafficSource(Switch& sw, uint16_t port, std::unique_ptr<FrameSource> frames,
                             const RatePattern& pattern, bool trace_timing, PacketPool& pool,
                             InputObserver* obs)
    : sw_(sw),
      port_(port),
      line_gbps_(sw.port(port).gbps()),
      frames_(std::move(frames)),
      pattern_(pattern),
      trace_timing_(trace_timing),
      pool_(pool),
      obs_(obs) {}

bool TrafficSource::start(Picos start, Picos stop) {
  stop_ = stop;
  return prepare(start);
}

bool TrafficSource::prepare(Picos s) {
  if (s >= stop_) return false;
  Packet* p = pool_.alloc();
  Picos gap = -1;
  if (!p) return false;
  if (!frames_->next(p, gap)) {
    pool_.free(p);
    return false;
  }
  if (trace_timing_ && gap >= 0 && sent_ > 0)  // the capture's pace (a gap may be kNever)
    s = gap >= stop_ - s_ ? stop_ : std::max(s, s_ + gap);
  if (s >= stop_) {
    pool_.free(p);
    return false;
  }
  s_ = s;
  wire_ = serialization(p->len + kWireOverhead, line_gbps_);
  p->t_in = s + wire_;
  p->in_port = p->out_port = port_;
  p->queue = 0;
  pending_ = p;
  due_ = p->t_in + sw_.config().ingress_latency;
  sw_.prefetch_ingress(port_, p);  // what its ingress pass will read, a frame ahead
  return true;
}

bool TrafficSource::emit() {
  Packet* p = pending_;
  pending_ = nullptr;
  ++sent_;
  Picos next = s_ + wire_;  // back to back at line rate at the earliest
  if (!trace_timing_) {
    const double gbps = std::min(pattern_.rate_at(s_, port_), line_gbps_);
    next = std::max(next, s_ + serialization(p->len + kWireOverhead, gbps));
  }
  if (obs_) obs_->on_input(p);
  PortCounters& pc = sw_.port(port_).counters();
  ++pc.rx_packets;
  pc.rx_bytes += p->len;
  sw_.ingress(p, port_);
  return prepare(next);
}

}  // namespace nfpark::sim
