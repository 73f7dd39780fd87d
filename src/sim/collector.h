// Collector: the traffic generator's two ends — it numbers every packet entering the switch from
// a traffic port (the sequence numbers RFC 4737 compares against), and receives what leaves on
// the traffic ports: throughput in and out, latency (last bit in to last bit out) over the run
// and per interval, and the arrival order for reordering (trace/reorder.h, whole stream and
// within flows) over the first `reorder_cap` packets.
// A frame is counted at the time its last bit arrives (arrive()'s `at`, known when the port
// dequeues it: no event per frame): the window, the per-interval buckets (by `at`) and the
// latency are exact; the whole-stream order is the order of `at` (ties in call order).
// Latencies wait in a small batch (up to 64, one interval's) before they go into the run's and
// the interval's histograms, in arrival order (the same sums): a histogram's lines are then
// touched once a batch instead of once a frame (at 1.4 Tbps they are evicted from L1 between
// two frames, docs/sim.md §9). Every read flushes it.
#pragma once
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "sim/egress_port.h"
#include "sim/latency_histogram.h"
#include "sim/traffic_source.h"
#include "trace/reorder.h"

namespace nfpark::sim {

struct FlowCounts {
  uint64_t packets = 0, bytes = 0;          // whole run
  uint64_t win_packets = 0, win_bytes = 0;  // within the measurement window
  uint64_t wire_bytes = 0;                  // window bytes + 24 B per packet
};

struct OutBucket {  // what arrived within one interval
  uint64_t packets = 0, bytes = 0;
  LatencyHistogram latency;
};

class Collector final : public InputObserver, public PortPeer {
 public:
  // `out_ports`: number of traffic ports (links 0..out_ports-1). ecmp: the output port is the
  // flow's hash over the traffic ports instead of the port it came in on. `interval`: the time
  // series' step.
  Collector(uint16_t out_ports, bool ecmp, uint64_t reorder_cap, Picos interval);
  void set_window(Picos from, Picos to) {
    from_ = from;
    to_ = to;
  }

  // Sees every packet that leaves, and when (tests compare output bytes; a pcap writer).
  using Tap = std::function<void(const Packet& p, Picos at)>;
  void set_tap(Tap t) { tap_ = std::move(t); }

  void on_input(Packet* p) override;
  void arrive(Packet* p, Picos at, uint16_t link) override;

  const FlowCounts& in() const { return in_; }
  const FlowCounts& out() const { return out_; }
  const LatencyHistogram& latency() const {
    flush();
    return latency_;
  }
  // What arrived in interval `index` ([index, index + 1) * interval), complete once the engine's
  // time has reached its end (a frame is reported no later than its arrival). Then dropped.
  OutBucket take_bucket(uint64_t index);
  trace::ReorderStats reorder() const;

 private:
  bool in_window(Picos t) const { return t >= from_ && t < to_; }
  OutBucket& bucket(Picos at) {
    if (at >= cur_from_ && at < cur_to_) return *cur_;  // (most frames: no division)
    return find_bucket(at);
  }
  OutBucket& find_bucket(Picos at);
  void note_latency(Picos v, OutBucket& b) {
    if (&b != pend_bucket_) {
      flush();
      pend_bucket_ = &b;
    }
    pend_[npend_++] = v;
    if (npend_ == kBatch) flush();
  }
  void flush() const;

  uint16_t ports_;
  bool ecmp_;
  uint64_t cap_;
  Picos interval_;
  std::deque<OutBucket> buckets_;  // open intervals, from first_bucket_ on
  uint64_t first_bucket_ = 0;
  // the bucket the last frame went to and its interval (a deque keeps its elements in place
  // as it grows; take_bucket forgets it)
  OutBucket* cur_ = nullptr;
  Picos cur_from_ = 0, cur_to_ = 0;
  uint64_t next_seq_ = 0;
  Picos from_ = 0, to_ = kNever;
  FlowCounts in_, out_;
  mutable LatencyHistogram latency_;
  static constexpr uint32_t kBatch = 64;
  mutable uint32_t npend_ = 0;  // latencies waiting, all of pend_bucket_'s interval
  mutable OutBucket* pend_bucket_ = nullptr;
  mutable Picos pend_[kBatch];
  std::vector<uint64_t> sent_flows_, received_;
  std::vector<Picos> received_at_;
  Tap tap_;
};

}  // namespace nfpark::sim
