// SwitchProgram and Pass: what runs in the switch model's pipelines (the "P4 program" of a mode)
// and what it may do during one pass of one packet.
//
// The switch calls ingress() at the end of a packet's ingress pipeline (its arrival + ingress
// latency) and egress() when the traffic manager dequeues it. The program decides through the
// Pass, as a P4 program sets intrinsic metadata; the switch carries the decisions out when the
// pass ends (the deparser), in this order: the AFC command, then the packets it queued.
//  - enqueue(p, port, queue): to the traffic manager (tail drop when the buffer is full). A pass
//    queues at most 48 packets (QUEUE-MEM releases up to a batch of whole packets at once).
//  - mirror(p, port, queue, max_len): a copy truncated to max_len bytes (truncating mirror).
//  - resubmit(p): p runs ingress again after another ingress latency (one pass more).
//  - recirculate(p): p goes out on the recirculation port (its bandwidth, the egress latency)
//    and comes back into ingress.
//  - afc(port, queue, pause): advanced flow control — pause or resume one queue. At most ONE
//    command per pass (a second is refused and counted: the program must resubmit), and it takes
//    effect at the deparser: at once for ingress (the pass ends where the packet entered the
//    queue), after the egress latency for egress. So a queue resumed by one packet and paused by
//    another keeps sending in between: batches leak if the logic is wrong.
// A packet a pass neither queues, resubmits nor recirculates is the program's: held (parked) or
// freed and counted by it.
#pragma once
#include <array>
#include <cstdint>

#include "core/counters.h"
#include "sim/packet.h"

namespace nfpark::sim {

class Switch;

class Pass {
 public:
  enum class Kind : uint8_t { kIngress, kEgress };
  Pass(Switch& s, Kind k, uint16_t port) : sw_(s), kind_(k), port_(port) {}
  Kind kind() const { return kind_; }
  uint16_t port() const { return port_; }  // ingress: the port it came in on; egress: going out
  Picos now() const;

  void enqueue(Packet* p, uint16_t port, uint16_t queue);
  bool mirror(const Packet* p, uint16_t port, uint16_t queue, uint32_t max_len);
  void resubmit(Packet* p);
  void recirculate(Packet* p);
  bool afc(uint16_t port, uint16_t queue, bool pause);
  bool afc_set() const { return afc_set_; }  // this pass has used its one AFC command

 private:
  friend class Switch;
  enum class Action : uint8_t { kEnqueue, kResubmit, kRecirculate };
  struct Pending {
    Packet* p;
    uint16_t port, queue;
    Action what;
  };
  Switch& sw_;
  Kind kind_;
  uint16_t port_;
  uint8_t n_ = 0;
  bool afc_set_ = false, afc_pause_ = false;
  uint16_t afc_port_ = 0, afc_queue_ = 0;
  std::array<Pending, 48> pending_;
  void add(Packet* p, uint16_t port, uint16_t queue, Action a);
};

class SwitchProgram {
 public:
  virtual ~SwitchProgram() = default;
  virtual void ingress(Pass& pass, Packet* p) = 0;
  // A packet the traffic manager dequeued. False: dropped here (freed and counted by the program).
  virtual bool egress(Pass& pass, Packet* p) {
    (void)pass;
    (void)p;
    return true;
  }
  // A hint: p (a traffic port's next frame, its parse and flow hash carried) enters ingress
  // `port` a frame from now. Brings in the state ingress() will read for it; changes nothing.
  virtual void prefetch_ingress(uint16_t port, Packet* p) {
    (void)port;
    (void)p;
  }
  // True when this program's egress pass on `port` has no effect and sends every frame, and the
  // program queues on one queue of it and never pauses it: the port may run trains
  // (egress_port.h).
  virtual bool egress_train(uint16_t port) const {
    (void)port;
    return false;
  }
  // End of run, after every device went idle: release or free what is still held (counted).
  virtual void drain() {}
  // Packets this program dropped, each counted once (for in = out + drops), and by reason.
  virtual uint64_t drops() const { return 0; }
  virtual void drop_reasons(const CounterSink& s) const { (void)s; }
  // NF drops that came back as drop notices and found their payload (not in drops(): the run
  // counts them as the NF's, "nf", as the dataplane's report_mode does).
  virtual uint64_t nf_drops_returned() const { return 0; }
  virtual void report(const CounterSink& s) const { (void)s; }
  virtual uint64_t held() const { return 0; }  // records it holds right now
  // The buffer tail-dropped p (the switch counted it): the program frees it, or keeps it when it
  // still owns it (QUEUE-MEM's payloads: its batch knows them).
  virtual void tail_dropped(Packet* p) { p->pool()->free(p); }
};

}  // namespace nfpark::sim
