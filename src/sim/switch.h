// Element:  Switch — an RMT switch model: ports at line rate, ingress and egress pipelines with
//           their latency, a traffic manager with per-port egress queues in one shared buffer,
//           advanced flow control, a truncating mirror, resubmit and recirculation, a register
//           memory budget. A SwitchProgram (switch_program.h) decides what each packet does.
// Ports:    0..N-1 (SwitchConfig::port_gbps), each full duplex: arrive() on the ingress side,
//           connect(peer) on the egress side; port N is the internal recirculation port.
// Config:   SwitchConfig (switch_config.h): presets tofino1 (20 MB) and tofino2 (64 MB).
// Time:     events only: ingress pipe per port (one event for its head), one per port MAC
//           decision (or per train, egress_port.h), one per delayed AFC command; ties at one
//           instant in the canonical order (sim/tie.h).
// Counters: drops.{buffer_full, queue_limit, queue_threshold}, afc.{commands,refused}, mirrored,
//           resubmitted,
//           recirculated, per port rx/tx packets and bytes; peak buffer bytes.
// Refs:     QUEUE-MEM §3.2 (AFC acts at the deparsers, once per pipeline pass), App. C;
//           PayloadPark §2 (register API, recirculation).
//
// Theory of operation
//  A packet arriving on port i (last bit at t) leaves the ingress pipeline at t + ingress latency
//  and runs the program's ingress. Packets it queues are admitted to the shared buffer in cells
//  (ceil(len / cell) * cell bytes); a packet that does not fit, or would take its queue over
//  queue_limit or past the dynamic threshold (dt_alpha x the free buffer), is dropped (tail
//  drop). The port's MAC dequeues by strict priority
//  (egress_port.h), runs the program's egress, and the frame reaches the peer egress latency +
//  (len + 24) * 8 / rate + link delay later; its cells are freed at the dequeue.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "sim/dynamic_threshold.h"
#include "sim/egress_port.h"
#include "sim/engine.h"
#include "sim/pipe.h"
#include "sim/switch_config.h"
#include "sim/switch_program.h"

namespace nfpark::sim {

// The buffer's allocation unit: round_up(len) = ceil(len / bytes) * bytes, by a multiply and a
// shift instead of a division below 2^16 (exact there for cells < 2^15: with m = ceil(2^32 / d),
// n * m / 2^32 exceeds n / d by less than 1 / d when n * (m * d - 2^32) < 2^32).
struct CellSize {
  explicit CellSize(uint32_t b)
      : inv(((uint64_t(1) << 32) + (b ? b : 1) - 1) / (b ? b : 1)),
        bytes(b ? b : 1),
        fast(bytes < (1u << 15)) {}
  uint64_t round_up(uint32_t len) const {
    const uint64_t n = uint64_t(len) + bytes - 1;
    return (fast && n < (1u << 16) ? (n * inv) >> 32 : n / bytes) * bytes;
  }
  uint64_t inv;
  uint32_t bytes;
  bool fast;
};

struct SwitchCounters {
  uint64_t drop_buffer_full = 0, drop_queue_limit = 0, drop_queue_threshold = 0;
  uint64_t afc_commands = 0, afc_refused = 0;
  uint64_t mirrored = 0, mirror_no_buffer = 0, resubmitted = 0, recirculated = 0;
  uint64_t drops() const { return drop_buffer_full + drop_queue_limit + drop_queue_threshold; }
};

// Layout: the buffer's state and limits sit in the line after the vtable, the settle check, the
// threshold, the program and the engine in the next (every admission and dequeue reads them; at
// 1.4 Tbps the switch is evicted from L1 between two packets, docs/sim.md §9), the rest after.
class alignas(64) Switch final : public PortPeer {
 public:
  Switch(Engine& e, const SwitchConfig& c);
  Switch(const Switch&) = delete;
  Switch& operator=(const Switch&) = delete;

  void set_program(SwitchProgram* p) { program_ = p; }
  Engine& engine() { return e_; }
  const SwitchConfig& config() const { return cfg_; }
  uint16_t ports() const { return uint16_t(cfg_.port_gbps.size()); }
  uint16_t recirc_port() const { return ports(); }
  EgressPort& port(uint16_t i) { return *ports_[i]; }
  const EgressPort& port(uint16_t i) const { return *ports_[i]; }
  void connect(uint16_t port, PortPeer* peer, uint16_t link) { ports_[port]->connect(peer, link); }

  // A packet whose last bit reaches ingress port `link` at `at` (from a link).
  void arrive(Packet* p, Picos at, uint16_t link) override;
  // Runs ingress for p on `port` now (a caller that already waited the ingress latency).
  void ingress(Packet* p, uint16_t port);
  // A hint (SwitchProgram::prefetch_ingress): p enters `port` a frame from now.
  void prefetch_ingress(uint16_t port, Packet* p) { program_->prefetch_ingress(port, p); }

  // Register memory for a program: false (and `err` says why and how to fix it) past the budget.
  bool reserve_registers(uint64_t bytes, const std::string& what, std::string& err);
  uint64_t registers_used() const { return registers_; }

  // Applies the ports' trains' deferred dequeues that have happened by now (egress_port.h):
  // before anything reads the buffer, the queues' bytes or the ports' tx counters.
  void settle() {
    if (!unsettled_.empty()) settle_trains();
  }
  // The engine is idle (nothing pending): every frame a train decided has left, as its own
  // decision's event would have run; applies them all.
  void settle_all();
  uint64_t buffer_used() {
    settle();
    return buffer_;
  }
  uint64_t buffer_peak() const { return peak_; }
  // Peak since the last call (for per-interval series).
  uint64_t take_interval_peak() {
    settle();
    const uint64_t p = interval_peak_;
    interval_peak_ = buffer_;
    return p;
  }
  const SwitchCounters& counters() const { return ctr_; }
  void report(const CounterSink& s) const;
  // Measurement window for the ports' win_* counters.
  void set_window(Picos from, Picos to) {
    win_from_ = from;
    win_to_ = to;
  }
  bool in_window(Picos t) const { return t >= win_from_ && t < win_to_; }
  // egress latency + link delay: from a frame's dequeue to its arrival, beside its wire time
  Picos egress_after() const { return egress_after_; }

  // Used by Pass and EgressPort. A pass that queued nothing and sent no AFC command costs no call.
  void commit(Pass& pass) {
    if (pass.n_ != 0 || pass.afc_set_) commit_actions(pass);
  }
  void release_cells(const Packet* p) { buffer_ -= cells(p->len); }
  void release_len(uint32_t len) { buffer_ -= cells(len); }
  void note_unsettled(EgressPort* port);
  bool run_egress(Pass& pass, Packet* p) { return program_->egress(pass, p); }
  Packet* mirror_copy(const Packet* p, uint32_t max_len);
  void note_afc_refused() { ++ctr_.afc_refused; }

 private:
  struct IngressPort final : Receiver {
    Switch* s;
    uint16_t port;
    void receive(Packet* p) override { s->ingress(p, port); }
  };
  uint64_t cells(uint32_t len) const { return cell_.round_up(len); }
  void commit_actions(Pass& pass);
  void admit(Packet* p, uint16_t port, uint16_t queue);
  void apply_afc(const Pass& pass);

  // first line (with the vtable): the buffer
  uint64_t buffer_ = 0, peak_ = 0, interval_peak_ = 0;
  uint64_t buffer_bytes_;  // cfg_.buffer_bytes
  uint64_t queue_limit_;   // cfg_.queue_limit_bytes
  CellSize cell_;
  // second line
  Engine& e_;
  SwitchProgram* program_ = nullptr;
  std::vector<EgressPort*> unsettled_;  // ports with deferred dequeues
  DynamicThreshold dt_;                 // dt_alpha in integers, exactly as its double form
  // third line
  std::vector<std::unique_ptr<EgressPort>> ports_;  // + the recirculation port
  Picos win_from_ = 0, win_to_ = kNever;
  Picos egress_after_;     // cfg_.egress_latency + cfg_.link_delay
  Picos ingress_latency_;  // cfg_.ingress_latency
  // the rest
  SwitchConfig cfg_;
  std::vector<std::unique_ptr<IngressPort>> in_;      // + the recirculation port
  std::vector<std::unique_ptr<Pipe>> ingress_pipes_;  // + the recirculation port
  std::unique_ptr<Pipe> resubmit_;
  std::vector<uint16_t> resubmit_port_;  // FIFO of the ports resubmitted packets came in on
  size_t resubmit_head_ = 0;
  struct Resubmitter final : Receiver {
    Switch* s;
    void receive(Packet* p) override;
  } resubmitter_;
  void settle_trains();
  uint64_t registers_ = 0;
  SwitchCounters ctr_;
};

}  // namespace nfpark::sim
