// TraceClock: the clock a burst step runs on — the engine's `now`, or, replaying a trace, the
// trace time of the newest packet seen (so results do not depend on the replay speed). Shared by
// the NF server's step (park/nf_burst.h) and the Reframer box (park/reframe_stage.h), so that
// Reframer in-chain and in a box run on the same clock.
#pragma once
#include <algorithm>
#include <climits>
#include <optional>

#include "core/time.h"

namespace nfpark::park {

class TraceClock {
 public:
  void use_trace_time(bool on) { trace_time_ = on; }
  bool trace_time() const { return trace_time_; }

  // The clock of a poll that read `pkts` at `now`: `now`, or with trace time the newest trace
  // time seen (`ts(h)`); nullopt while no packet has been seen.
  template <class Handle, class Ts>
  std::optional<Nanos> advance(const Handle* pkts, uint16_t n, Nanos now, Ts&& ts) {
    if (trace_time_) {
      for (uint16_t i = 0; i < n; ++i) trace_now_ = std::max(trace_now_, Nanos(ts(pkts[i])));
      if (trace_now_ == INT64_MIN) return std::nullopt;
      now = trace_now_;
    }
    clock_ = now;
    return now;
  }
  // The clock the last poll ran on (INT64_MIN before it has one).
  Nanos last() const { return clock_; }
  // The time an end-of-run flush runs at: `now`, or the newest trace time (0 if none).
  Nanos flush_time(Nanos now) const {
    return trace_time_ ? (trace_now_ == INT64_MIN ? 0 : trace_now_) : now;
  }

 private:
  bool trace_time_ = false;
  Nanos trace_now_ = INT64_MIN;
  Nanos clock_ = INT64_MIN;
};

}  // namespace nfpark::park
