#include "sim/egress_port.h"

#include <algorithm>
#include <cassert>
#include <map>

#include "sim/switch.h"

namespace nfpark::sim {

EgressPort::EgressPort(Switch& s, uint16_t index, double gbps, uint16_t queues,
                       const std::vector<uint8_t>& priority)
    : sw_(s), index_(index), gbps_(gbps), nq_(queues) {
  assert(queues >= 1 && queues <= 64);
  set_tie(Rank::kPortMac, index);  // (delayed AFC commands come at Rank::kAfc: Switch::apply_afc)
  std::map<uint8_t, uint64_t, std::greater<>> by_level;
  for (uint16_t i = 0; i < queues; ++i)
    by_level[i < priority.size() ? priority[i] : 0] |= 1ull << i;
  levels_ = uint8_t(by_level.size());
  top_mask_ = by_level.begin()->second;
  size_t l = 0;
  for (auto it = std::next(by_level.begin()); it != by_level.end(); ++it)
    more_[l++].mask = it->second;
}

void EgressPort::enqueue(Packet* p, uint16_t queue) {
  Queue& q = q_[queue];
  p->next = nullptr;
  p->queue = queue;
  if (q.tail) {
    q.tail->next = p;
  } else {
    q.head = p;
    eligible_ |= (1ull << queue) & ~paused_;
  }
  q.tail = p;
  ++q.pkts;
  q.bytes += p->len;
  wake();
}

void EgressPort::set_paused(uint16_t queue, bool paused) {
  assert(!train_ && "a train's port is never paused (SwitchProgram::egress_train)");
  const uint64_t bit = 1ull << queue;
  if (paused) {
    paused_ |= bit;
    eligible_ &= ~bit;
    return;
  }
  paused_ &= ~bit;
  if (q_[queue].head) eligible_ |= bit;
  wake();
}

void EgressPort::wake() {
  if (event_pending_ || sending_ || !eligible_) return;
  if (sw_.engine().now() >= free_at_) return send_next();
  event_pending_ = true;
  sw_.engine().schedule(free_at_, this, 0);
}

void EgressPort::send_train() {
  sending_ = true;
  Engine& e = sw_.engine();
  Picos t = e.now();
  const Picos after = sw_.egress_after();
  for (int qi; (qi = pick()) >= 0;) {
    Packet* p = pop(qi);
    const Picos wire = serialization(p->len + kWireOverhead, gbps_);
    def_.push_back(Deferred{t, p->len, uint16_t(qi)});
    peer_->arrive(p, t + after + wire, link_);  // (egress: no effect, sent: egress_train)
    t += wire;
  }
  free_at_ = t;
  sending_ = false;
  if (unsettled()) sw_.note_unsettled(this);
}

bool EgressPort::settle(Picos until) {
  const Engine& e = sw_.engine();
  const uint64_t key = sim::tie(Rank::kPortMac, index_);
  while (def_head_ < def_.size() &&
         (def_[def_head_].at <= until || e.has_happened(def_[def_head_].at, key))) {
    const Deferred& d = def_[def_head_++];
    Queue& q = q_[d.queue];
    --q.pkts;
    q.bytes -= d.len;
    sw_.release_len(d.len);
    ++ctr_.tx_packets;
    ctr_.tx_bytes += d.len;
    if (sw_.in_window(d.at)) {
      ++ctr_.win_packets;
      ctr_.win_bytes += d.len;
    }
  }
  if (def_head_ < def_.size()) return true;
  def_.clear();
  def_head_ = 0;
  return false;
}

void EgressPort::send_next() {
  if (train_) return send_train();
  sending_ = true;
  for (;;) {
    const int qi = pick();
    if (qi < 0) break;
    Packet* p = pop(qi);
    Queue& q = q_[qi];
    --q.pkts;
    q.bytes -= p->len;
    sw_.release_cells(p);
    Pass pass(sw_, Pass::Kind::kEgress, index_);
    const bool send = sw_.run_egress(pass, p);
    sw_.commit(pass);
    if (!send) continue;  // dropped in the egress pipeline: no wire time
    Engine& e = sw_.engine();
    const Picos now = e.now();
    const Picos wire = serialization(p->len + kWireOverhead, gbps_);
    ++ctr_.tx_packets;
    ctr_.tx_bytes += p->len;
    if (sw_.in_window(now)) {
      ++ctr_.win_packets;
      ctr_.win_bytes += p->len;
    }
    free_at_ = now + wire;
    peer_->arrive(p, now + sw_.egress_after() + wire, link_);
    break;
  }
  sending_ = false;
  if (eligible_ && !event_pending_) {  // backlogged: decide again when the MAC is free
    event_pending_ = true;
    sw_.engine().schedule(std::max(free_at_, sw_.engine().now()), this, 0);
  }
}

void EgressPort::on_event(uint64_t arg) {
  if (arg) {  // a delayed AFC command: queue << 1 | pause, plus one
    set_paused(uint16_t((arg - 1) >> 1), (arg - 1) & 1);
    return;
  }
  event_pending_ = false;
  send_next();
}

}  // namespace nfpark::sim
