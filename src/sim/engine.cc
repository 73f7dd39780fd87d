#include "sim/engine.h"

#include <cassert>

namespace nfpark::sim {

Engine::Engine() : bucket_(kBuckets) {
  nodes_.reserve(256);
  far_.reserve(64);
}

uint32_t Engine::grow() {
  nodes_.emplace_back();
  return uint32_t(nodes_.size() - 1);
}

void Engine::insert_sorted(Bucket& bk, uint32_t n) {
  Node& x = nodes_[n];
  uint32_t* link = &bk.head;
  while (nodes_[*link].before(x)) link = &nodes_[*link].next;
  x.next = *link;
  *link = n;
}

uint32_t Engine::ring_first() const {
  const uint32_t s = uint32_t(now_ >> kShift) & (kBuckets - 1);
  const uint32_t w0 = s >> 6;
  // the start word, from the start bucket on
  if (uint64_t m = bits_[w0] & (~0ull << (s & 63)))
    return bucket_[w0 << 6 | __builtin_ctzll(m)].head;
  // the following words (then wrapping round), through the summary
  for (uint32_t pass = 0; pass < 2; ++pass) {
    const uint32_t from = pass == 0 ? w0 + 1 : 0, to = pass == 0 ? kWords : w0 + 1;
    for (uint32_t sw = from >> 6; sw < kWords / 64 && (sw << 6) < to; ++sw) {
      uint64_t m = summary_[sw];
      if (sw == (from >> 6)) m &= ~0ull << (from & 63);
      if (m) {
        const uint32_t w = sw << 6 | __builtin_ctzll(m);
        if (w >= to) break;
        uint64_t bm = bits_[w];
        if (w == w0) bm &= ~(~0ull << (s & 63));  // wrapped round: the buckets before the start
        if (bm) return bucket_[w << 6 | __builtin_ctzll(bm)].head;
      }
    }
  }
  return kNil;
}

uint32_t Engine::find_first() const {
  const uint32_t r = ring_first();
  if (far_top_ == kNil) return r;
  return r == kNil || !before_far(r) ? far_top_ : r;
}

inline void Engine::unlink(uint32_t n) {
  assert(nodes_[n].at == now_);
  if (n == far_top_) [[unlikely]] {
    first_valid_ = false;
    return heap_pop();
  }
  const uint32_t b = uint32_t(nodes_[n].at >> kShift) & (kBuckets - 1);
  Bucket& bk = bucket_[b];
  bk.head = nodes_[n].next;
  if (bk.head != kNil) {
    // a bucket holds one lap of the ring: its next node is the ring's first; the heap's first
    // may still come before it
    first_ = bk.head;
    first_valid_ = before_far(first_);
  } else {
    bk.tail = kNil;
    uint64_t& w = bits_[b >> 6];
    w &= ~(1ull << (b & 63));
    // b is now's bucket (run() moved the clock to n): a later bucket of the same word is the
    // ring's next (lower ones are a lap ahead); else find_first() scans on
    if (const uint64_t later = w & (~0ull << (b & 63))) {
      first_ = bucket_[(b & ~63u) | uint32_t(__builtin_ctzll(later))].head;
      first_valid_ = before_far(first_);
    } else {
      first_valid_ = false;
      if (!w) summary_[b >> 12] &= ~(1ull << ((b >> 6) & 63));
    }
  }
}

void Engine::heap_push(uint32_t n) {
  far_.push_back(n);
  size_t i = far_.size() - 1;
  while (i > 0) {
    const size_t p = (i - 1) / 2;
    if (!nodes_[far_[i]].before(nodes_[far_[p]])) break;
    std::swap(far_[i], far_[p]);
    i = p;
  }
  far_top_ = far_[0];
  far_min_ = nodes_[far_top_].order();
}

void Engine::heap_pop() {
  far_[0] = far_.back();
  far_.pop_back();
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= far_.size()) break;
    if (c + 1 < far_.size() && nodes_[far_[c + 1]].before(nodes_[far_[c]])) ++c;
    if (!nodes_[far_[c]].before(nodes_[far_[i]])) break;
    std::swap(far_[i], far_[c]);
    i = c;
  }
  far_top_ = far_.empty() ? kNil : far_[0];
  far_min_ = far_.empty() ? ~(unsigned __int128)0 : nodes_[far_top_].order();
}

uint64_t Engine::run(Picos until) {
  stopped_ = false;
  until_ = until;
  const uint64_t start = events_;
  while (!stopped_) {
    const uint32_t n = first();
    if (n == kNil) break;
    Node& x = nodes_[n];
    if (x.at > until) {
      now_ = until;
      break;
    }
    EventHandler* const h = x.h;
    const uint64_t arg = x.arg;
    now_ = x.at;
    cur_key_ = x.key;
    unlink(n);
    x.next = free_;  // (unlink has read it)
    free_ = n;
    --pending_;
    ++events_;
    h->on_event(arg);
  }
  until_ = kNever;
  cur_key_ = ~0ull;
  if (pending_ == 0 && until != kNever && now_ < until && !stopped_) now_ = until;
  return events_ - start;
}

}  // namespace nfpark::sim
