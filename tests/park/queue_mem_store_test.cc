// QueueMemStore's send order: the list poll() walks instead of visiting every slice.
#include "park/queue_mem_store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

namespace nfpark::park {
namespace {

using Store = QueueMemStore<int*>;

// Every live batch is in the send list once, in increasing last send; the list's first is the
// smallest last send of the heads; the heads below any bound are the heads in the list's prefix
// below it (what QueueMem::poll visits when it recovers).
void check(const Store& st, uint64_t bound) {
  std::set<uint32_t> live, heads_below;
  uint64_t oldest = UINT64_MAX;
  for (uint32_t s = 0; s < st.slices(); ++s)
    for (uint32_t q = st.head(s); q != Store::kNone; q = st.batch(q).next) {
      live.insert(q);
      if (q == st.head(s)) {
        oldest = std::min(oldest, st.batch(q).last_send);
        if (st.batch(q).last_send < bound) heads_below.insert(q);
      }
    }
  ASSERT_EQ(st.oldest_head_send(), oldest);
  std::set<uint32_t> listed, prefix_heads;
  uint64_t last = 0;
  for (uint32_t q = st.first_sent(); q != Store::kNone; q = st.next_sent(q)) {
    ASSERT_TRUE(listed.insert(q).second) << "batch " << q << " listed twice";
    ASSERT_GT(st.batch(q).last_send, last) << "send order broken at batch " << q;
    last = st.batch(q).last_send;
    if (last < bound && st.head(st.batch(q).slice) == q) prefix_heads.insert(q);
  }
  ASSERT_EQ(listed, live);
  ASSERT_EQ(prefix_heads, heads_below);
}

TEST(QueueMemStore, SendOrderListsEveryBatchByLastSendAndFindsTheHeadsBelowABound) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    Store st(3, 8, 4, 4, 256, nullptr);
    int pkt = 0;
    uint64_t send = 0;
    uint32_t id = 0;
    for (int step = 0; step < 3000; ++step) {
      const uint32_t s = uint32_t(rng() % st.slices());
      const uint32_t op = uint32_t(rng() % 10);
      if (op < 6) {  // a packet joins the slice's open batch (or opens one)
        if (!st.room(s)) continue;
        st.add(s, uint32_t(rng() % 64), &pkt, ++id, ++send, 100, 54, false, Nanos(step));
      } else if (op < 7) {
        st.seal_tail(s);
      } else if (st.head(s) != Store::kNone) {  // the head batch leaves
        const uint32_t q = st.head(s);
        for (uint32_t i = 0; i < st.batch(q).count; ++i) st.free_slot(st.entry(q, i).idx);
        st.pop_head(s);
      }
      check(st, send == 0 ? 0 : rng() % (send + 2));
      if (HasFatalFailure()) return;
    }
  }
}

// prefetch_add is a hint: a store that is given it before every operation (for the packet's
// slice and flow, and for random ones, empty and busy slices alike) goes through exactly the
// states of one that is not.
TEST(QueueMemStore, PrefetchAddChangesNothing) {
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    std::mt19937_64 rng(seed);
    Store a(3, 8, 4, 4, 256, nullptr), b(3, 8, 4, 4, 256, nullptr);
    int pkt = 0;
    uint64_t send = 0;
    uint32_t id = 0;
    for (int step = 0; step < 3000; ++step) {
      const uint32_t s = uint32_t(rng() % a.slices());
      const uint64_t hash = rng();
      const uint32_t op = uint32_t(rng() % 10);
      b.prefetch_add(s, b.bucket(hash));
      b.prefetch_add(uint32_t(rng() % b.slices()), b.bucket(rng()));
      if (op < 6) {
        if (a.room(s) != b.room(s)) FAIL() << "room differs at step " << step;
        if (!a.room(s)) continue;
        ASSERT_EQ(a.waiting(s, a.bucket(hash)), b.waiting(s, b.bucket(hash)));
        ++id, ++send;
        const auto x = a.add(s, a.bucket(hash), &pkt, id, send, 100, 54, false, Nanos(step));
        const auto y = b.add(s, b.bucket(hash), &pkt, id, send, 100, 54, false, Nanos(step));
        ASSERT_EQ(x.idx, y.idx);
        ASSERT_EQ(x.queue, y.queue);
        ASSERT_EQ(x.opened, y.opened);
      } else if (op < 7) {
        ASSERT_EQ(a.seal_tail(s), b.seal_tail(s));
      } else if (a.head(s) != Store::kNone) {
        for (Store* st : {&a, &b}) {
          const uint32_t q = st->head(s);
          for (uint32_t i = 0; i < st->batch(q).count; ++i) st->free_slot(st->entry(q, i).idx);
          st->pop_head(s);
        }
      }
      for (uint32_t t = 0; t < a.slices(); ++t) {
        ASSERT_EQ(a.head(t), b.head(t));
        ASSERT_EQ(a.tail(t), b.tail(t));
        for (uint32_t q = a.head(t); q != Store::kNone; q = a.batch(q).next) {
          ASSERT_EQ(a.batch(q).count, b.batch(q).count);
          ASSERT_EQ(a.batch(q).closed, b.batch(q).closed);
          ASSERT_EQ(a.batch(q).seq, b.batch(q).seq);
          ASSERT_EQ(a.batch(q).last_send, b.batch(q).last_send);
        }
      }
      ASSERT_EQ(a.oldest_head_send(), b.oldest_head_send());
    }
  }
}

}  // namespace
}  // namespace nfpark::park
