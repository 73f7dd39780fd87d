#include "run/worker_config.h"

#include <algorithm>
#include <string>

#include "park/secret.h"

namespace nfpark::run {

namespace {

template <class T>
T share(T total, uint32_t n) {
  return std::max<T>(T(total / n), T(1));
}

}  // namespace

RunConfig worker_config(const RunConfig& cfg, uint32_t w) {
  RunConfig c = cfg;
  const uint32_t n = std::max<uint32_t>(cfg.workers, 1);
  c.worker = w;
  if (n == 1) return c;
  c.park.slots = share(cfg.park.slots, n);
  c.queuemem.queues = share(cfg.queuemem.queues, n);
  c.queuemem.slices =
      uint16_t(std::min<uint32_t>(c.queuemem.queues, (cfg.queuemem.slices + n - 1) / n));
  c.queuemem.header_array = share(cfg.queuemem.header_array, n);
  c.slicer.cores = uint8_t(n);
  c.faults.seed = cfg.faults.seed + w;
  if (w > 0) {
    const std::string label = "worker " + std::to_string(w);
    if (c.park.key) c.park.key = park::derive_key(*c.park.key, label);
    if (c.queuemem.key) c.queuemem.key = park::derive_key(*c.queuemem.key, label);
    c.slicer.key = park::derive_key(c.slicer.key, label);
  }
  return c;
}

}  // namespace nfpark::run
