// ReorderStats: what FlowReorder did, as plain counters (see docs/reframer.md for definitions).
// Invariant after every call: rx == tx + coalesced + held_now.
#pragma once
#include <algorithm>
#include <cstdint>

#include "core/counters.h"

namespace nfpark::reframe {

struct ReorderStats {
  uint64_t rx = 0;                 // packets pushed
  uint64_t tx = 0;                 // packets emitted
  uint64_t coalesced = 0;          // pure ACKs released as dropped by ACK coalescing
  uint64_t bypassed = 0;           // packets emitted without being buffered (incl. untracked)
  uint64_t held = 0;               // packets buffered
  uint64_t untracked = 0;          // no flow id, or no room in the flow table: forwarded at once
  uint64_t batches = 0;            // buffered batches flushed
  uint64_t batched_packets = 0;    // packets in those batches (== held once all are flushed)
  uint64_t flush_timeout = 0;      // batches flushed because t_buff elapsed
  uint64_t flush_full = 0;         // ... because the batch reached max_burst
  uint64_t flush_forced = 0;       // ... to respect max_held_packets / max_held_flows
  uint64_t flush_bypass = 0;       // ... because a bypass packet of the same flow arrived
  uint64_t flush_end = 0;          // ... by flush_all()
  uint64_t flush_barrier = 0;      // ... because a barrier packet arrived (fragment, ICMP error)
  uint64_t flows_new = 0;          // flow entries created (first packet, or after expiry/eviction)
  uint64_t flows_evicted = 0;      // idle entries evicted for room (history forgotten, no packet)
  uint64_t flows_expired = 0;      // idle entries recycled after flow_timeout
  uint64_t runs_in = 0;            // maximal same-flow runs in the input stream
  uint64_t runs_out = 0;           // maximal same-flow runs in the output stream
  uint64_t useless_wait_ns = 0;    // sum over flushed batches of (flush time - last arrival)
  uint64_t flush_self_bypass = 0;  // batches flushed when Reframer started passing through
  uint64_t passed = 0;             // packets passed through while self-bypassed (rx and tx)
  uint64_t bypass_periods = 0;     // times Reframer bypassed itself (self_bypass.h)
  uint64_t probes = 0;             // probe windows judged
  uint64_t last_gain_milli = 0;    // SLF_out / SLF_in of the last probe window, x 1000

  // SLF of the packets Reframer handled (not those it passed through while self-bypassed).
  double slf_in() const { return runs_in ? double(rx - passed) / double(runs_in) : 0.0; }
  double slf_out() const { return runs_out ? double(tx - passed) / double(runs_out) : 0.0; }
  double avg_batch() const { return batches ? double(batched_packets) / double(batches) : 0.0; }

  ReorderStats& operator+=(const ReorderStats& o) {
    rx += o.rx;
    tx += o.tx;
    coalesced += o.coalesced;
    bypassed += o.bypassed;
    held += o.held;
    untracked += o.untracked;
    batches += o.batches;
    batched_packets += o.batched_packets;
    flush_timeout += o.flush_timeout;
    flush_full += o.flush_full;
    flush_forced += o.flush_forced;
    flush_bypass += o.flush_bypass;
    flush_end += o.flush_end;
    flush_barrier += o.flush_barrier;
    flows_new += o.flows_new;
    flows_evicted += o.flows_evicted;
    flows_expired += o.flows_expired;
    runs_in += o.runs_in;
    runs_out += o.runs_out;
    useless_wait_ns += o.useless_wait_ns;
    flush_self_bypass += o.flush_self_bypass;
    passed += o.passed;
    bypass_periods += o.bypass_periods;
    probes += o.probes;
    last_gain_milli = std::max(last_gain_milli, o.last_gain_milli);
    return *this;
  }

  // Names as listed in docs/reframer.md; ratios are reported in thousandths (slf_in_milli...).
  void counters(const CounterSink& sink) const {
    sink("rx", rx);
    sink("tx", tx);
    sink("coalesced", coalesced);
    sink("bypassed", bypassed);
    sink("held", held);
    sink("untracked", untracked);
    sink("batches", batches);
    sink("batched_packets", batched_packets);
    sink("flush.timeout", flush_timeout);
    sink("flush.full", flush_full);
    sink("flush.forced", flush_forced);
    sink("flush.bypass", flush_bypass);
    sink("flush.end", flush_end);
    sink("flush.barrier", flush_barrier);
    sink("flush.self_bypass", flush_self_bypass);
    sink("flows.new", flows_new);
    sink("flows.evicted", flows_evicted);
    sink("flows.expired", flows_expired);
    sink("runs_in", runs_in);
    sink("runs_out", runs_out);
    sink("useless_wait_ns", useless_wait_ns);
    sink("self_bypass.passed", passed);
    sink("self_bypass.periods", bypass_periods);
    sink("self_bypass.probes", probes);
    sink("self_bypass.last_gain_milli", last_gain_milli);
    sink("slf_in_milli", uint64_t(slf_in() * 1000.0 + 0.5));
    sink("slf_out_milli", uint64_t(slf_out() * 1000.0 + 0.5));
    sink("avg_batch_milli", uint64_t(avg_batch() * 1000.0 + 0.5));
  }
};

}  // namespace nfpark::reframe
