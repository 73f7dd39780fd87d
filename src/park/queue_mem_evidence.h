// LossEvidence: when QUEUE-MEM first saw the NF return a header sent after a given one — the
// evidence that the NF has moved past that header. A header still missing lost_after after such
// evidence is lost (queue_mem.h); an NF that is only slow, and keeps order, never produces it.
//
// Packets get increasing send numbers as they go to the NF; `back` is the highest send number
// whose header has come back. note(back, now) records (back, now) when `back` grew; seen_after(s)
// is the time of the first record with back > s: the first time the switch saw a header sent
// after s come back. Records are kept at most every `grain` (a later time is conservative: it
// only delays a recovery) in a fixed ring of kCap; prune(s) drops the records no header at or
// after send number s can need. No allocation after construction.
#pragma once
#include <cstdint>

#include "core/time.h"

namespace nfpark::park {

class LossEvidence {
 public:
  static constexpr Nanos kNever = INT64_MAX;
  explicit LossEvidence(Nanos grain) : grain_(grain) {}

  void note(uint64_t back, Nanos now) {
    if (back <= noted_ || n_ == kCap) return;
    if (n_ && now - at(n_ - 1).time < grain_) return;  // coarse: noted on a later call
    at(n_++) = {back, now};
    noted_ = back;
  }
  // seen_after(s) <= cutoff for every s at once: exactly the s below the returned bound (0:
  // none). Records grow in back and never go back in time (note() skips a time before the last
  // record's: it is less than grain after it), so those at or before the cutoff are a prefix,
  // and the first record past s is in it iff the prefix's last back is > s.
  uint64_t seen_by(Nanos cutoff) const {
    uint32_t j = n_;
    while (j && at(j - 1).time > cutoff) --j;  // from the newest: few records are that recent
    return j ? at(j - 1).back : 0;
  }
  Nanos seen_after(uint64_t s) const {
    for (uint32_t i = 0; i < n_; ++i)
      if (at(i).back > s) return at(i).time;
    return kNever;
  }
  void prune(uint64_t s) {
    while (n_ && at(0).back <= s) {
      head_ = (head_ + 1) % kCap;
      --n_;
    }
  }

 private:
  static constexpr uint32_t kCap = 256;
  struct Record {
    uint64_t back;
    Nanos time;
  };
  Record& at(uint32_t i) { return ring_[(head_ + i) % kCap]; }
  const Record& at(uint32_t i) const { return ring_[(head_ + i) % kCap]; }

  Nanos grain_;
  Record ring_[kCap] = {};
  uint32_t head_ = 0, n_ = 0;
  uint64_t noted_ = 0;
};

}  // namespace nfpark::park
