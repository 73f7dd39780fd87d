// SelfBypass: Reframer's own measure of whether regrouping pays, and the switch that takes it
// out of the path when it does not (issue 17: "it never makes things worse").
//
// Reframer regroups only the packets of a flow that arrive within t_buff of each other. When
// nothing can be regrouped (every flow's packets farther apart than t_buff, or SLF already high),
// holding packets only adds latency and Reframer's own cost. The paper suggests Reframer watch
// its own statistics (useless wait, packets per batch) to tune itself; this uses the quantity the
// NFs behind it profit from, the spatial locality factor: over a probe window of `probe_packets`
// packets it compares the SLF of what it emitted with the SLF of what it received. If
//     gain = SLF_out / SLF_in < min_gain
// it flushes what it holds (order kept) and passes the next `bypass_packets` packets straight
// through — no classification, no flow table, no holding — then probes again. A window is
// judged only once at least half of it has been emitted (packets still held are not yet counted).
// With the defaults (16384-packet probe, 16x longer bypass) a cannot-help trace pays Reframer's
// full cost on 1/17 of its packets.
#pragma once
#include <cstdint>

namespace nfpark::reframe {

struct SelfBypassConfig {
  bool enabled = true;
  double min_gain = 1.1;             // SLF_out / SLF_in below this: bypass
  uint32_t probe_packets = 16384;    // window over which the gain is measured
  uint32_t bypass_packets = 262144;  // packets passed through before the next probe
};

class SelfBypass {
 public:
  explicit SelfBypass(const SelfBypassConfig& c) : c_(c) {}

  bool passing() const { return pass_left_ > 0; }
  // Ends a bypass period and starts a fresh probe window (traffic known to have changed).
  void restart() {
    pass_left_ = 0;
    reset();
  }
  // Counts packets passed through; true when the bypass period is over (probe again).
  bool passed(uint64_t n) {
    pass_left_ = n >= pass_left_ ? 0 : pass_left_ - n;
    if (pass_left_ == 0) reset();
    return pass_left_ == 0;
  }
  // Counts `packets` received (emitted) in `runs` same-flow runs; called once per round.
  void on_in(uint64_t packets, uint64_t runs) {
    in_ += packets;
    in_runs_ += runs;
  }
  void on_out(uint64_t packets, uint64_t runs) {
    out_ += packets;
    out_runs_ += runs;
  }
  // Called at the end of a round; true when Reframer should flush and start passing through.
  bool judge() {
    if (!c_.enabled || in_ < c_.probe_packets || 2 * out_ < c_.probe_packets || !in_runs_ ||
        !out_runs_)
      return false;
    last_gain_ = (double(out_) / double(out_runs_)) / (double(in_) / double(in_runs_));
    ++judged_;
    reset();
    if (last_gain_ >= c_.min_gain) return false;
    pass_left_ = c_.bypass_packets ? c_.bypass_packets : 1;
    ++bypasses_;
    return true;
  }
  double last_gain() const { return last_gain_; }
  uint64_t bypasses() const { return bypasses_; }
  uint64_t judged() const { return judged_; }

 private:
  void reset() { in_ = in_runs_ = out_ = out_runs_ = 0; }
  SelfBypassConfig c_;
  uint64_t in_ = 0, in_runs_ = 0, out_ = 0, out_runs_ = 0;
  uint64_t pass_left_ = 0;
  double last_gain_ = 0;
  uint64_t bypasses_ = 0, judged_ = 0;
};

}  // namespace nfpark::reframe
