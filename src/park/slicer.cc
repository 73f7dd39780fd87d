#include "park/slicer.h"

namespace nfpark::park {

uint32_t slicer_index_bits(uint32_t entries) {
  uint32_t b = 0;
  while (b < kMaxIndexBits && (uint32_t(1) << b) < entries) ++b;
  return b;
}

std::optional<std::string> check(const SlicerConfig& c) {
  if (c.entries == 0 || c.entries > (uint32_t(1) << kMaxIndexBits))
    return "slicer.entries = " + std::to_string(c.entries) +
           ": must be 1..16777216 (rounded up to a power of two)";
  if (c.ttl == 0) return "slicer.ttl = 0: must be 1..255 (ring wrap-arounds an entry survives)";
  if (c.cores == 0 || c.cores > kMaxSlicerCores)
    return "slicer.cores = " + std::to_string(c.cores) + ": must be 1..255";
  if (c.dscp > 63) return "slicer.dscp = " + std::to_string(c.dscp) + ": must be 0..63";
  if (c.slice_bytes > 65535)
    return "slicer.slice_bytes = " + std::to_string(c.slice_bytes) +
           ": must be 0 (whole payload) or 1..65535";
  return std::nullopt;
}

}  // namespace nfpark::park
