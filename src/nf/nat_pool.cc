// Nat's address pools and flow table: port allocation (paired pooling, FIFO reuse, reclaim of
// idle flows) and the table's growth.
#include <algorithm>
#include <memory>

#include "core/bytes.h"
#include "nf/nat.h"
#include "nf/rewrite.h"

namespace nfpark::nf {

bool Nat::allocate(uint32_t src_addr, Mapping& m, Nanos now) {
  const size_t n = pools_.size();
  if (n == 0) return false;
  const size_t pref = addr_hash(src_addr) % n;  // RFC 4787 REQ-2: paired pooling
  size_t a = pref;
  for (size_t i = 0; i < n && pools_[a].count == 0; ++i) a = (a + 1) % n;
  if (pools_[a].count == 0) {
    if (!reclaim(pref, now)) return false;
    a = pref;
  }
  Pool& p = pools_[a];
  m.ext_port = p.ring[p.head];
  p.head = (p.head + 1) % p.size;
  --p.count;
  m.addr_index = uint8_t(a);
  m.ext_addr = cfg_.external[a];
  return true;
}

void Nat::set_worker(uint32_t w, uint32_t n) {
  if (n <= 1) return;
  for (Pool& p : pools_) {
    uint32_t k = 0;
    for (uint32_t i = w; i < ports_per_addr_; i += n) p.ring[k++] = uint16_t(cfg_.port_min + i);
    p.head = 0;
    p.count = p.size = k;
  }
}

// Probes up to reclaim_probe allocated ports of address `a` for idle flows (each expiry returns
// its port to the pool through release()). The cursor persists, so repeated probes cover the
// whole range: an exhausted pool recovers as soon as one of its flows has expired.
bool Nat::reclaim(size_t a, Nanos now) {
  Pool& p = pools_[a];
  if (ports_per_addr_ == 0) return false;
  for (uint32_t i = 0; i < cfg_.reclaim_probe && p.count == 0; ++i) {
    uint16_t port = uint16_t(cfg_.port_min + p.probe);
    p.probe = (p.probe + 1) % ports_per_addr_;
    uint32_t s = reverse(a, port);
    if (s != kNoSlot && !table_.live(s, now)) ++reclaimed_;
  }
  return p.count > 0;
}

void Nat::release(const Mapping& m) {
  Pool& p = pools_[m.addr_index];
  p.ring[(p.head + p.count) % p.size] = m.ext_port;
  ++p.count;
  reverse(m.addr_index, m.ext_port) = kNoSlot;
}

// A table twice the size (at most max_flows_), every flow moved into it with its last-seen
// time; reverse entries follow their flow's new slot. Called between bursts.
void Nat::grow() {
  const size_t cap = std::min(max_flows_, 2 * capacity_);
  Table bigger(cap, cfg_.idle_timeout, Release{this});
  table_.for_each([&](const Table::Entry& e) {
    bool inserted = false;
    const uint32_t s = bigger.find_or_insert(e.key, bigger.hash(e.key), e.last_seen, inserted);
    if (s == Table::kNone) return release(e.value);  // both buckets full: not at 40% load
    bigger.at(s).value = e.value;
    reverse(e.value.addr_index, e.value.ext_port) = s;
  });
  expired_before_ += table_.expired_count();
  table_.swap(bigger);  // the old table's memory leaves with `bigger`
  capacity_ = cap;
  ++grown_;
}

}  // namespace nfpark::nf
