// ResultSum: a run of `--workers N` reports one RunResult, the sum of its workers' parts — each
// worker counts alone, in plain integers, and the parts are added once the workers stopped.
#pragma once
#include "run/run_result.h"

namespace nfpark::run {

// Adds `part` (one worker's counters) into `total`: every count and counter map summed,
// warnings kept once each, Reframer's locality figures weighted by the packets each worker saw.
void add_part(RunResult& total, const RunResult& part);

}  // namespace nfpark::run
