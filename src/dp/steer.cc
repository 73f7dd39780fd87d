#include "dp/steer.h"

#include <rte_errno.h>

#include <cstring>

namespace nfpark::dp {

SteerRings::~SteerRings() {
  for (rte_ring* r : rings_) rte_ring_free(r);
}

bool SteerRings::create(uint16_t workers, int ports, std::string& err) {
  n_ = workers;
  ports_ = ports;
  rings_.assign(size_t(ports) * workers * workers, nullptr);
  for (int t = 0; t < ports; ++t)
    for (uint16_t a = 0; a < workers; ++a)
      for (uint16_t b = 0; b < workers; ++b) {
        if (a == b) continue;
        const std::string name =
            "steer" + std::to_string(t) + "_" + std::to_string(a) + "_" + std::to_string(b);
        rte_ring* r =
            rte_ring_create(name.c_str(), kSteerRing, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
        if (!r) {
          err = "cannot create the steering ring " + name + ": " + rte_strerror(rte_errno);
          return false;
        }
        rings_[(size_t(t) * n_ + a) * n_ + b] = r;
      }
  return true;
}

Steer::Steer(const Shard& shard, SteerRings& rings, uint16_t self)
    : shard_(shard),
      rings_(rings),
      self_(self),
      n_(rings.workers()),
      stage_(size_t(rings.ports()) * rings.workers()),
      staged_(size_t(rings.ports()) * rings.workers(), 0) {}

bool Steer::pass_over(int t) {
  bool empty = true;
  for (uint16_t to = 0; to < n_; ++to) {
    uint16_t& k = staged_[size_t(t) * n_ + to];
    if (!k) continue;
    rte_mbuf** s = stage_[size_t(t) * n_ + to].data();
    const unsigned put = rte_ring_sp_enqueue_burst(rings_.ring(t, self_, to),
                                                   reinterpret_cast<void* const*>(s), k, nullptr);
    steered += put;
    if (put < k) std::memmove(s, s + put, (k - put) * sizeof(rte_mbuf*));
    k = uint16_t(k - put);
    empty = empty && k == 0;
  }
  return empty;
}

bool Steer::staged() const {
  for (uint16_t k : staged_)
    if (k) return true;
  return false;
}

uint16_t Steer::rx(int t, Port& port, rte_mbuf** b, uint16_t n) {
  uint16_t got = 0;
  // 1. What the others passed over, round robin over them (fair under load).
  for (uint16_t i = 0; i < n_ && got < n; ++i) {
    const uint16_t from = uint16_t((next_from_ + i) % n_);
    if (from == self_) continue;
    got += uint16_t(rte_ring_sc_dequeue_burst(rings_.ring(t, from, self_),
                                              reinterpret_cast<void**>(b + got), n - got, nullptr));
  }
  next_from_ = uint16_t((next_from_ + 1) % n_);
  // 2. The own queue, once what waits to be passed over has gone (at most one burst staged).
  if (got == n || !pass_over(t)) return got;
  rte_mbuf* in[kBurst];
  const uint16_t k = port.rx(in, std::min<uint16_t>(uint16_t(n - got), kBurst));
  if (!k) return got;
  read_ += k;
  read.store(read_, std::memory_order_relaxed);
  for (uint16_t i = 0; i < k; ++i) {
    rte_mbuf* m = in[i];
    const uint32_t w = shard_.of(rte_pktmbuf_mtod(m, const uint8_t*), m->data_len);
    if (w == self_) {
      b[got++] = m;
    } else {
      const size_t s = size_t(t) * n_ + w;
      stage_[s][staged_[s]++] = m;
    }
  }
  pass_over(t);
  return got;
}

void Steer::take_rest(const std::function<void(int, rte_mbuf* const*, uint16_t)>& fn) {
  for (int t = 0; t < rings_.ports(); ++t)
    for (uint16_t w = 0; w < n_; ++w) {
      uint16_t& k = staged_[size_t(t) * n_ + w];
      if (k) fn(t, stage_[size_t(t) * n_ + w].data(), k);
      k = 0;
      if (w == self_) continue;
      rte_mbuf* b[kBurst];
      for (unsigned got;
           (got = rte_ring_sc_dequeue_burst(rings_.ring(t, w, self_), reinterpret_cast<void**>(b),
                                            kBurst, nullptr)) > 0;)
        fn(t, b, uint16_t(got));
    }
}

}  // namespace nfpark::dp
