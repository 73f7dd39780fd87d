// SwitchQueueStore: QUEUE-MEM's payload store in the simulator — the switch model's egress
// queues (the storage policy S of park::QueueMem, queue_mem_fifo_store.h says the contract).
//
// QueueMem decides; this only moves records through the switch, as the P4 program does:
//  pause(q)   the batch's HEAD pauses queue q from its own ingress pass (AFC, at the deparser,
//             before the payload enters the queue). Refused (a second command in the pass) is
//             counted: it never happens, since resumes are issued only when a pass has no command.
//  hold(q, p) the payload enters queue q of its output port (shared buffer, tail drop).
//  leave()    the batch was released: its packets are remembered in FIFO order.
//  resume(q, s) queue q may drain once the earlier batches of its slice s have drained (two
//             queues draining at once interleave round robin at the port, and a flow spread
//             over both would be reordered). Its turn: queued whole packets ahead of its first
//             payload leave at once (through the header queue, which outranks the payload
//             queues), one behind a payload right after that payload, so a flow keeps its
//             order; an AFC resume is queued and issued by the next pass that has no command of
//             its own (normally the header's egress pass that completed the batch, or the egress
//             pass of the slice's previous batch's last payload: effective the egress latency
//             later). q is not reused until its last payload is gone (QueueMem::queue_drained):
//             a batch resumed late can never release the next one.
//  dequeued() the traffic manager dequeued a payload of q (egress): QueueMem::reconstruct
//             rebuilds or drops it. A payload dequeued before its batch was released leaked:
//             it is dropped there (P4 PacketReconstruct: its id is not in the header array yet)
//             and counted; tests/sim/afc_batch_test.cc checks that it never happens here.
// A payload the buffer tail-dropped (Switch counts it) is forgotten when its batch leaves.
// Storage: flat, allocated once at bind() — each queue's released packets in its own `batch`
// places (a queue holds one batch at a time), and the FIFOs of released queues waiting for
// their slice and of queued resumes linked through the queues (a queue is in each at most once).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "core/hot_path.h"
#include "park/emitter.h"
#include "park/queue_mem_store.h"
#include "sim/switch.h"

namespace nfpark::sim {

class SwitchQueueStore {
 public:
  using Leaving = park::QueueMemLeaving<Packet*>;
  // record->user values while QUEUE-MEM owns a payload record
  static constexpr uint16_t kHeld = 0x5101, kTailDropped = 0x5102, kLeaked = 0x5103;

  // `slices`: QueueMem's slices in all (port * slices per port); `batch`: its batch size.
  void bind(uint32_t ports, uint16_t queues_per_port, uint32_t slices, uint16_t batch) {
    per_port_ = queues_per_port;
    batch_ = batch;
    q_.assign(size_t(ports) * queues_per_port, Queue{});
    pending_.resize(q_.size() * batch);
    slice_.assign(slices, Slice{});
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
  void leave(QM&, uint32_t q, const Leaving& l, park::Emitter<Packet*>&) {
    if (l.hdr) --stored_;
    if (l.pkt && l.pkt->user != kHeld) {  // tail-dropped (counted by the switch) or leaked
      --payloads_;
      l.pkt->pool()->free(l.pkt);
      if (l.hdr) l.hdr->pool()->free(l.hdr);
      return;
    }
    pending(q)[q_[q].end++] = l;
  }
  // The batch of q (slice s) was released: it drains once the slice's earlier batches have.
  bool resume(uint32_t q, uint32_t s) {
    q_[q].slice = s;
    Slice& sl = slice_[s];
    if (sl.busy) {
      q_[q].next = kNil;
      (sl.tail == kNil ? sl.head : q_[sl.tail].next) = q;
      sl.tail = q;
      return false;
    }
    return start(q);
  }

  // A payload record left queue `q` of its port (egress). True: it goes out, rebuilt; packets
  // released behind it (whole packets) are in to_out.
  template <class QM>
  bool dequeued(QM& qm, uint32_t q, Packet* p, park::Emitter<Packet*>& to_out) {
    Queue& Q = q_[q];
    Leaving* pend = pending(q);
    if (Q.head == Q.end || pend[Q.head].pkt != p) {
      ++leaked_;
      p->user = kLeaked;  // QueueMem still owns it: freed when its batch leaves
      return false;
    }
    --payloads_;
    const size_t before = to_out.size();
    qm.reconstruct(pend[Q.head++], to_out);
    const bool out = to_out.size() > before;  // rebuilt (else dropped and counted)
    while (Q.head < Q.end && !pend[Q.head].pkt) qm.reconstruct(pend[Q.head++], to_out);
    if (Q.head < Q.end) {  // the next payload of q leaves next: bring its record in
      prefetch_line(pend[Q.head].pkt);
    } else {  // drained: the slice's next batch may go
      Q.head = Q.end = 0;
      qm.queue_drained(q);
      Slice& sl = slice_[Q.slice];
      sl.busy = false;
      while (sl.head != kNil) {
        const uint32_t next = sl.head;
        sl.head = q_[next].next;
        if (sl.head == kNil) sl.tail = kNil;
        if (!start(next)) break;
        qm.queue_drained(next);  // it had no payload in the switch
      }
    }
    return out;
  }
  // Issues one queued resume if the pass has no AFC command yet.
  void issue_resume(Pass& pass) {
    if (resume_head_ == kNil || pass.afc_set()) return;
    const uint32_t q = pop_resume();
    pass.afc(port(q), local(q), false);
  }
  bool resumes_waiting() const { return resume_head_ != kNil; }
  // End of run: every queued resume at once (the control plane's job then).
  void resume_all(Switch& sw) {
    while (resume_head_ != kNil) {
      const uint32_t q = pop_resume();
      sw.port(port(q)).set_paused(local(q), false);
    }
  }
  void tail_dropped(Packet* p) { p->user = kTailDropped; }
  // How a released packet that leaves outside a payload's egress pass (a whole packet ahead of
  // every payload of its batch) is handed to QueueMem::reconstruct.
  void set_reconstruct(std::function<void(const Leaving&)> f) { reconstruct_ = std::move(f); }
  void stored() { ++stored_; }

  uint64_t leaked() const { return leaked_; }
  uint64_t pause_refused() const { return pause_refused_; }
  uint64_t records_held() const { return payloads_ + stored_; }

 private:
  static constexpr uint32_t kNil = ~0u;
  struct Queue {
    uint32_t head = 0, end = 0;  // its released packets: pending(q)[head, end) still to leave
    uint32_t slice = 0;
    uint32_t next = kNil;         // next queue waiting for the same slice
    uint32_t resume_next = kNil;  // next queued resume
  };
  struct Slice {
    bool busy = false;                  // one of its batches is draining
    uint32_t head = kNil, tail = kNil;  // released batches (queues) waiting for it, in order
  };
  Leaving* pending(uint32_t q) { return &pending_[size_t(q) * batch_]; }
  uint32_t pop_resume() {
    const uint32_t q = resume_head_;
    resume_head_ = q_[q].resume_next;
    if (resume_head_ == kNil) resume_tail_ = kNil;
    return q;
  }
  // Queue q's turn to drain: whole packets ahead of its first payload leave now; true when
  // nothing of it is in the switch (free at once), else its resume is queued.
  bool start(uint32_t q) {
    Queue& Q = q_[q];
    Leaving* pend = pending(q);
    while (Q.head < Q.end && !pend[Q.head].pkt) reconstruct_(pend[Q.head++]);
    if (Q.head == Q.end) {
      Q.head = Q.end = 0;
      return true;
    }
    slice_[Q.slice].busy = true;
    Q.resume_next = kNil;
    (resume_tail_ == kNil ? resume_head_ : q_[resume_tail_].resume_next) = q;
    resume_tail_ = q;
    return false;
  }
  uint16_t port(uint32_t q) const { return uint16_t(q / per_port_); }
  uint16_t local(uint32_t q) const { return uint16_t(q % per_port_); }

  Pass* pass_ = nullptr;
  uint16_t per_port_ = 1, batch_ = 1;
  std::vector<Queue> q_;
  std::vector<Leaving> pending_;  // [queue * batch + i]: what each queue releases, in order
  std::vector<Slice> slice_;
  uint32_t resume_head_ = kNil, resume_tail_ = kNil;  // queued AFC resumes, in order
  std::function<void(const Leaving&)> reconstruct_;
  uint64_t leaked_ = 0, pause_refused_ = 0;
  uint64_t payloads_ = 0, stored_ = 0;  // records QUEUE-MEM owns: payloads, stored headers
};

}  // namespace nfpark::sim
