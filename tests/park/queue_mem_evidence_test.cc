// LossEvidence (park/queue_mem_evidence.h): seen_by(cutoff), the one-compare form of
// "seen_after(s) <= cutoff" QueueMem::poll uses for every slice, equals it for every s.
#include "park/queue_mem_evidence.h"

#include <gtest/gtest.h>

#include <random>

namespace nfpark::park {
namespace {

bool seen_by_scan(const LossEvidence& e, uint64_t s, Nanos cutoff) {
  const Nanos seen = e.seen_after(s);
  return seen != LossEvidence::kNever && seen <= cutoff;
}

TEST(LossEvidence, SeenByEqualsTheScanForEverySendNumber) {
  std::mt19937_64 rng(7);
  uint64_t agreed = 0, yes = 0;
  for (int run = 0; run < 8; ++run) {
    LossEvidence e(Nanos(rng() % 4));  // grain 0..3: some notes skipped
    uint64_t back = 0, pruned = 0;
    Nanos now = 0;
    for (int step = 0; step < 150; ++step) {
      now += Nanos(rng() % 7) - 1;  // now and then back by 1
      back += rng() % 4;
      e.note(back, now);
      if (rng() % 8 == 0) e.prune(pruned = pruned + rng() % 6);
      for (Nanos cutoff : {now - 20, now - 5, now - 1, now, Nanos(-1)}) {
        const uint64_t bound = e.seen_by(cutoff);
        for (uint64_t s = pruned; s <= back + 2; ++s) {
          const bool want = seen_by_scan(e, s, cutoff);
          ASSERT_EQ(s < bound, want) << "run " << run << " step " << step << " s " << s;
          ++agreed;
          yes += want;
        }
      }
    }
  }
  EXPECT_GT(yes, agreed / 10);
  EXPECT_LT(yes, agreed - agreed / 10);
}

// seen_by's prefix rule needs records in time order: a time before the last one is not noted.
TEST(LossEvidence, ATimeGoingBackIsNotNoted) {
  for (Nanos grain : {0, 1, 100}) {
    LossEvidence e(grain);
    e.note(5, 100);
    e.note(9, 300);
    e.note(12, 50);  // the caller's clock went back
    EXPECT_EQ(e.seen_after(9), LossEvidence::kNever);
    EXPECT_EQ(e.seen_by(1000), 9u);
    EXPECT_EQ(e.seen_by(150), 5u);
    EXPECT_EQ(e.seen_by(99), 0u);
  }
}

}  // namespace
}  // namespace nfpark::park
