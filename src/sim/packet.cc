#include "sim/packet.h"

#include <algorithm>
#include <cstring>

namespace nfpark::sim {

namespace {
constexpr uint32_t kChunkRecords = 4096;
}

PacketPool::PacketPool(uint32_t bytes, uint64_t max_records)
    : bytes_(bytes), stride_(0), max_(max_records) {
  // headroom + bytes (at least kMinBytes) + slack for a tag that grows a full record, rounded to
  // a cache line
  const uint32_t raw = uint32_t(sizeof(Packet)) + kHeadroom + std::max(bytes, kMinBytes) + 32;
  stride_ = (raw + 63) / 64 * 64;
}

bool PacketPool::grow() {
  if (total_ >= max_) return false;
  const uint64_t n = std::min<uint64_t>(kChunkRecords, max_ - total_);
  chunks_.emplace_back(new uint8_t[n * stride_ + 64]);
  uint8_t* base = chunks_.back().get();
  base += (64 - reinterpret_cast<uintptr_t>(base) % 64) % 64;  // records start on cache lines
  for (uint64_t i = n; i-- > 0;) {
    Packet* p = reinterpret_cast<Packet*>(base + i * stride_);
    p->pool = this;
    p->next = free_;
    free_ = p;
  }
  total_ += n;
  return true;
}

Packet* PacketPool::make(const uint8_t* frame, uint32_t captured, uint32_t len) {
  Packet* p = alloc();
  if (!p) return nullptr;
  p->head = std::min({captured, len, bytes_});
  std::memcpy(p->data, frame, p->head);
  p->len = len;
  return p;
}

}  // namespace nfpark::sim
