// SwitchQueueStore: QUEUE-MEM's payload store in the simulator — the switch model's egress
// queues (the storage policy S of park::QueueMem, queue_mem_fifo_store.h says the contract).
//
// QueueMem decides; this only moves records through the switch, as the P4 program does:
//  pause(q)   the batch's HEAD pauses queue q from its own ingress pass (AFC, at the deparser,
//             before the payload enters the queue). Refused (a second command in the pass) is
//             counted: it never happens, since resumes are issued only when a pass has no command.
//  hold(q, p) the payload enters queue q of its output port (shared buffer, tail drop).
//  leave()    the batch was released: its packets are remembered in FIFO order; a queued whole
//             packet ahead of every payload leaves at once, one behind a payload leaves right
//             after that payload (the header queue outranks the payload queues), so a flow keeps
//             its order.
//  resume(q)  queue q may drain: an AFC resume is queued and issued by the next pass that has no
//             command of its own (normally the header's egress pass that completed the batch:
//             effective egress latency later). q is not reused until its last payload is gone
//             (QueueMem::queue_drained): a batch resumed late can never release the next one.
//  dequeued() the traffic manager dequeued a payload of q (egress): QueueMem::reconstruct
//             rebuilds or drops it. A payload dequeued before its batch was released leaked:
//             it is dropped there (P4 PacketReconstruct: its id is not in the header array yet)
//             and counted; tests/sim/afc_batch_test.cc checks that it never happens here.
// A payload the buffer tail-dropped (Switch counts it) is forgotten when its batch leaves.
#pragma once
#include <cstdint>
#include <deque>
#include <vector>

#include "park/emitter.h"
#include "park/queue_mem_store.h"
#include "sim/switch.h"

namespace nfpark::sim {

class SwitchQueueStore {
 public:
  using Leaving = park::QueueMemLeaving<Packet*>;
  // record->user values while QUEUE-MEM owns a payload record
  static constexpr uint16_t kHeld = 0x5101, kTailDropped = 0x5102, kLeaked = 0x5103;

  void bind(uint32_t ports, uint16_t queues_per_port) {
    per_port_ = queues_per_port;
    q_.assign(size_t(ports) * queues_per_port, Queue{});
  }
  void begin(Pass& p) { pass_ = &p; }
  void end() { pass_ = nullptr; }

  void pause(uint32_t q) {
    if (!pass_->afc(port(q), local(q), true)) ++pause_refused_;
  }
  void hold(uint32_t q, Packet* p) {
    p->user = kHeld;
    ++payloads_;
    pass_->enqueue(p, port(q), local(q));
  }
  template <class QM>
  void leave(QM& qm, uint32_t q, const Leaving& l, park::Emitter<Packet*>& to_out) {
    if (l.hdr) --stored_;
    if (l.pkt && l.pkt->user != kHeld) {  // tail-dropped (counted by the switch) or leaked
      if (l.pkt->user == kLeaked) ++leaked_resolved_;
      --payloads_;
      l.pkt->pool->free(l.pkt);
      if (l.hdr) l.hdr->pool->free(l.hdr);
      return;
    }
    Queue& Q = q_[q];
    if (!l.pkt && Q.pending.size() == Q.head) return qm.reconstruct(l, to_out);
    Q.pending.push_back(l);
  }
  bool resume(uint32_t q) {
    Queue& Q = q_[q];
    if (Q.pending.size() == Q.head) {  // no payload left in it: free now (stays paused: harmless)
      Q.pending.clear();
      Q.head = 0;
      return true;
    }
    resumes_.push_back(q);
    return false;
  }

  // A payload record left queue `q` of its port. True: it goes out (rebuilt); packets released
  // behind it are in to_out.
  template <class QM>
  bool dequeued(QM& qm, uint32_t q, Packet* p, park::Emitter<Packet*>& to_out) {
    Queue& Q = q_[q];
    if (Q.head == Q.pending.size() || Q.pending[Q.head].pkt != p) {
      ++leaked_;
      p->user = kLeaked;  // QueueMem still owns it: freed when its batch leaves
      return false;
    }
    --payloads_;
    const size_t before = to_out.size();
    qm.reconstruct(Q.pending[Q.head++], to_out);
    const bool out = to_out.size() > before;  // rebuilt (else dropped and counted)
    while (Q.head < Q.pending.size() && !Q.pending[Q.head].pkt)
      qm.reconstruct(Q.pending[Q.head++], to_out);
    if (Q.head == Q.pending.size()) {
      Q.pending.clear();
      Q.head = 0;
      qm.queue_drained(q);
    }
    return out;
  }
  // Issues one queued resume if the pass has no AFC command yet.
  void issue_resume(Pass& pass) {
    if (resumes_.empty() || pass.afc_set()) return;
    const uint32_t q = resumes_.front();
    resumes_.pop_front();
    pass.afc(port(q), local(q), false);
  }
  bool resumes_waiting() const { return !resumes_.empty(); }
  // End of run: every queued resume at once (the control plane's job then).
  void resume_all(Switch& sw) {
    for (uint32_t q : resumes_) sw.port(port(q)).set_paused(local(q), false);
    resumes_.clear();
  }
  void tail_dropped(Packet* p) { p->user = kTailDropped; }
  void stored() { ++stored_; }

  uint64_t leaked() const { return leaked_; }
  uint64_t pause_refused() const { return pause_refused_; }
  uint64_t records_held() const { return payloads_ + stored_; }

 private:
  struct Queue {
    std::vector<Leaving> pending;  // released, in FIFO order; [head, end) still to leave
    size_t head = 0;
  };
  uint16_t port(uint32_t q) const { return uint16_t(q / per_port_); }
  uint16_t local(uint32_t q) const { return uint16_t(q % per_port_); }

  Pass* pass_ = nullptr;
  uint16_t per_port_ = 1;
  std::vector<Queue> q_;
  std::deque<uint32_t> resumes_;
  uint64_t leaked_ = 0, leaked_resolved_ = 0, pause_refused_ = 0;
  uint64_t payloads_ = 0, stored_ = 0;  // records QUEUE-MEM owns: payloads, stored headers
};

}  // namespace nfpark::sim
