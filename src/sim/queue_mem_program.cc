#include "sim/queue_mem_program.h"

#include <algorithm>

namespace nfpark::sim {

namespace {
park::QueueMemConfig for_switch(park::QueueMemConfig c, const Topology& t) {
  c.ports = uint8_t(std::min<uint16_t>(t.traffic, 255));
  return c;
}
}  // namespace

QueueMemProgram::QueueMemProgram(Switch& sw, const Topology& t, const park::QueueMemConfig& c,
                                 Picos poll)
    : sw_(sw), topo_(t), qm_(for_switch(c, t)), hq_(c.queues), poll_every_(poll) {
  qm_.store().bind(qm_.config().ports, qm_.config().queues,
                   uint32_t(qm_.config().ports) * qm_.config().slices, qm_.config().batch);
  qm_.store().set_reconstruct(
      [this](const SwitchQueueStore::Leaving& l) { qm_.reconstruct(l, to_out_); });
  set_tie(Rank::kTimer, 0);  // the timer's pass comes after the instant's packet passes
}

bool QueueMemProgram::reserve(std::string& err) {
  const auto& c = qm_.config();
  if (std::string e = c.validate(); !e.empty()) return err = e, false;
  if (uint32_t(c.queues) + 1 > sw_.config().queues)
    return err = "queuemem.queues (" + std::to_string(c.queues) +
                 ") + the header queue exceed [switch] queues (" +
                 std::to_string(sw_.config().queues) + "): lower queues or raise [switch] queues",
           false;
  if (c.batch > 32) return err = "queuemem.batch must be <= 32 in the simulator", false;
  if (topo_.traffic > 255) return err = "queuemem: at most 255 traffic ports", false;
  return sw_.reserve_registers(uint64_t(c.header_array) * kEntryBytes,
                               "QUEUE-MEM's header array (" + std::to_string(c.header_array) +
                                   " entries x " + std::to_string(kEntryBytes) + " B)",
                               err);
}

// Packets QueueMem released (whole packets) go out through their port's header queue.
void QueueMemProgram::flush_released(Pass& pass, Packet* except) {
  for (size_t i = 0; i < to_out_.size(); ++i)
    if (to_out_[i] != except) {
      to_out_[i]->user = kReleased;  // leaves as it is at its egress pass
      pass.enqueue(to_out_[i], to_out_[i]->out_port, hq_);
    }
  to_out_.clear();
}

void QueueMemProgram::poll(Pass& pass) {
  const Picos now = pass.now();
  if (last_poll_ >= 0 && now - last_poll_ < poll_every_) return;
  last_poll_ = now;
  qm_.poll(to_nanos(now), to_out_, true);
  // The NF side holds nothing once nothing went to it nor came back for lost_after (far above
  // its latency) while batches wait: every header not back is lost.
  const Picos quiet = qm_.config().lost_after * kNs;
  if (qm_.paused_queues() > 0 && now - last_back_ >= quiet && now - last_sent_ >= quiet) {
    ++nf_idle_calls_;
    qm_.nf_idle(to_out_);
  }
  flush_out(pass);
}

void QueueMemProgram::arm() {
  if (armed_) return;
  armed_ = true;
  sw_.engine().schedule(sw_.engine().now() + poll_every_, this);
}

void QueueMemProgram::on_event(uint64_t) {  // the timer: a pass of its own (no packet)
  armed_ = false;
  Pass pass(sw_, Pass::Kind::kIngress, topo_.recirc_port());
  qm_.store().begin(pass);
  last_poll_ = -1;
  poll(pass);
  qm_.store().issue_resume(pass);
  qm_.store().end();
  sw_.commit(pass);
  if (qm_.paused_queues() > 0 || qm_.store().resumes_waiting()) arm();
}

void QueueMemProgram::ingress(Pass& pass, Packet* p) {
  const uint16_t in = pass.port();
  qm_.store().begin(pass);
  if (topo_.is_nf_port(in)) {  // a header (or whole packet) back: to its port's header queue
    p->user = 0;
    pass.enqueue(p, p->out_port, hq_);
  } else {
    poll_if_due(pass);
    to_nf_.clear();
    if (qm_.split(p, uint8_t(p->out_port), to_nf_, to_out_)) {
      for (size_t i = 0; i < to_nf_.size(); ++i) {
        pass.enqueue(to_nf_[i], topo_.nf_port_of(to_nf_[i]), 0);
        last_sent_ = pass.now();
      }
    } else {
      ++refused_dropped_;
      p->pool()->free(p);
    }
    to_nf_.clear();
    flush_out(pass);
    arm();
  }
  qm_.store().issue_resume(pass);
  qm_.store().end();
}

bool QueueMemProgram::egress(Pass& pass, Packet* p) {
  const uint16_t port = pass.port();
  if (port >= topo_.traffic) return true;  // to an NF server
  qm_.store().begin(pass);
  bool send;
  if (p->queue == hq_ && p->user == kReleased) {  // a whole packet QueueMem released
    send = true;
  } else if (p->queue == hq_) {  // back from the NF: QueueMem stores it, or it leaves whole
    last_back_ = pass.now();
    const auto& c = qm_.counters();
    const uint64_t stored_before = c.headers_returned, drops_before = c.packet_drops();
    qm_.merge(p, 0, to_out_);
    send = false;
    for (size_t i = 0; i < to_out_.size(); ++i) send |= to_out_[i] == p;
    if (!send && c.headers_returned != stored_before && c.packet_drops() == drops_before)
      qm_.store().stored();
    flush_out(pass, send ? p : nullptr);
  } else {
    const uint32_t q = uint32_t(port) * hq_ + p->queue;
    send = qm_.store().dequeued(qm_, q, p, to_out_);
    flush_out(pass, send ? p : nullptr);
  }
  qm_.store().issue_resume(pass);
  qm_.store().end();
  return send;
}

void QueueMemProgram::tail_dropped(Packet* p) {
  if (p->user == SwitchQueueStore::kHeld)
    qm_.store().tail_dropped(p);
  else
    p->pool()->free(p);
}

void QueueMemProgram::drain() {
  // The run ended with every device idle: what still waits is released, as the control plane
  // would, and the switch drains it.
  Pass pass(sw_, Pass::Kind::kIngress, topo_.recirc_port());
  qm_.store().begin(pass);
  qm_.drain(to_out_);
  flush_out(pass);
  qm_.store().end();
  sw_.commit(pass);
  qm_.store().resume_all(sw_);
  armed_ = true;  // no more timer
  sw_.engine().run();
}

uint64_t QueueMemProgram::drops() const {
  return qm_.counters().packet_drops() + store().leaked() + refused_dropped_;
}

void QueueMemProgram::drop_reasons(const CounterSink& s) const {
  qm_.counters().drop_reasons(s);
  s("leaked", store().leaked());
  s("refused", refused_dropped_);
}

void QueueMemProgram::report(const CounterSink& s) const {
  qm_.report([&](std::string_view k, uint64_t v) { s("queuemem." + std::string(k), v); });
  s("queuemem.leaked", store().leaked());
  s("queuemem.afc_pause_refused", store().pause_refused());
  s("queuemem.refused_dropped", refused_dropped_);
  s("queuemem.nf_idle_calls", nf_idle_calls_);
  s("queuemem.paused_queues_at_exit", qm_.paused_queues());
}

}  // namespace nfpark::sim
