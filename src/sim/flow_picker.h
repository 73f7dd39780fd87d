// FlowPicker: which flow sends the next packet of a synthetic traffic port — bursts of `slf`
// back-to-back packets of one flow (spatial locality factor, Reframer §2), the next burst never
// the same flow; flows uniform (a fresh random permutation each round, every flow the same share)
// or Zipf-popular (rank r with probability ∝ 1/(r+1)^zipf). These are the rules of the trace
// generator (trace/generator.h, without its --active mode), drawn without building a frame so
// the simulator can pick tens of millions of flows a second.
#pragma once
#include <cstdint>
#include <vector>

#include "trace/rng.h"

namespace nfpark::sim {

class FlowPicker {
 public:
  FlowPicker(uint32_t flows, uint32_t slf, double zipf, uint64_t seed);
  uint32_t next();

 private:
  uint32_t draw();
  uint32_t flows_, slf_;
  trace::Rng rng_;
  std::vector<uint32_t> perm_;
  size_t perm_pos_ = 0;
  std::vector<double> cdf_;
  int64_t prev_ = -1;
  uint32_t cur_ = 0, left_ = 0;
};

}  // namespace nfpark::sim
