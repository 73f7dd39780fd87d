// Trace: packets preloaded in memory for replay — one contiguous byte arena plus a flat array of
// records (timestamp in ns, offset, captured length, wire length). Appending never allocates per
// packet beyond the arena's amortised growth, and views stay valid once loading is done.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/time.h"

namespace nfpark::trace {

struct TracePacket {
  Nanos ts = 0;           // capture/send time, ns since the Unix epoch (or trace start)
  uint64_t offset = 0;    // first byte in the arena
  uint32_t len = 0;       // captured bytes
  uint32_t wire_len = 0;  // original frame length on the wire (>= len)
};

class Trace {
 public:
  void reserve(size_t packets, size_t bytes) {
    pkts_.reserve(packets);
    arena_.reserve(bytes);
  }
  void add(Nanos ts, const uint8_t* data, uint32_t len, uint32_t wire_len) {
    pkts_.push_back({ts, arena_.size(), len, wire_len < len ? len : wire_len});
    arena_.insert(arena_.end(), data, data + len);
  }
  size_t size() const { return pkts_.size(); }
  bool empty() const { return pkts_.empty(); }
  const TracePacket& operator[](size_t i) const { return pkts_[i]; }
  const uint8_t* data(size_t i) const { return arena_.data() + pkts_[i].offset; }
  uint8_t* data(size_t i) { return arena_.data() + pkts_[i].offset; }
  size_t arena_bytes() const { return arena_.size(); }
  void clear() {
    pkts_.clear();
    arena_.clear();
  }

 private:
  std::vector<TracePacket> pkts_;
  std::vector<uint8_t> arena_;
};

}  // namespace nfpark::trace
