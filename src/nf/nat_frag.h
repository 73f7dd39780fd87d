// NatFragments: what the NAT did to the first fragment of each IPv4 datagram, so that the
// datagram's other fragments — which carry no ports — follow it without reassembly.
//
// Element:  (library) used by nat.
// Config:   entries (datagrams tracked at once, default 4096; rounded up to a power of two,
//           at least one set) · timeout (Nanos a state lives after its first fragment, 2 s).
// Time:     `now` is passed to every call; no clock is read.
// State:    entries x 24 B, allocated once (4096 -> 96 KiB); 4-way sets indexed by a hash of
//           the key (source, destination, protocol, IP identification), as in RFC 791 §3.2.
// Counters: evicted (a live state replaced by a newer datagram's: its later fragments then find
//           nothing — the NAT counts them as drop.frag_no_first).
//
// Theory of operation. record() stores the key's action (rewrite the source or the destination
// address to `addr`, keep the fragment as it is, or drop it) in the key's set: in the slot that
// already holds the key, else an empty, finished or expired slot, else the oldest slot (counted
// as evicted). find() returns the action of a live state, tells an expired one (older than
// `timeout`) from a missing one, and never refreshes it: a datagram's fragments travel
// together, and a short life keeps a reused IP id (16 bits wrap fast, RFC 4963) from inheriting
// an old datagram's action. finish() marks the state of a datagram whose last fragment
// (MF = 0) passed: it stays findable (for duplicates and reordered middles) but may be replaced
// without counting an eviction.
#pragma once
#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "core/flow_key.h"
#include "core/time.h"
#include "nf/nf.h"

namespace nfpark::nf {

class NatFragments {
 public:
  enum class Action : uint8_t { kNone, kKeep, kSrc, kDst, kDrop };
  enum class Found : uint8_t { kLive, kMissing, kExpired };
  struct Key {
    uint32_t src = 0, dst = 0;  // host order, as the fragments carry them before translation
    uint16_t id = 0;
    uint8_t proto = 0;
  };

  NatFragments(uint32_t entries, Nanos timeout)
      : sets_(std::bit_ceil(std::max<uint32_t>(entries, kWays)) / kWays),
        timeout_(timeout),
        slots_(size_t(sets_) * kWays) {}

  void record(const Key& k, Action a, uint32_t addr, Nanos now) {
    Slot* set = &slots_[index(k) * kWays];
    Slot* pick = nullptr;
    for (uint32_t i = 0; i < kWays && !pick; ++i)
      if (same(set[i], k)) pick = &set[i];
    for (uint32_t i = 0; i < kWays && !pick; ++i)
      if (!live(set[i], now)) pick = &set[i];
    if (!pick) {
      pick = &set[0];
      for (uint32_t i = 1; i < kWays; ++i)
        if (set[i].stamp < pick->stamp) pick = &set[i];
      ++evicted_;
    }
    *pick = Slot{k.src, k.dst, addr, k.id, k.proto, uint8_t(a), now};
  }

  Found find(const Key& k, Nanos now, Action& a, uint32_t& addr) const {
    const Slot* set = &slots_[index(k) * kWays];
    for (uint32_t i = 0; i < kWays; ++i) {
      const Slot& s = set[i];
      if (!same(s, k)) continue;
      if (now - s.stamp > timeout_) return Found::kExpired;
      a = action(s);
      addr = s.addr;
      return Found::kLive;
    }
    return Found::kMissing;
  }

  void finish(const Key& k) {
    Slot* set = &slots_[index(k) * kWays];
    for (uint32_t i = 0; i < kWays; ++i)
      if (same(set[i], k)) set[i].state |= kDone;
  }

  uint64_t evicted() const { return evicted_; }
  size_t entries() const { return slots_.size(); }
  void export_state(std::vector<uint8_t>& out) const {
    for (const Slot& s : slots_) put_state(out, s);
    put_state(out, evicted_);
  }

 private:
  static constexpr uint32_t kWays = 4;
  static constexpr uint8_t kDone = 0x80;  // in Slot::state, beside the Action
  struct Slot {
    uint32_t src = 0, dst = 0, addr = 0;
    uint16_t id = 0;
    uint8_t proto = 0;
    uint8_t state = 0;  // Action | kDone
    Nanos stamp = 0;
  };
  static_assert(sizeof(Slot) == 24);
  static Action action(const Slot& s) { return Action(s.state & 0x7F); }
  static bool same(const Slot& s, const Key& k) {
    return action(s) != Action::kNone && s.src == k.src && s.dst == k.dst && s.id == k.id &&
           s.proto == k.proto;
  }
  // Not live: empty, finished, or older than the timeout — free to take without an eviction.
  bool live(const Slot& s, Nanos now) const {
    return action(s) != Action::kNone && !(s.state & kDone) && now - s.stamp <= timeout_;
  }
  uint32_t index(const Key& k) const {
    uint64_t w = uint64_t(k.src) << 32 | k.dst;
    return uint32_t(mix64(w ^ (uint64_t(k.id) << 8 | k.proto) * 0x9E3779B97F4A7C15ULL)) &
           (sets_ - 1);
  }

  uint32_t sets_;
  Nanos timeout_;
  std::vector<Slot> slots_;
  uint64_t evicted_ = 0;
};

}  // namespace nfpark::nf
