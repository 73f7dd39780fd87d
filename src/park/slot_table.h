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

namespace nfpark::park {

template <typename Handle>
class SlotTable {
 public:
  struct Claim {
    bool ok = false;                 // slot claimed: park the payload under (index, generation)
    uint32_t index = 0;
    uint32_t generation = 0;
    std::optional<Handle> evicted;   // a payload evicted by this probe (caller frees it)
  };

  SlotTable(uint32_t slots, uint8_t max_exp, uint64_t generation_limit)
      : meta_(slots), handles_(slots), max_exp_(max_exp ? max_exp : 1), gen_limit_(generation_limit) {}

  uint32_t size() const { return uint32_t(meta_.size()); }
  uint32_t occupied() const { return occupied_; }

  // One probe at the next index (Algorithm 1, stages 1–2).
  Claim claim(const Handle& h) {
    Claim c;
    idx_ = idx_ + 1 == meta_.size() ? 0 : idx_ + 1;
    clk_ = clk_ + 1 == gen_limit_ ? 0 : clk_ + 1;
    // The index walks the table: fetch the lines a few claims ahead (a large table is not in
    // cache, and its next line is needed within a few packets).
    const uint32_t ahead =
        idx_ + 16 < meta_.size() ? idx_ + 16 : idx_ + 16 - uint32_t(meta_.size());
    __builtin_prefetch(&meta_[ahead], 1);
    __builtin_prefetch(&handles_[ahead], 1);
    Meta& m = meta_[idx_];
    if (m.exp >= 1) {
      if (--m.exp > 0) return c;  // occupied and not expired: split disabled for this packet
      c.evicted = handles_[idx_];  // EXP hit 0: evict the old payload
      --occupied_;
    }
    m.exp = max_exp_;
    m.gen = uint32_t(clk_);
    handles_[idx_] = h;
    ++occupied_;
    c.ok = true;
    c.index = idx_;
    c.generation = m.gen;
    return c;
  }

  // Merge / explicit drop (Algorithm 2): the slot's payload when the slot is occupied and the
  // generation matches; nullptr otherwise (premature eviction, forged index). The slot stays
  // occupied until release().
  const Handle* find(uint32_t index, uint32_t generation) const {
    if (index >= meta_.size()) return nullptr;
    const Meta& m = meta_[index];
    if (m.exp == 0 || m.gen != generation) return nullptr;
    return &handles_[index];
  }
  // Frees a slot find() returned.
  void release(uint32_t index) {
    meta_[index].exp = 0;
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
    for (uint32_t i = 0; i < meta_.size(); ++i) {
      if (meta_[i].exp) {
        meta_[i].exp = 0;
        f(handles_[i]);
      }
    }
    occupied_ = 0;
  }

 private:
  struct Meta {
    uint32_t gen = 0;
    uint8_t exp = 0;
  };
  std::vector<Meta> meta_;
  std::vector<Handle> handles_;
  uint8_t max_exp_;
  uint64_t gen_limit_;
  uint32_t idx_ = uint32_t(-1);  // first claim lands on slot 0
  uint64_t clk_ = 0;
  uint32_t occupied_ = 0;
};

}  // namespace nfpark::park
