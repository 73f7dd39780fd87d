// Element:  QueueMemProgram — QUEUE-MEM as a switch program: park::QueueMem (src/park, the
//           dataplane's code) decides; payloads wait in the switch model's paused egress queues
//           (SwitchQueueStore), headers go to the NF and come back through the header queue.
// Ports:    traffic ports 0..T-1 (each an output port with `queues` payload queues + the header
//           queue, the port's last and highest-priority queue), NF ports T..T+N-1.
// Config:   park::QueueMemConfig ([queuemem]: queues (31, P4 N_PORT_QUEUES - 1), slices (15),
//           batch (20), header_array (94000), min_payload (64 B), lost_after_us, seal_after_us,
//           key); poll_ns (1000): how often the program's timer looks at time-driven decisions.
// Counters: queuemem.* (park::QueueMemCounters), queuemem.leaked, queuemem.afc_pause_refused,
//           queuemem.refused_dropped, queuemem.nf_idle_calls, queuemem.paused_queues_at_exit
//           (the dataplane's name, without its prefix); drops: QueueMem's own + leaked + refused
//           (a switch cannot hold a packet QueueMem refuses).
// Refs:     QUEUE-MEM §3.2–3.4; Queue-Mem/queue-mem-p4 (payload_split.p4, forward_header.p4,
//           store_header.p4, packet_reconstruct.p4); docs/sim.md §8; docs/queuemem.md.
//
// Theory of operation (one pipeline pass each)
//  Traffic ingress: QueueMem::split(p, output port). A split packet's payload (the original
//  record) enters queue q of its output port — a new batch's HEAD pauses q in the same pass,
//  at the deparser, so before its payload is queued — and its header (+ tag) goes to the NF
//  port (the truncating mirror's copy). Not split: whole to the NF. Refused (a flow with
//  payloads waiting and no room to queue behind them): a switch cannot hold it back, so it is
//  dropped and counted (QueueMem's back-pressure has no equivalent in an ASIC).
//  NF ingress: header or whole packet -> the header queue of its output port.
//  Header egress: QueueMem::merge stores it (header array, charged to the registers) and counts
//  it; the batch's last header releases the batch: AFC resume from this egress pass, effective
//  the egress latency later. Whole packets leave from here.
//  Payload egress: QueueMem::reconstruct rebuilds it with its header (id checked) or drops it.
//  Timer (poll_ns): QueueMem::poll (seal after seal_after, recovery on evidence after
//  lost_after), and QueueMem::nf_idle once no header came back for lost_after while batches
//  wait (the NF holds nothing then: the engine's "NF idle").
// Differences from the P4: queues are taken from a free list and reused only once drained, so a
// HEAD never meets its queue still paused and never needs the resubmit-and-resume recovery;
// recovery is QueueMem's (evidence on the NF's clock). docs/sim.md §8.
#pragma once
#include <string>

#include "park/emitter.h"
#include "park/queue_mem.h"
#include "sim/programs.h"
#include "sim/sim_buffer.h"
#include "sim/switch_queue_store.h"

namespace nfpark::sim {

class QueueMemProgram final : public SwitchProgram, private EventHandler {
 public:
  QueueMemProgram(Switch& sw, const Topology& t, const park::QueueMemConfig& c, Picos poll = kUs);
  // Checks the switch has the queues and charges the header array to its registers. False with
  // `err` set.
  bool reserve(std::string& err);
  void ingress(Pass& pass, Packet* p) override;
  bool egress(Pass& pass, Packet* p) override;
  // A traffic frame's flow summary and batches (QueueMem::prefetch_split), by the hash its
  // source carries (none: nothing).
  void prefetch_ingress(uint16_t port, Packet* p) override {
    if (topo_.is_nf_port(port)) return;
    if (const uint64_t h = p->key_hash()) qm_.prefetch_split(uint8_t(p->out_port), h);
  }
  // The NF ports: egress sends every header as it is, on queue 0, never paused.
  bool egress_train(uint16_t port) const override { return topo_.is_nf_port(port); }
  void tail_dropped(Packet* p) override;
  void drain() override;
  uint64_t drops() const override;
  void drop_reasons(const CounterSink& s) const override;
  uint64_t nf_drops_returned() const override { return qm_.counters().nf_drops_returned(); }
  void report(const CounterSink& s) const override;
  uint64_t held() const override { return store().records_held(); }
  const park::QueueMemCounters& counters() const { return qm_.counters(); }
  uint64_t leaked() const { return store().leaked(); }
  uint16_t header_queue() const { return hq_; }
  // Bytes of registers a header-array entry takes (P4: 15 blocks x 4 B + the id).
  static constexpr uint64_t kEntryBytes = 64;
  // record->user of a packet QueueMem released into the header queue (not a header to merge)
  static constexpr uint16_t kReleased = 0x5104;

 private:
  using QM = park::QueueMem<SimBuffer, SwitchQueueStore>;
  const SwitchQueueStore& store() const { return const_cast<QM&>(qm_).store(); }
  void on_event(uint64_t arg) override;
  void poll(Pass& pass);
  // The packet passes' poll: only when poll_every_ has passed since the last one (inline: a
  // traffic packet's ingress pays one compare, not a call).
  void poll_if_due(Pass& pass) {
    if (last_poll_ < 0 || sw_.engine().now() - last_poll_ >= poll_every_) poll(pass);
  }
  // Queues what QueueMem released (to_out_) but `except`, then empties it. Inline for the passes
  // that released nothing but `except` (most of them).
  void flush_out(Pass& pass, Packet* except = nullptr) {
    if (to_out_.empty()) return;
    if (to_out_.size() == 1 && to_out_[0] == except) return to_out_.clear();
    flush_released(pass, except);
  }
  void flush_released(Pass& pass, Packet* except);
  void arm();

  Switch& sw_;
  Topology topo_;
  QM qm_;
  uint16_t hq_;  // the header queue of every traffic port
  Picos poll_every_;
  park::Emitter<Packet*> to_nf_{64}, to_out_{64};
  Picos last_poll_ = -1, last_back_ = 0, last_sent_ = 0;
  bool armed_ = false;
  uint64_t refused_dropped_ = 0, nf_idle_calls_ = 0;
};

}  // namespace nfpark::sim
