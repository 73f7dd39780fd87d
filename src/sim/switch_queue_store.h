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
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
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
  void leave(QM&, uint32_t q, const Leaving& l, park::Emitter<Packet*>&) {
    if (l.hdr) --stored_;
    if (l.pkt && l.pkt->user != kHeld) {  // tail-dropped (counted by the switch) or leaked
      --payloads_;
      l.pkt->pool->free(l.pkt);
      if (l.hdr) l.hdr->pool->free(l.hdr);
      return;
    }
    q_[q].pending.push_back(l);
  }
  // The batch of q (slice s) was released: it drains once the slice's earlier batches have.
  bool resume(uint32_t q, uint32_t s) {
    q_[q].slice = s;
    if (s >= slice_.size()) slice_.resize(s + 1);
    if (slice_[s].busy) {
      slice_[s].waiting.push_back(q);
      return false;
    }
    return start(q);
  }

  // A payload record left queue `q` of its port (egress). True: it goes out, rebuilt; packets
  // released behind it (whole packets) are in to_out.
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
    if (Q.head == Q.pending.size()) {  // drained: the slice's next batch may go
      Q.pending.clear();
      Q.head = 0;
      qm.queue_drained(q);
      Slice& sl = slice_[Q.slice];
      sl.busy = false;
      while (!sl.waiting.empty()) {
        const uint32_t next = sl.waiting.front();
        sl.waiting.pop_front();
        if (!start(next)) break;
        qm.queue_drained(next);  // it had no payload in the switch
      }
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
  // How a released packet that leaves outside a payload's egress pass (a whole packet ahead of
  // every payload of its batch) is handed to QueueMem::reconstruct.
  void set_reconstruct(std::function<void(const Leaving&)> f) { reconstruct_ = std::move(f); }
  void stored() { ++stored_; }

  uint64_t leaked() const { return leaked_; }
  uint64_t pause_refused() const { return pause_refused_; }
  uint64_t records_held() const { return payloads_ + stored_; }

 private:
  struct Queue {
    std::vector<Leaving> pending;  // released, in FIFO order; [head, end) still to leave
    size_t head = 0;
    uint32_t slice = 0;
  };
  struct Slice {
    bool busy = false;             // one of its batches is draining
    std::deque<uint32_t> waiting;  // released batches (queues) waiting for it, in order
  };
  // Queue q's turn to drain: whole packets ahead of its first payload leave now; true when
  // nothing of it is in the switch (free at once), else its resume is queued.
  bool start(uint32_t q) {
    Queue& Q = q_[q];
    while (Q.head < Q.pending.size() && !Q.pending[Q.head].pkt) reconstruct_(Q.pending[Q.head++]);
    if (Q.head == Q.pending.size()) {
      Q.pending.clear();
      Q.head = 0;
      return true;
    }
    slice_[Q.slice].busy = true;
    resumes_.push_back(q);
    return false;
  }
  uint16_t port(uint32_t q) const { return uint16_t(q / per_port_); }
  uint16_t local(uint32_t q) const { return uint16_t(q % per_port_); }

  Pass* pass_ = nullptr;
  uint16_t per_port_ = 1;
  std::vector<Queue> q_;
  std::vector<Slice> slice_;
  std::deque<uint32_t> resumes_;
  std::function<void(const Leaving&)> reconstruct_;
  uint64_t leaked_ = 0, pause_refused_ = 0;
  uint64_t payloads_ = 0, stored_ = 0;  // records QUEUE-MEM owns: payloads, stored headers
};

}  // namespace nfpark::sim
