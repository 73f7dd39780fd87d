#include "dp/switch_loop.h"

#include <algorithm>
#include <cstdio>

#include "dp/mbuf_ops.h"

namespace nfpark::dp {

SwitchLoop::SwitchLoop(const RunConfig& cfg, SwitchMode& mode, NfServer& server,
                       TrafficPorts& traffic, Port& sw_nf, Port& nf_side, Feeder& feeder,
                       Writer& out, NfThread& nft, const std::atomic<int>& stop)
    : cfg_(cfg),
      mode_(mode),
      server_(server),
      traffic_(traffic),
      sw_nf_(sw_nf),
      nf_side_(nf_side),
      feeder_(feeder),
      out_(out),
      nft_(nft),
      stop_(stop),
      live_(traffic.live()),
      external_nf_(cfg.role == Role::kSwitch),
      trace_time_(!live_) {
  to_nf_.reserve(8 * kBurst);
  to_out_.reserve(8 * kBurst);
}

run::End SwitchLoop::run() {
  start_ = clock_.now();
  const bool wire = input_done_ == nullptr;  // this lcore plays the wire (feeder, writer)
  if (wire) feeder_.start(start_);
  // How long nothing must move before the run is over: longer when the NF is another process,
  // and while the NF server delays packets (unless the run is stopping: then it releases them).
  const Nanos base_quiet = external_nf_ ? 200 * kMilli : 2 * kMilli;
  const Nanos delay_quiet = std::max<Nanos>(base_quiet, Nanos(cfg_.faults.delay_us * 3000));
  Nanos last_activity = start_, next_progress = start_ + 2 * kSecond, deadline = 0;
  run::End end = run::End::kInputDone;
  for (;;) {
    const Nanos now = clock_.now();
    if (!stopping_ && (stop_.load() != 0 || now - start_ > Nanos(cfg_.timeout_s * 1e9))) {
      stopping_ = true;  // stop the intake; what is in flight has kGrace to come back
      end = stop_.load() != 0 ? run::End::kSignal : run::End::kTimeout;
      deadline = now + kGrace;
      if (end_phase_ == 0) {
        end_step(end_phase_++, now);  // the NF server releases what it holds
        last_activity = now;
      }
    }
    uint32_t work = live_ || stopping_ || !wire ? 0 : feeder_.retry() + feeder_.feed(now);
    work += poll_mode(now);  // the mode's timers, and the time to_nf() stamps batches with
    work += to_nf();         // in this order: separate statements
    work += poll_server(now);
    work += from_nf();
    if (!live_ && wire) work += out_.drain();
    if (work || traffic_.backlogged() || sw_nf_.backlogged() || nf_side_.backlogged()) {
      last_activity = now;
      stall_phase_ = 0;
    }
    // Live ports have no end of input: they run until a signal, the timeout, or --idle-exit.
    const bool idle_exit = live_ && cfg_.idle_exit_s > 0 && seen_traffic_ &&
                           now - last_activity > Nanos(cfg_.idle_exit_s * 1e9);
    if (idle_exit && !stopping_) {
      stopping_ = true;
      end = run::End::kIdleExit;
    }
    const bool fed = wire ? feeder_.done() : input_done_->load(std::memory_order_acquire);
    const bool input_done = live_ ? stopping_ : fed || stopping_;
    const Nanos quiet = stopping_ ? base_quiet : delay_quiet;
    // Idle means: nothing moved for `quiet`, and no packet waits in a ring or a server's hands
    // (nor, unless stopping, in the traffic port's ring or refused by the mode).
    const bool nf_quiet = now - last_activity > quiet && sw_nf_.rx_pending() == 0 &&
                          (external_nf_ || nf_side_.rx_pending() == 0) &&
                          (!cfg_.nf_lcore || external_nf_ || nft_.idle());
    if (nf_quiet && refused() && !stopping_) {  // back-pressure and nothing moves
      stall_step(now);
      last_activity = now;
    }
    const bool idle = nf_quiet && (stopping_ || (traffic_.rx_pending() == 0 && !refused()));
    // The pool ran dry with a frame waiting (large frames take one mbuf per 2 KiB) and nothing
    // moves: what the NF server holds for later (Reframer, fault delays) waits for trace time
    // that only new input brings, so it is released now and the frame can enter.
    if (!live_ && wire && !input_done && idle && feeder_.starved() &&
        (cfg_.nf_lcore || server_.held())) {
      end_step(0, now);
      last_activity = now;
    }
    if (input_done && idle) {
      if (end_phase_ == 2) break;
      end_step(end_phase_++, now);
      last_activity = now;
    }
    if (deadline && now > deadline) break;  // cut: finish() settles the rest
    if (stats_ && stats_->due(now)) {
      LiveSample s;
      for (int t = 0; t < traffic_.size(); ++t) {
        s.in_packets += traffic_[t].rx_packets, s.in_bytes += traffic_[t].rx_bytes;
        s.out_packets += traffic_[t].tx_packets, s.out_bytes += traffic_[t].tx_bytes;
      }
      s.to_nf = sw_nf_.tx_packets, s.from_nf = sw_nf_.rx_packets, s.drops = mode_.drops();
      stats_->publish(now, std::move(s));
    }
    if (cfg_.progress && now > next_progress && !live_ && wire) {
      std::fprintf(stderr, "\rnfpark run: %llu packets in, %llu out, %.1f s",
                   (unsigned long long)feeder_.packets, (unsigned long long)out_.packets,
                   double(now - start_) / 1e9);
      next_progress = now + kSecond;
    }
  }
  return end;
}

void SwitchLoop::back_from_nf(rte_mbuf* const* pkts, uint16_t n) {
  if (!n) return;
  std::copy(pkts, pkts + n, b_);
  if (external_nf_)
    for (uint16_t i = 0; i < n; ++i) MbufMeta::seq(b_[i]) = MbufMeta::kUnknown;
  to_out_.clear();
  mode_.from_nf(b_, n, to_out_);
  traffic_.send(to_out_);
}

uint64_t SwitchLoop::finish(rte_ring* wire_in) {
  uint64_t abandoned = 0;
  auto free_all = [&](rte_mbuf* const* p, size_t n) {
    for (size_t i = 0; i < n; ++i) rte_pktmbuf_free(p[i]);
    abandoned += n;
  };
  // 1. On the way to the NF, not yet served: abandoned.
  auto to = sw_nf_.take_backlog();
  free_all(to.data(), to.size());
  if (!external_nf_) {
    if (!cfg_.nf_lcore) server_.flush(nf_side_, clock_.now());  // delayed, Reframer-held
    for (uint16_t n; (n = nf_side_.rx(b_, kBurst)) > 0;) free_all(b_, n);
  }
  // 2. On the way back: through the mode, as in the loop. A live NF link (another process) is
  // read a bounded number of times.
  for (int i = 0; i < (external_nf_ ? 64 : 1 << 30); ++i) {
    const uint16_t n = sw_nf_.rx(b_, kBurst);
    if (!n) break;
    sw_nf_.count_rx(b_, n);
    back_from_nf(b_, n);
  }
  if (!external_nf_) {
    auto back = nf_side_.take_backlog();
    for (size_t i = 0; i < back.size(); i += kBurst) {
      const uint16_t n = uint16_t(std::min<size_t>(kBurst, back.size() - i));
      sw_nf_.rx_packets += n;  // as if it had crossed the link
      for (uint16_t k = 0; k < n; ++k) sw_nf_.rx_bytes += back[i + k]->pkt_len;
      back_from_nf(back.data() + i, n);
    }
  }
  // 3. The mode's end steps, if the loop did not get to them.
  for (; end_phase_ < 2; ++end_phase_)
    if (end_phase_ == 1) {
      to_out_.clear();
      mode_.drain(to_out_);
      traffic_.send(to_out_);
    }
  // 4. The traffic side: what the mode refused and the switch never offered again, what the
  // feeder put on the wire but the switch never read, and what cannot leave a port.
  for (int t = 0; t < 2; ++t) {
    free_all(in_[t], refused_[t]);
    refused_[t] = 0;
  }
  while (wire_in) {
    const unsigned n =
        rte_ring_dequeue_burst(wire_in, reinterpret_cast<void**>(b_), kBurst, nullptr);
    if (!n) break;
    free_all(b_, n);
  }
  for (int i = 0; i < 1000 && !traffic_.flushed(); ++i)
    if (!live_) out_.drain();
  abandoned += traffic_.drop_backlog();
  return abandoned;
}

uint32_t SwitchLoop::to_nf() {
  uint32_t work = 0;
  for (int t = 0; t < traffic_.size() && !stopping_; ++t) {
    if (!sw_nf_.flush() || !traffic_.flushed()) break;
    rte_mbuf** b = in_[t];
    uint16_t n = refused_[t];  // what the mode refused last time goes first
    if (!n) {
      n = traffic_[t].rx(b, kBurst);
      if (!n) continue;
      traffic_[t].count_rx(b, n);
      traffic_.learn(t, b, n);
      if (live_) seen_traffic_ = true;
    }
    to_nf_.clear();
    to_out_.clear();
    const uint16_t took = mode_.to_nf(b, n, to_nf_, to_out_);
    refused_[t] = uint16_t(n - took);
    if (took && refused_[t]) std::copy(b + took, b + n, b);
    if (!to_nf_.empty()) sw_nf_.tx(to_nf_.data(), uint16_t(to_nf_.size()));
    traffic_.send(to_out_);
    work += took + uint32_t(to_out_.size());
  }
  return work;
}

bool SwitchLoop::refused() const {
  return refused_[0] || refused_[1];
}

// The mode's timers on the NF server's clock: its Reframer and delays hold packets on that
// clock (trace time when replaying). Settled: what the server sent back is all merged (its
// clock is read first; its lcore publishes it once that poll's output is in the ring).
uint32_t SwitchLoop::poll_mode(Nanos now) {
  Nanos nf_clock = now;  // another process: ours is the best guess
  if (!external_nf_) nf_clock = cfg_.nf_lcore ? nft_.clock.load() : server_.clock();
  const bool settled =
      sw_nf_.rx_pending() == 0 && (external_nf_ || cfg_.nf_lcore || !nf_side_.backlogged());
  to_out_.clear();
  mode_.poll(nf_clock, settled, to_out_);
  traffic_.send(to_out_);
  return uint32_t(to_out_.size());
}

// The mode refuses packets and nothing has moved for a quiet period, with no packet in a ring or
// in the NF lcore's hands. Step 0: the NF server releases what it holds (in trace time nothing
// else would make it: the input waits). Step 1 (nothing moved since, or the step counter would
// have been reset): the NF side holds nothing, so the mode may give up on what it waits for.
void SwitchLoop::stall_step(Nanos now) {
  if (stall_phase_ == 0) {
    stall_phase_ = 1;
    end_step(0, now);
    return;
  }
  stall_phase_ = 0;
  to_out_.clear();
  mode_.nf_idle(to_out_);
  traffic_.send(to_out_);
}

// Held packets (fault delay, Reframer) count as work only while time moves on its own; in trace
// time they wait for the end-of-input flush.
uint32_t SwitchLoop::poll_server(Nanos now) {
  if (external_nf_) return 0;
  if (!cfg_.nf_lcore) {
    return server_.poll(nf_side_, now) + (server_.held() && !trace_time_ ? 1 : 0);
  }
  const uint64_t a = nft_.activity.load(std::memory_order_relaxed);
  if (a == seen_nf_activity_) return 0;
  seen_nf_activity_ = a;
  return 1;
}

uint32_t SwitchLoop::from_nf() {
  if (!traffic_.flushed()) return 0;
  uint16_t n = sw_nf_.rx(b_, kBurst);
  if (!n) return 0;
  sw_nf_.count_rx(b_, n);
  if (external_nf_)  // copies from another process: their input sequence number is unknown
    for (uint16_t i = 0; i < n; ++i) MbufMeta::seq(b_[i]) = MbufMeta::kUnknown;
  to_out_.clear();
  mode_.from_nf(b_, n, to_out_);
  traffic_.send(to_out_);
  return n;
}

// The end, in three steps, each after everything has settled: (0) the NF server releases what it
// holds (fault delays, Reframer) and the switch merges it; (1) the mode releases what it holds
// (partial batches, stranded payloads); then the loop stops. A run that is stopping takes step
// 0 at once.
void SwitchLoop::end_step(int phase, Nanos now) {
  if (phase == 0) {
    if (external_nf_) return;
    if (!cfg_.nf_lcore)
      server_.flush(nf_side_, now);
    else
      nft_.request_flush();
    return;
  }
  to_out_.clear();
  mode_.drain(to_out_);
  traffic_.send(to_out_);
}

}  // namespace nfpark::dp
