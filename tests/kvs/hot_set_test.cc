// The stable/pending rules of nicmem's nmKVS (paper §4.2.2), step by step.
#include "kvs/hot_set.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nfpark::kvs {
namespace {

const uint8_t* B(const std::string& s) {
  return reinterpret_cast<const uint8_t*>(s.data());
}
std::string bytes(const HotSet::Served& s, uint32_t n) {
  return {reinterpret_cast<const char*>(s.data), n};
}

struct HotSetTest : ::testing::Test {
  std::vector<uint8_t> region = std::vector<uint8_t>(64 << 10);
  HotSet hot{region.data(), region.size(), 16, 64 << 10};
};

TEST_F(HotSetTest, ValidStableBufferIsServedZeroCopyWithTheEndMarkerAfterIt) {
  const std::string v = "hello\r\n";
  const uint32_t slot = hot.promote(B(v), 7, 1, 0, false);
  ASSERT_NE(slot, HotSet::kNone);
  const HotSet::Served s = hot.serve(slot, B(v), 7);
  ASSERT_TRUE(s.zero_copy);
  EXPECT_EQ(bytes(s, s.room), "hello\r\nEND\r\n");
  EXPECT_GE(s.data, region.data());
  EXPECT_LT(s.data, region.data() + region.size()) << "the bytes live in the region";
  EXPECT_EQ(hot.entry(slot).refs, 1u);
  hot.release(s.ref);
  EXPECT_EQ(hot.refs_in_flight(), 0u);
  EXPECT_EQ(hot.counters().stable_hits, 1u);
}

TEST_F(HotSetTest, SetWhileInFlightSendsPendingCopiesUntilTheLastReferenceReturns) {
  const std::string v1 = "old-value\r\n", v2 = "new-value-longer\r\n";
  const uint32_t slot = hot.promote(B(v1), uint32_t(v1.size()), 1, 0, false);
  const HotSet::Served a = hot.serve(slot, B(v1), uint32_t(v1.size()));
  const HotSet::Served b = hot.serve(slot, B(v1), uint32_t(v1.size()));
  ASSERT_TRUE(a.zero_copy && b.zero_copy);
  hot.invalidate(slot);  // SET: the pending buffer (the log) has v2
  EXPECT_EQ(hot.counters().invalidations, 1u);
  const HotSet::Served c = hot.serve(slot, B(v2), uint32_t(v2.size()));
  EXPECT_FALSE(c.zero_copy) << "refs > 0: a copy of the pending value";
  EXPECT_EQ(hot.counters().pending_copies, 1u);
  EXPECT_EQ(bytes(a, uint32_t(v1.size())), v1) << "the in-flight replies' bytes never change";
  hot.release(a.ref);
  EXPECT_FALSE(hot.serve(slot, B(v2), uint32_t(v2.size())).zero_copy);
  EXPECT_EQ(bytes(b, uint32_t(v1.size())), v1);
  hot.release(b.ref);
  const HotSet::Served d = hot.serve(slot, B(v2), uint32_t(v2.size()));  // refs == 0: swap
  ASSERT_TRUE(d.zero_copy);
  EXPECT_EQ(hot.counters().swaps, 1u);
  EXPECT_EQ(bytes(d, d.room), v2 + "END\r\n");
  hot.release(d.ref);
  EXPECT_EQ(hot.refs_in_flight(), 0u);
  EXPECT_EQ(hot.counters().stale_releases, 0u);
}

TEST_F(HotSetTest, DemotedWhileInFlightTheBlockOutlivesTheReply) {
  const std::string v = std::string(1000, 'z') + "\r\n";
  const uint32_t slot = hot.promote(B(v), uint32_t(v.size()), 1, 0, false);
  const HotSet::Served s = hot.serve(slot, B(v), uint32_t(v.size()));
  const uint64_t used = hot.region().used();
  hot.demote(slot);
  EXPECT_EQ(hot.live(), 0u);
  EXPECT_EQ(hot.zombies(), 1u);
  EXPECT_EQ(hot.region().used(), used) << "not freed while a reply points at it";
  // A new item cannot reuse that block: promote something else and check the old bytes.
  const std::string w = std::string(1000, 'w') + "\r\n";
  const uint32_t other = hot.promote(B(w), uint32_t(w.size()), 2, 0, false);
  ASSERT_NE(other, HotSet::kNone);
  EXPECT_EQ(bytes(s, uint32_t(v.size())), v);
  hot.release(s.ref);
  EXPECT_EQ(hot.zombies(), 0u);
  hot.demote(other);
  EXPECT_EQ(hot.region().used(), 0u);
  hot.release(s.ref);  // a second release of the same reference is refused and counted
  EXPECT_EQ(hot.counters().stale_releases, 1u);
}

TEST_F(HotSetTest, GrownValueMovesToALargerBlockOnSwap) {
  const std::string small = "ab\r\n", big = std::string(3000, 'b') + "\r\n";
  const uint32_t slot = hot.promote(B(small), 4, 1, 0, false);
  EXPECT_EQ(hot.region().used(), 64u);
  hot.invalidate(slot);
  const HotSet::Served s = hot.serve(slot, B(big), uint32_t(big.size()));
  ASSERT_TRUE(s.zero_copy);
  EXPECT_EQ(hot.region().used(), 4096u);
  EXPECT_EQ(bytes(s, uint32_t(big.size())), big);
  hot.release(s.ref);
}

TEST_F(HotSetTest, PowerOfTwoValuesTakeTheirOwnSizeAndLeaveTheTerminatorOut) {
  const std::string v = std::string(1024, 'k') + "\r\n";
  const uint32_t slot = hot.promote(B(v), uint32_t(v.size()), 1, 0, false);
  EXPECT_EQ(hot.region().used(), 1024u) << "not 2048 for 7 bytes of terminator";
  const HotSet::Served s = hot.serve(slot, B(v), uint32_t(v.size()));
  ASSERT_TRUE(s.zero_copy);
  EXPECT_EQ(s.len, 1024u);
  EXPECT_EQ(s.room, 1024u);
  EXPECT_EQ(bytes(s, 1024), std::string(1024, 'k'));
  hot.release(s.ref);
  const std::string w = std::string(1000, 'w') + "\r\n";  // room for the terminator: kept
  hot.invalidate(slot);
  const HotSet::Served t = hot.serve(slot, B(w), uint32_t(w.size()));
  EXPECT_EQ(t.len, 1002u);
  EXPECT_EQ(bytes(t, t.room), std::string(1000, 'w') + "\r\nEND\r\n");
  hot.release(t.ref);
}

TEST_F(HotSetTest, FullRegionRefusesPromotion) {
  const std::string v = std::string(30000, 'x') + "\r\n";  // 32 KiB blocks: two fit
  EXPECT_NE(hot.promote(B(v), uint32_t(v.size()), 1, 0, false), HotSet::kNone);
  EXPECT_NE(hot.promote(B(v), uint32_t(v.size()), 2, 0, false), HotSet::kNone);
  EXPECT_FALSE(hot.can_fit(uint32_t(v.size())));
  EXPECT_EQ(hot.promote(B(v), uint32_t(v.size()), 3, 0, false), HotSet::kNone);
  EXPECT_EQ(hot.live(), 2u);
}

}  // namespace
}  // namespace nfpark::kvs
