// SlotTable — PayloadPark's lookup table for one NF server's slice of parking memory.
//
// Theory of operation (PayloadPark §3.3–3.5, Algorithms 1 and 2):
//  - A table index walks the slots in order; every eligible packet advances it once and probes
//    exactly one slot (no search: a hardware pipeline cannot search, and FIFO merges keep the
//    slot ahead of the index free in the common case).
//  - Each slot holds an expiry counter EXP (0 = free) and the generation ("clock") written when it
//    was claimed. A probe of an occupied slot decrements EXP; if EXP reaches 0 the old payload is
//    evicted (handed back to the caller to free) and the slot is reused at once. Otherwise the
//    probe fails and the packet goes whole ("store full ⇒ send whole").
//    With max_exp = 1 a payload survives one full traversal of the table.
//  - The clock advances with the index; a header that comes back after its slot was reused
//    carries an old generation, fails the check and is dropped (premature eviction) — never
//    merged with someone else's payload.
//  - Merge or explicit drop frees the slot (EXP = 0).
// Generation values wrap at `generation_limit` (2^16 for the PayloadPark tag, 2^32 for nfpark).
// With 2^16 an alias needs a header delayed by 65,536 splits of the same slice.
//
// Handle is whatever the engine parks (rte_mbuf*, a simulator record, an int in tests).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "core/hot_path.h"

namespace nfpark::park {

template <typename Handle>
class SlotTable {
 public:
  struct Claim {
    bool ok = false;  // slot claimed: park the payload under (index, generation)
    uint32_t index = 0;
    uint32_t generation = 0;
    std::optional<Handle> evicted;  // a payload evicted by this probe (caller frees it)
  };

  SlotTable(uint32_t slots, uint8_t max_exp, uint64_t generation_limit)
      : slots_(slots), max_exp_(max_exp ? max_exp : 1), gen_limit_(generation_limit) {}

  uint32_t size() const { return uint32_t(slots_.size()); }
  uint32_t occupied() const { return occupied_; }

  // One probe at the next index (Algorithm 1, stages 1–2).
  Claim claim(const Handle& h) {
    Claim c;
    idx_ = idx_ + 1 == slots_.size() ? 0 : idx_ + 1;
    clk_ = clk_ + 1 == gen_limit_ ? 0 : clk_ + 1;
    // The index walks the table: fetch the line a few claims ahead (a large table is not in
    // cache, and its next line is needed within a few packets).
    const uint32_t ahead =
        idx_ + 16 < slots_.size() ? idx_ + 16 : idx_ + 16 - uint32_t(slots_.size());
    prefetch_line_w(&slots_[ahead]);
    Slot& m = slots_[idx_];
    if (m.exp >= 1) {
      if (--m.exp > 0) return c;  // occupied and not expired: split disabled for this packet
      c.evicted = m.handle;       // EXP hit 0: evict the old payload
      --occupied_;
    }
    m.exp = max_exp_;
    m.gen = uint32_t(clk_);
    m.handle = h;
    ++occupied_;
    c.ok = true;
    c.index = idx_;
    c.generation = m.gen;
    return c;
  }

  // The slot a claim just took, for the caller to complete.
  Handle& at(uint32_t index) { return slots_[index].handle; }

  // Merge / explicit drop (Algorithm 2): the slot's payload when the slot is occupied and the
  // generation matches; nullptr otherwise (premature eviction, forged index). The slot stays
  // occupied until release().
  Handle* find(uint32_t index, uint32_t generation) {
    if (index >= slots_.size()) return nullptr;
    Slot& m = slots_[index];
    if (m.exp == 0 || m.gen != generation) return nullptr;
    return &m.handle;
  }
  // Frees a slot find() returned.
  void release(uint32_t index) {
    slots_[index].exp = 0;
    --occupied_;
  }
  // find() + release().
  std::optional<Handle> take(uint32_t index, uint32_t generation) {
    const Handle* h = find(index, generation);
    if (!h) return std::nullopt;
    release(index);
    return *h;
  }

  // Hands every parked payload to `f` and empties the table (shutdown).
  template <typename F>
  void drain(F&& f) {
    for (Slot& m : slots_) {
      if (m.exp) {
        m.exp = 0;
        f(m.handle);
      }
    }
    occupied_ = 0;
  }

 private:
  // One record per slot, so a probe or a merge touches one cache line: aligned to 32 bytes when
  // it fits in 32 (nfpark's mbuf slots: 8 + 16 bytes), so that no slot straddles two lines.
  struct alignas(sizeof(Handle) + 8 <= 32 ? 32 : alignof(Handle)) Slot {
    uint32_t gen = 0;
    uint8_t exp = 0;  // 0 = free
    Handle handle{};
  };
  std::vector<Slot> slots_;
  uint8_t max_exp_;
  uint64_t gen_limit_;
  uint32_t idx_ = uint32_t(-1);  // first claim lands on slot 0
  uint64_t clk_ = 0;
  uint32_t occupied_ = 0;
};

}  // namespace nfpark::park
