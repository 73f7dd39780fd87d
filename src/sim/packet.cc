#include "sim/packet.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <new>

namespace nfpark::sim {

namespace {
constexpr uint32_t round64(uint32_t n) {
  return (n + 63) / 64 * 64;
}
// What a header packet may hold: the buffer a record had when every record of a run was one
// size (a 96 B header, 64 B of headroom, the bytes and 32 B of slack, rounded to a cache line),
// less that headroom. Splits and NIC views keep deciding by it, so results do not depend on
// which pool a record comes from.
constexpr uint32_t legacy_limit(uint32_t bytes) {
  return round64(96 + 64 + std::max(bytes, PacketPool::kMinBytes) + 32) - 96 - 64;
}
}  // namespace

PacketPool::PacketPool(uint32_t bytes, uint64_t max_records, uint32_t room)
    : PacketPool(bytes, max_records, room ? room : std::max(bytes, kMinBytes),
                 legacy_limit(bytes)) {
  own_hdr_.reset(new PacketPool(bytes, max_records, kHeaderBytes, limit_));
  hdr_ = own_hdr_.get();
  if (room_ >= limit_) {
    spill_ = this;
  } else {
    own_spill_.reset(new PacketPool(bytes, max_records, limit_, limit_));
    spill_ = own_spill_.get();
  }
  for (PacketPool* c : {own_hdr_.get(), own_spill_.get()}) {
    if (!c) continue;
    c->hdr_ = hdr_;
    c->spill_ = spill_;
  }
}

PacketPool::PacketPool(uint32_t bytes, uint64_t max_records, uint32_t room, uint32_t limit)
    : bytes_(bytes),
      room_(room),
      stride_(round64(Packet::kDataAt + room)),
      limit_(limit),
      max_(max_records) {}

PacketPool::~PacketPool() {
  for (void* c : chunks_) std::free(c);
}

uint64_t PacketPool::live() const {
  return live_ + (own_hdr_ ? own_hdr_->live_ : 0) + (own_spill_ ? own_spill_->live_ : 0);
}

uint64_t PacketPool::capacity() const {
  return total_ + (own_hdr_ ? own_hdr_->total_ : 0) + (own_spill_ ? own_spill_->total_ : 0);
}

bool PacketPool::grow() {
  if (total_ >= max_) return false;
  // the chunk's first cache line holds the pool; records follow it
  const uint64_t fit = std::max<uint64_t>(1, (kChunkBytes - 64) / stride_);
  const uint64_t n = std::min<uint64_t>(fit, max_ - total_);
  const size_t bytes = (64 + n * stride_ + kChunkBytes - 1) / kChunkBytes * kChunkBytes;
  void* c = std::aligned_alloc(kChunkBytes, bytes);
  if (!c) throw std::bad_alloc();
  chunks_.push_back(c);
  uint8_t* base = static_cast<uint8_t*>(c);
  *reinterpret_cast<PacketPool**>(base) = this;
  base += 64;
  for (uint64_t i = n; i-- > 0;) {
    Packet* p = reinterpret_cast<Packet*>(base + i * stride_);
    p->next = free_;
    free_ = p;
  }
  total_ += n;
  return true;
}

Packet* PacketPool::make(const uint8_t* frame, uint32_t captured, uint32_t len) {
  Packet* p = alloc();
  if (!p) return nullptr;
  p->head = std::min({captured, len, bytes_, room_});
  std::memcpy(p->data(), frame, p->head);
  p->len = len;
  return p;
}

}  // namespace nfpark::sim
