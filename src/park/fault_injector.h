// Element:  FaultInjector — misbehaviour on the NF server's way back to the switch, for tests,
//           soaks and demos: drops, delays, duplicates, reordering, corrupted and forged tags.
// Ports:    apply(burst the chain passed) -> out (now) | held (delayed) ; release(now) -> out
// Config:   FaultConfig: drop, dup, reorder, corrupt_tag, forge_tag (fractions of packets, 0..1),
//           delay_us (packets held that long, µs; 0 = off), delay_share (the fraction of
//           packets held, 1 = all), seed (1).
//           TagShape: where the mode's tag or token is and which of its bytes are flags.
// Time:     `now` passed in (trace time or the engine's clock); no timers (next_due() says when
//           release() has work: the simulator's FaultStage schedules it then).
// State:    the delayed packets (FIFO); the last 64 parked tags sent back (for replays).
// Counters: FaultCounters — dropped, duplicated, reordered, corrupted, forged, delayed.
// Refs:     issues 3, 4, 14 (soak); docs/run.md "Faults".
//
// Theory of operation
//  Deterministic for a seed (xorshift64). Per packet, in order: dropped (freed: the packet is
//  lost, counted here); else its tag, if it has one, corrupted — one bit flipped among the bytes
//  that name its record (TagShape::identity), which every format must detect; else duplicated (a
//  copy goes first, made by the engine's `copy`); then held for delay_us or sent. Adjacent packets
//  of the burst are then swapped (reorder). Forging runs last, on what leaves now, and only forges
//  tags the switch must reject — a malicious NF that moves a live tag onto another header cannot be
//  detected by any switch (docs/security.md), so that is not a fault here:
//   - random: the tag's bytes replaced by random bytes;
//   - replay: a parked tag this injector sent back in an earlier burst (its owner went first);
//   - another packet's: the parked tag of a packet earlier in the same outgoing burst (its
//     owner goes first, so the forged copy arrives second: a duplicate, or stale).
//  A tag's owner is the header packet the switch made, sent back intact: only such tags are
//  remembered and copied. Not a duplicate's: while the original is held (delayed) or later
//  destroyed (forged over), the record stays live with no intact holder, and a copy of its tag
//  on another header would merge — that is the undetectable tag swap again. Not a "not parked"
//  or escape tag either: on a header packet it turns it into a truncated whole packet, which is
//  garbage, not a forgery. NFSlicer's escape token is no tag at all here (TagShape::escape).
//  Every event is counted, so in + duplicated = out + Σ drops still holds end to end.
#pragma once
#include <array>
#include <climits>
#include <cstdint>
#include <cstring>
#include <deque>
#include <utility>
#include <vector>

#include "core/bytes.h"
#include "core/time.h"
#include "park/buffer_ops.h"
#include "park/slicer_token.h"

namespace nfpark::park {

struct FaultConfig {
  double drop = 0, dup = 0, reorder = 0, corrupt_tag = 0, forge_tag = 0;  // fractions, 0..1
  double delay_us = 0;                                                    // µs, >= 0
  double delay_share = 1;  // fraction of packets delayed (the others leave at once), 0..1
  uint64_t seed = 1;
  bool any() const {
    return drop > 0 || dup > 0 || reorder > 0 || corrupt_tag > 0 || forge_tag > 0 || delay_us > 0;
  }
};

struct FaultCounters {
  uint64_t dropped = 0, duplicated = 0, reordered = 0, corrupted = 0, forged = 0, delayed = 0;
};

// Where a mode's tag sits and what it looks like (the packet's tag offset comes with each
// packet, from NfEndpoint::view). size 0: the mode carries no tags (baseline, nicmem).
struct TagShape {
  enum Kind : uint8_t { kNone, kNfpark, kPayloadPark, kSlicerToken };
  Kind kind = kNone;
  uint32_t size() const {
    return kind == kNfpark ? 24 : kind == kPayloadPark ? 7 : kind == kSlicerToken ? 8 : 0;
  }
  // The bytes that name the record (slice, index, generation; the whole token): a corruption
  // there can never be merged — the check fails, or the tag names another record. (Other bytes
  // may be rewritten harmlessly: PayloadPark's fast merge proves a lent packet by the payload it
  // carries, not by its check.) The flags byte is never among them, so a corruption never reads
  // as a legitimate "drop" notification.
  std::pair<uint32_t, uint32_t> identity() const {  // [first, last)
    return kind == kNfpark        ? std::pair{2u, 12u}
           : kind == kPayloadPark ? std::pair{1u, 7u}
                                  : std::pair{0u, size()};
  }
  // NFSlicer's escape token names no record: a whole packet whose payload began like one. No
  // switch can tell it corrupted or forged (the packet then reads as a plain one 8 bytes too
  // long), so it is no tag to corrupt or forge.
  bool escape(const uint8_t* t) const {
    return kind == kSlicerToken && load_be64(t) == kEscapeToken;
  }
  bool parked(const uint8_t* t) const {
    if (kind == kNfpark) return t[1] & 0x01;
    if (kind == kPayloadPark) return t[0] & 0x80;
    return kind == kSlicerToken && load_be64(t) != kEscapeToken;
  }
};

template <BufferOps B>
class FaultInjector {
 public:
  using Handle = typename B::Handle;
  FaultInjector(const FaultConfig& f, TagShape shape)
      : f_(f), shape_(shape), rng_(f.seed * 0x9E3779B97F4A7C15ULL + 1) {}

  // Applies the faults to a burst on its way back to the switch. `tag_at[i]`: the tag's offset
  // in pkts[i] (0: none). What leaves now is appended to `out`; `copy(h)` duplicates a packet
  // (B::null() when it cannot).
  template <typename Copy>
  void apply(Handle* pkts, const uint32_t* tag_at, uint16_t n, Nanos now, std::vector<Handle>& out,
             Copy&& copy) {
    apply(pkts, tag_at, n, now, out, copy, [](Handle h) { B::free(h); });
  }
  // The same; a dropped packet goes to `lose(h)` (which frees it) instead of B::free — for an
  // engine that returns more than the buffer (the simulator's NIC memory).
  template <typename Copy, typename Lose>
  void apply(Handle* pkts, const uint32_t* tag_at, uint16_t n, Nanos now, std::vector<Handle>& out,
             Copy&& copy, Lose&& lose) {
    const size_t first = out.size();
    tags_.clear();
    copy_.clear();
    for (uint16_t i = 0; i < n; ++i) {
      Handle m = pkts[i];
      if (chance(f_.drop)) {
        ++c_.dropped;
        lose(m);
        continue;
      }
      const uint32_t at =
          has_tag(m, tag_at[i]) && !shape_.escape(B::data(m) + tag_at[i]) ? tag_at[i] : 0;
      if (at && chance(f_.corrupt_tag)) corrupt(B::data(m) + at);
      if (chance(f_.dup)) {
        if (Handle d = copy(m); d != B::null()) {
          ++c_.duplicated;
          out.push_back(d);
          tags_.push_back(at);
          copy_.push_back(1);
        }
      }
      if (f_.delay_us > 0 && (f_.delay_share >= 1 || chance(f_.delay_share))) {
        ++c_.delayed;
        delayed_.push_back({now + Nanos(f_.delay_us * 1000), m, at});
        continue;
      }
      out.push_back(m);
      tags_.push_back(at);
      copy_.push_back(0);
    }
    reorder(out, first);
    forge(out, first);
  }

  // Moves delayed packets whose time has come (all of them when `all`) to `out`.
  void release(Nanos now, bool all, std::vector<Handle>& out) {
    const size_t first = out.size();
    tags_.clear();
    copy_.clear();
    while (!delayed_.empty() && (all || delayed_.front().due <= now)) {
      out.push_back(delayed_.front().pkt);
      tags_.push_back(delayed_.front().tag_at);
      copy_.push_back(0);
      delayed_.pop_front();
    }
    reorder(out, first);
    forge(out, first);
  }

  size_t held() const { return delayed_.size(); }
  // When the oldest delayed packet is due (INT64_MAX when none is held): an engine with timers
  // (the simulator) calls release() then; the dataplane calls it every poll.
  Nanos next_due() const { return delayed_.empty() ? INT64_MAX : delayed_.front().due; }
  const FaultCounters& counters() const { return c_; }

 private:
  struct Delayed {
    Nanos due;
    Handle pkt;
    uint32_t tag_at;
  };
  using Tag = std::array<uint8_t, 24>;

  bool chance(double p) { return p > 0 && double(next() >> 11) * 0x1.0p-53 < p; }
  uint64_t next() {
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 7;
    rng_ ^= rng_ << 17;
    return rng_;
  }
  bool has_tag(Handle m, uint32_t at) const {
    return at && shape_.size() && uint64_t(at) + shape_.size() <= B::head_len(m);
  }
  void corrupt(uint8_t* t) {
    const auto [first, last] = shape_.identity();
    t[first + next() % (last - first)] ^= uint8_t(1u << (next() % 8));
    ++c_.corrupted;
  }
  // Swaps neighbours among out[first, ...) (tags_ follows).
  void reorder(std::vector<Handle>& out, size_t first) {
    for (size_t i = first; i + 1 < out.size(); ++i) {
      if (chance(f_.reorder)) {
        std::swap(out[i], out[i + 1]);
        std::swap(tags_[i - first], tags_[i + 1 - first]);
        std::swap(copy_[i - first], copy_[i + 1 - first]);
        ++c_.reordered;
        ++i;
      }
    }
  }
  // Forges tags among out[first, ...) (tags_ holds their tag offsets), then remembers the intact
  // parked tags that leave for later replays.
  void forge(std::vector<Handle>& out, size_t first) {
    const uint32_t size = shape_.size();
    std::vector<bool>& forged = forged_;
    forged.assign(out.size() - first, false);
    for (size_t k = first; k < out.size() && size; ++k) {
      const uint32_t at = tags_[k - first];
      if (!at || !chance(f_.forge_tag)) continue;
      uint8_t* t = B::data(out[k]) + at;
      const uint64_t how = next() % 3;
      if (how == 0) {
        for (uint32_t b = 0; b < size; ++b) t[b] = uint8_t(next());
      } else if (how == 1) {
        if (history_n_ == 0) continue;
        std::memcpy(t, history_[next() % history_n_].data(), size);
      } else {
        const size_t src = earlier_parked(out, first, k);
        if (src == k) continue;
        std::memcpy(t, B::data(out[src]) + tags_[src - first], size);
      }
      forged[k - first] = true;
      ++c_.forged;
    }
    for (size_t k = first; k < out.size() && size; ++k) {
      const uint32_t at = tags_[k - first];
      if (!at || forged[k - first] || copy_[k - first]) continue;
      const uint8_t* t = B::data(out[k]) + at;
      if (!shape_.parked(t)) continue;
      std::memcpy(history_[history_next_].data(), t, size);
      history_next_ = (history_next_ + 1) % history_.size();
      history_n_ = std::min(history_n_ + 1, history_.size());
    }
  }
  // An earlier packet of this burst with an intact parked tag (k itself when there is none).
  size_t earlier_parked(const std::vector<Handle>& out, size_t first, size_t k) {
    for (size_t tries = 0; tries < 4 && k > first; ++tries) {
      const size_t s = first + next() % (k - first);
      if (tags_[s - first] && !forged_[s - first] && !copy_[s - first] &&
          shape_.parked(B::data(out[s]) + tags_[s - first]))
        return s;
    }
    return k;
  }

  FaultConfig f_;
  TagShape shape_;
  uint64_t rng_;
  FaultCounters c_;
  std::deque<Delayed> delayed_;
  std::vector<uint32_t> tags_;  // tag offsets of the packets appended to `out` by this call
  std::vector<uint8_t> copy_;   // ... which of them are duplicates (1)
  std::vector<bool> forged_;
  std::array<Tag, 64> history_{};
  size_t history_n_ = 0, history_next_ = 0;
};

}  // namespace nfpark::park
