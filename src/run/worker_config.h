// WorkerConfig: what one worker of `--workers N` runs with — its share of every store and keys
// of its own — decided once for every engine (the dataplane's lcores; the simulator can model
// the same split). Flows reach a worker by core/shard.h; each worker then owns, alone:
//   PayloadPark   a slot table of slots / N slots (each worker's own SlotTable set: a header
//                 returns on its worker's queue to the table that parked it);
//   QUEUE-MEM     queues / N payload queues in ceil(slices / N) slices and header_array / N
//                 header entries (the paper's per-server slicing of a port's queues, per core);
//   NFSlicer      the ring of core id w (the token's core field, as the paper's per-core rings
//                 under RSS); cores = N;
//   NF chain      its own instance, told set_worker(w, N) (a NAT takes its port partition);
//   faults        seed + w (each worker draws its own pattern).
// Tag and generation keys of worker w > 0 are derived from the run's ("worker w"), so a header
// that reached another worker's store could not pass its check; worker 0 keeps the run's keys
// (one worker runs exactly as before).
#pragma once
#include <cstdint>

#include "run/run_config.h"

namespace nfpark::run {

RunConfig worker_config(const RunConfig& cfg, uint32_t w);

}  // namespace nfpark::run
