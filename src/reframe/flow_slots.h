// FlowSlots: Reframer's per-flow state — one flat array of 16-byte slots, four per 64-byte line;
// the flow id's two halves xor-ed pick a line (a 4-way set) and a 32-bit tag (its high half; for
// small ids, the low half with bit 0 set) tells the flows of a set apart.
// What only some configurations read (first-seen time, last ACK) sits in a parallel cold array.
//
// Why flat: a packet costs one line, which the reorder loop prefetches a few packets ahead; no
// buckets of keys to probe, no entry line behind them, no displacement. The array is a BigArray
// (2 MiB pages advised), so at a million flows a lookup is one DRAM access behind a short page
// walk.
//
// Collisions. A new flow takes a free way of its set, or the way whose flow holds nothing and
// was seen least recently (that flow forgets its history: its next packet is a first packet
// again, counted in flows.evicted); when both ways hold batches of other flows, the packet is
// forwarded untracked (counted). Neither loses or reorders a packet. Two flows with the same
// tag in one set (a 2^-32 chance per pair) are taken for one flow: their batches merge, which
// keeps each flow's order.
//
// Sets = next power of two >= max_flows, so at most a quarter of the slots hold flows (a set
// overflows for ~0.4% of sets at max_flows): hot 16 B and cold 16 B per slot, i.e. up to 64 B
// hot per flow of max_flows (2^20 flows: 2^22 slots, 64 MiB hot; the cold half is touched only
// with the oldest_flow priority or ACK coalescing).
#pragma once
#include <algorithm>
#include <bit>
#include <cstdint>

#include "core/big_array.h"
#include "core/hot_path.h"
#include "core/time.h"

namespace nfpark::reframe {

constexpr uint32_t kNone = UINT32_MAX;

// Hot: read and written for every packet.
struct FlowSlot {
  uint32_t tag = 0;  // 0: empty; else FlowSlots::tag(flow id)
  uint32_t seq = 0;  // sequence number of the flow's latest batch (see BatchRing)
  uint32_t packets =
      0;              // packets of this flow since it took the slot (saturating; bit 31: has_ack)
  uint32_t last = 0;  // arrival of its latest packet, in FlowSlots::ticks (1.024 us)

  static constexpr uint32_t kHasAck = 1u << 31;
  uint32_t seen() const { return packets & ~kHasAck; }
};
static_assert(sizeof(FlowSlot) == 16, "four flows per cache line");

// Cold: read only for the oldest_flow priority and ACK coalescing.
struct FlowSlotCold {
  Nanos first_seen = 0;   // arrival of the flow's first packet in this slot
  uint32_t last_ack = 0;  // ack number of the last pure ACK emitted (valid with kHasAck)
  uint32_t pad = 0;
};

class FlowSlots {
 public:
  static constexpr uint32_t kWays = 4;  // one 64-byte line per set

  explicit FlowSlots(uint32_t max_flows)
      : sets_(std::bit_ceil(std::max<uint32_t>(max_flows, 2))),
        hot_(size_t(sets_) * kWays),
        cold_(size_t(sets_) * kWays) {}

  // First slot of the flow's set (its line).
  uint32_t set(uint64_t flow) const {
    return ((uint32_t(flow >> 32) ^ uint32_t(flow)) & (sets_ - 1)) * kWays;
  }
  static uint32_t tag(uint64_t flow) {
    const uint32_t hi = uint32_t(flow >> 32);
    return hi ? hi : uint32_t(flow) | 1u;
  }
  // Time in the slots' unit: 1.024 us, 32 bits (wraps every 73 minutes; ages compare modulo).
  static uint32_t ticks(Nanos t) { return uint32_t(uint64_t(t) >> 10); }
  void prefetch(uint64_t flow) const { prefetch_line_w(&hot_[set(flow)]); }
  // Touches every page of the hot array, so that no packet pays a page fault (and the kernel's
  // zeroing of a 2 MiB page) the first time its set is used. Engines call it at set-up.
  void prefault() {
    auto* p = reinterpret_cast<volatile uint8_t*>(&hot_[0]);
    for (size_t o = 0; o < hot_.bytes(); o += 4096) p[o] = 0;
  }

  FlowSlot& at(uint32_t i) { return hot_[i]; }
  const FlowSlot& at(uint32_t i) const { return hot_[i]; }
  FlowSlotCold& cold(uint32_t i) { return cold_[i]; }
  uint32_t size() const { return uint32_t(hot_.size()); }
  size_t bytes() const { return hot_.bytes() + cold_.bytes(); }

 private:
  uint32_t sets_;
  BigArray<FlowSlot> hot_;
  BigArray<FlowSlotCold> cold_;  // pages materialise only where used
};

}  // namespace nfpark::reframe
