#include "sim/switch.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace nfpark::sim {

Picos Pass::now() const {
  return sw_.engine().now();
}

void Pass::add(Packet* p, uint16_t port, uint16_t queue, Action a) {
  assert(n_ < pending_.size() && "a pass queues at most 48 packets");
  pending_[n_++] = Pending{p, port, queue, a};
}

void Pass::enqueue(Packet* p, uint16_t port, uint16_t queue) {
  assert(port < sw_.ports() && queue < sw_.port(port).queues());
  add(p, port, queue, Action::kEnqueue);
}

bool Pass::mirror(const Packet* p, uint16_t port, uint16_t queue, uint32_t max_len) {
  Packet* c = sw_.mirror_copy(p, max_len);
  if (!c) return false;
  add(c, port, queue, Action::kEnqueue);
  return true;
}

void Pass::resubmit(Packet* p) {
  add(p, port_, 0, Action::kResubmit);
}
void Pass::recirculate(Packet* p) {
  add(p, sw_.recirc_port(), 0, Action::kRecirculate);
}

bool Pass::afc(uint16_t port, uint16_t queue, bool pause) {
  if (afc_set_) {  // one command per pipeline pass
    sw_.note_afc_refused();
    return false;
  }
  afc_set_ = true;
  afc_port_ = port;
  afc_queue_ = queue;
  afc_pause_ = pause;
  return true;
}

Switch::Switch(Engine& e, const SwitchConfig& c)
    : buffer_bytes_(c.buffer_bytes),
      queue_limit_(c.queue_limit_bytes),
      cell_(c.cell_bytes),
      e_(e),
      dt_(c.dt_alpha, c.buffer_bytes),
      egress_after_(c.egress_latency + c.link_delay),
      ingress_latency_(c.ingress_latency),
      cfg_(c) {
  const uint16_t n = ports();
  for (uint16_t i = 0; i <= n; ++i) {
    const bool recirc = i == n;
    ports_.push_back(std::make_unique<EgressPort>(*this, i,
                                                  recirc ? cfg_.recirc_gbps : cfg_.port_gbps[i],
                                                  recirc ? 1 : cfg_.queues, cfg_.priority));
    auto in = std::make_unique<IngressPort>();
    in->s = this;
    in->port = i;
    ingress_pipes_.push_back(std::make_unique<Pipe>(e_, in.get(), Rank::kIngress, i));
    in_.push_back(std::move(in));
  }
  ports_[n]->connect(this, n);  // the recirculation port loops back into ingress
  resubmitter_.s = this;
  resubmit_ = std::make_unique<Pipe>(e_, &resubmitter_, Rank::kIngress, n + 1u);
}

void Switch::arrive(Packet* p, Picos at, uint16_t link) {
  EgressPort& port = *ports_[link];
  ++port.counters().rx_packets;
  port.counters().rx_bytes += p->len;
  ingress_pipes_[link]->push(p, at + ingress_latency_);
}

void Switch::ingress(Packet* p, uint16_t port) {
  Pass pass(*this, Pass::Kind::kIngress, port);
  program_->ingress(pass, p);
  commit(pass);
}

void Switch::Resubmitter::receive(Packet* p) {
  const uint16_t port = s->resubmit_port_[s->resubmit_head_++];
  if (s->resubmit_head_ == s->resubmit_port_.size()) {
    s->resubmit_port_.clear();
    s->resubmit_head_ = 0;
  }
  s->ingress(p, port);
}

void Switch::apply_afc(const Pass& pass) {
  ++ctr_.afc_commands;
  EgressPort& port = *ports_[pass.afc_port_];
  if (pass.kind_ == Pass::Kind::kIngress) {
    port.set_paused(pass.afc_queue_, pass.afc_pause_);  // the ingress deparser is now
  } else {
    const uint64_t arg = 1 + (uint64_t(pass.afc_queue_) << 1 | (pass.afc_pause_ ? 1 : 0));
    e_.schedule_tie(e_.now() + cfg_.egress_latency, sim::tie(Rank::kAfc, pass.afc_port_), &port,
                    arg);
  }
}

void Switch::commit_actions(Pass& pass) {
  if (pass.afc_set_) apply_afc(pass);
  for (uint8_t i = 0; i < pass.n_; ++i) {
    const Pass::Pending& a = pass.pending_[i];
    switch (a.what) {
      case Pass::Action::kEnqueue:
        admit(a.p, a.port, a.queue);
        break;
      case Pass::Action::kResubmit:
        ++ctr_.resubmitted;
        resubmit_port_.push_back(a.port);
        resubmit_->push(a.p, e_.now() + cfg_.ingress_latency);
        break;
      case Pass::Action::kRecirculate:
        ++ctr_.recirculated;
        admit(a.p, recirc_port(), 0);
        break;
    }
  }
  pass.n_ = 0;
}

void Switch::note_unsettled(EgressPort* port) {
  if (std::find(unsettled_.begin(), unsettled_.end(), port) == unsettled_.end())
    unsettled_.push_back(port);
}

void Switch::settle_trains() {
  for (size_t i = 0; i < unsettled_.size();) {
    if (unsettled_[i]->settle()) {
      ++i;
    } else {
      unsettled_[i] = unsettled_.back();
      unsettled_.pop_back();
    }
  }
}

void Switch::settle_all() {
  assert(e_.pending() == 0);
  for (EgressPort* p : unsettled_) p->settle(kNever);
  unsettled_.clear();
}

void Switch::admit(Packet* p, uint16_t port, uint16_t queue) {
  settle();  // the trains' dequeues that happened before this admission (egress_port.h)
  EgressPort& ep = *ports_[port];
  const uint64_t c = cells(p->len);
  if (buffer_ + c > buffer_bytes_) {
    ++ctr_.drop_buffer_full;
    program_->tail_dropped(p);
    return;
  }
  if (queue_limit_ && ep.queued_bytes(queue) + c > queue_limit_) {
    ++ctr_.drop_queue_limit;
    program_->tail_dropped(p);
    return;
  }
  if (dt_.above(ep.queued_bytes(queue) + c, buffer_bytes_ - buffer_)) {
    ++ctr_.drop_queue_threshold;
    program_->tail_dropped(p);
    return;
  }
  buffer_ += c;
  peak_ = std::max(peak_, buffer_);
  interval_peak_ = std::max(interval_peak_, buffer_);
  ep.enqueue(p, queue);
}

Packet* Switch::mirror_copy(const Packet* p, uint32_t max_len) {
  Packet* c = p->pool()->alloc();
  if (!c) {
    ++ctr_.mirror_no_buffer;
    return nullptr;
  }
  c->len = std::min(p->len, max_len);
  c->head = std::min(p->head, c->len);
  std::memcpy(c->data(), p->data(), c->head);
  c->seq = p->seq;
  c->flow = p->flow;
  c->t_in = p->t_in;
  c->in_port = p->in_port;
  c->out_port = p->out_port;
  ++ctr_.mirrored;
  return c;
}

bool Switch::reserve_registers(uint64_t bytes, const std::string& what, std::string& err) {
  if (registers_ + bytes > cfg_.register_bytes) {
    err = what + " needs " + std::to_string(bytes) + " bytes of switch registers, " +
          std::to_string(cfg_.register_bytes - registers_) +
          " are left of [switch] register_mb: reserve less or raise register_mb";
    return false;
  }
  registers_ += bytes;
  return true;
}

void Switch::report(const CounterSink& s) const {
  s("switch.drop_buffer_full", ctr_.drop_buffer_full);
  s("switch.drop_queue_limit", ctr_.drop_queue_limit);
  s("switch.drop_queue_threshold", ctr_.drop_queue_threshold);
  s("switch.afc_commands", ctr_.afc_commands);
  s("switch.afc_refused", ctr_.afc_refused);
  s("switch.mirrored", ctr_.mirrored);
  s("switch.mirror_no_buffer", ctr_.mirror_no_buffer);
  s("switch.resubmitted", ctr_.resubmitted);
  s("switch.recirculated", ctr_.recirculated);
  s("switch.registers_bytes", registers_);
  s("switch.peak_buffer_bytes", peak_);
}

}  // namespace nfpark::sim
