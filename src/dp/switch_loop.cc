#include "dp/switch_loop.h"

#include <algorithm>
#include <cstdio>

#include "dp/mbuf_ops.h"

namespace nfpark::dp {

SwitchLoop::SwitchLoop(const RunConfig& cfg, SwitchMode& mode, std::vector<NfServer*> servers,
                       TrafficPorts& traffic, std::vector<Port>& sw_nf, std::vector<Port>& nf_side,
                       Feeder& feeder, Writer& out, NfThread& nft, const std::atomic<int>& stop)
    : cfg_(cfg),
      mode_(mode),
      servers_(std::move(servers)),
      traffic_(traffic),
      sw_nf_(sw_nf),
      nf_side_(nf_side),
      feeder_(feeder),
      out_(out),
      nft_(nft),
      stop_(stop),
      live_(traffic.live()),
      external_nf_(cfg.role == Role::kSwitch),
      trace_time_(!live_),
      // Liveness only for servers in other processes: the loop waits for its own.
      choice_(uint32_t(sw_nf.size()), cfg.nf_spread,
              external_nf_ ? Nanos(cfg.nf_dead_after_ms * 1e6) : 0),
      sdrops_(sw_nf.size()),
      per_server_(sw_nf.size()) {
  to_nf_.reserve(8 * kBurst);
  to_out_.reserve(8 * kBurst);
  for (auto& v : per_server_) v.reserve(8 * kBurst);
}

bool SwitchLoop::nf_rx_pending() const {
  for (const Port& p : sw_nf_)
    if (p.rx_pending()) return true;
  if (!external_nf_)
    for (const Port& p : nf_side_)
      if (p.rx_pending()) return true;
  return false;
}

bool SwitchLoop::nf_backlogged() const {
  for (const Port& p : sw_nf_)
    if (p.backlogged()) return true;
  for (const Port& p : nf_side_)
    if (p.backlogged()) return true;
  return false;
}

bool SwitchLoop::nf_flush() {
  bool all = true;
  for (Port& p : sw_nf_) all = p.flush() && all;
  return all;
}

// Servers in other processes: a server silent for dead_after while it has packets goes down
// and the mode reclaims what waits for it; a down server is taken back on trial.
void SwitchLoop::liveness(Nanos now) {
  choice_.tick(now, [&](uint32_t k, bool live) {
    if (live) return;
    to_out_.clear();
    mode_.server_down(uint8_t(k), to_out_);
    traffic_.send(to_out_);
  });
}

run::End SwitchLoop::run() {
  start_ = clock_.now();
  direct_ = !external_nf_ && !cfg_.nf_lcore && !cfg_.nf_ring && !box_;
  for (const NfServer* sv : servers_) direct_ = direct_ && sv->direct_ok();
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
    if (external_nf_ && sw_nf_.size() > 1) liveness(now);
    work += poll_mode(now);  // the mode's timers, and the time to_nf() stamps batches with
    work += to_nf(now);      // in this order: separate statements
    work += poll_server(now);
    work += from_nf();
    if (!live_ && wire) work += out_.drain();
    if (work || traffic_.backlogged() || nf_backlogged()) {
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
    const bool nf_quiet = now - last_activity > quiet && !nf_rx_pending() &&
                          (!cfg_.nf_lcore || external_nf_ || nft_.idle()) &&
                          (!box_ || box_->idle());
    if (nf_quiet && refused() && !stopping_) {  // back-pressure and nothing moves
      stall_step(now);
      last_activity = now;
    }
    const bool idle = nf_quiet && (stopping_ || (traffic_.rx_pending() == 0 && !refused()));
    // The pool ran dry with a frame waiting (large frames take one mbuf per 2 KiB) and nothing
    // moves: what the NF server holds for later (Reframer, fault delays) waits for trace time
    // that only new input brings, so it is released now and the frame can enter.
    bool held = false;
    for (NfServer* sv : servers_) held = held || sv->held();
    if (box_) held = held || box_->held.load() > 0;
    if (!live_ && wire && !input_done && idle && feeder_.starved() && (cfg_.nf_lcore || held)) {
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
      for (const Port& p : sw_nf_) s.to_nf += p.tx_packets, s.from_nf += p.rx_packets;
      s.drops = mode_.drops();
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

void SwitchLoop::back_from_nf(rte_mbuf* const* pkts, uint16_t n, uint32_t k, const BurstLen* len,
                              int from) {
  if (!n) return;
  if (external_nf_)
    for (uint16_t i = 0; i < n; ++i) MbufMeta::seq(pkts[i]) = MbufMeta::kUnknown;
  if (external_nf_ && !choice_.heard(k, clock_.now())) {  // down: what it sends is stale
    for (uint16_t i = 0; i < n; ++i) rte_pktmbuf_free(pkts[i]);
    sdrops_[k].late += n;
    return;
  }
  if (len && mode_.passes_whole()) {  // the burst goes out as it came: its lengths carry on
    mode_.from_nf_whole(n, *len);
    traffic_.send(pkts, n, len, from);
    return;
  }
  const uint64_t drops = mode_.drops();
  to_out_.clear();
  if (pkts != b_) std::copy(pkts, pkts + n, b_);  // the mode's to change (merges)
  mode_.from_nf(b_, n, uint8_t(k), to_out_);
  sdrops_[k].refused += mode_.drops() - drops;
  traffic_.send(to_out_);
}

uint64_t SwitchLoop::finish(rte_ring* wire_in) {
  uint64_t abandoned = 0;
  auto free_all = [&](rte_mbuf* const* p, size_t n) {
    for (size_t i = 0; i < n; ++i) rte_pktmbuf_free(p[i]);
    abandoned += n;
  };
  // 1. On the way to the NF, not yet served: abandoned.
  const size_t m = sw_nf_.size();
  for (size_t k = 0; k < m; ++k) {
    auto to = sw_nf_[k].take_backlog();
    free_all(to.data(), to.size());
    if (!external_nf_) {
      if (!cfg_.nf_lcore) servers_[k]->flush(nf_side_[k], clock_.now());  // delayed, Reframer
      for (uint16_t n; (n = nf_side_[k].rx(b_, kBurst)) > 0;) free_all(b_, n);
    }
  }
  // 2. On the way back: through the mode, as in the loop. A live NF link (another process) is
  // read a bounded number of times.
  for (size_t k = 0; k < m; ++k) {
    for (int i = 0; i < (external_nf_ ? 64 : 1 << 30); ++i) {
      const uint16_t n = sw_nf_[k].rx(b_, kBurst);
      if (!n) break;
      sw_nf_[k].count_rx(b_, n);
      back_from_nf(b_, n, uint32_t(k));
    }
    if (!external_nf_) {
      auto back = nf_side_[k].take_backlog();
      for (size_t i = 0; i < back.size(); i += kBurst) {
        const uint16_t n = uint16_t(std::min<size_t>(kBurst, back.size() - i));
        sw_nf_[k].rx_packets += n;  // as if it had crossed the link
        for (uint16_t j = 0; j < n; ++j) sw_nf_[k].rx_bytes += back[i + j]->pkt_len;
        back_from_nf(back.data() + i, n, uint32_t(k));
      }
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

// Direct NF link: the burst to NF server k crosses the link, goes through the server and what
// it sends back crosses again, counted on both ends as the ring ports would count it.
void SwitchLoop::hand_off(uint32_t k, rte_mbuf** pkts, size_t n, Nanos now, const BurstLen* len,
                          int from) {
  Port &sw = sw_nf_[k], &nf = nf_side_[k];
  for (size_t i = 0; i < n; i += kBurst) {
    const uint16_t c = uint16_t(std::min<size_t>(kBurst, n - i));
    const bool known = len && c == n;
    const BurstLen in = known ? *len : Port::measure(pkts + i, c);
    sw.tx_packets += c, sw.tx_bytes += in.bytes;
    nf.rx_packets += c, nf.rx_bytes += in.bytes;
    // Live traffic has no cut-off bytes (pools.h): its wire bytes are its bytes
    const uint64_t* wire = known && live_ ? &in.bytes : nullptr;
    const std::span<rte_mbuf* const> back = servers_[k]->hand(pkts + i, c, now, wire);
    const uint16_t b = uint16_t(back.size());        // <= c: no faults, so no duplicates
    const bool whole = servers_[k]->handed_whole();  // back is pkts[i, i + c) as handed
    const BurstLen out = whole ? in : Port::measure(back.data(), b);
    nf.tx_packets += b, nf.tx_bytes += out.bytes;
    sw.rx_packets += b, sw.rx_bytes += out.bytes;
    back_from_nf(back.data(), b, k, &out, whole ? from : -1);
  }
}

uint32_t SwitchLoop::to_nf(Nanos now) {
  uint32_t work = 0;
  for (int t = 0; t < traffic_.size() && !stopping_; ++t) {
    if (!nf_flush() || !traffic_.flushed()) break;
    rte_mbuf** b = in_[t];
    uint16_t n = refused_[t];  // what the mode refused last time goes first
    const bool fresh = n == 0;
    BurstLen len;  // fresh: the lengths of b[0, n) (see "Counting once")
    if (fresh) {
      n = traffic_.rx(t, b, kBurst);
      if (!n) continue;
      len = traffic_[t].count_rx(b, n);
      // Sides by address only for frames that come back from another process (their ingress
      // port is lost there); in one process every frame keeps it (TrafficPorts::egress).
      if (external_nf_) traffic_.learn(t, b, n);
      if (live_) seen_traffic_ = true;
    }
    const size_t m = sw_nf_.size();
    // Each offer: a server may have gone down meanwhile. One server: every mbuf's server is
    // already 0 (pools start so and nothing writes another: pools.h).
    for (uint16_t i = 0; i < n && m > 1; ++i)
      MbufMeta::server(b[i]) = choice_.pick(rte_pktmbuf_mtod(b[i], const uint8_t*), b[i]->data_len);
    to_nf_.clear();
    to_out_.clear();
    // A fresh burst to a mode that passes whole goes to the NF as it was read: `len` is its
    // lengths, and it is moved here (SwitchMode::passes_whole)
    const bool whole = fresh && mode_.passes_whole();
    uint16_t took = n;
    if (whole)
      mode_.to_nf_whole(b, n, len);
    else
      took = mode_.to_nf(b, n, to_nf_, to_out_);
    refused_[t] = uint16_t(n - took);
    if (took && refused_[t]) std::copy(b + took, b + n, b);
    if (direct_ && m == 1 && whole) {  // b is the whole burst to the NF and nothing else
      work += n;
      hand_off(0, b, n, now, &len, t);
      continue;
    }
    if (whole) to_nf_.assign(b, b + n);
    if (direct_) {  // what leaves at once first, as on the ring path; then the NF and back
      work += took + uint32_t(to_out_.size());
      traffic_.send(to_out_);
      if (m == 1) {
        hand_off(0, to_nf_.data(), to_nf_.size(), now);
        continue;
      }
      for (rte_mbuf* p : to_nf_)
        per_server_[std::min<size_t>(MbufMeta::server(p), m - 1)].push_back(p);
      for (size_t k = 0; k < m; ++k) {
        hand_off(uint32_t(k), per_server_[k].data(), per_server_[k].size(), now);
        per_server_[k].clear();
      }
      continue;
    }
    if (m == 1) {
      if (!to_nf_.empty()) sw_nf_[0].tx(to_nf_.data(), uint16_t(to_nf_.size()));
      if (!to_nf_.empty() && external_nf_) choice_.sent(0, clock_.now());
    } else if (!to_nf_.empty()) {
      for (rte_mbuf* p : to_nf_)
        per_server_[std::min<size_t>(MbufMeta::server(p), m - 1)].push_back(p);
      const Nanos now = clock_.now();
      for (size_t k = 0; k < m; ++k) {
        auto& v = per_server_[k];
        if (v.empty()) continue;
        sw_nf_[k].tx(v.data(), uint16_t(v.size()));
        if (external_nf_ && sw_nf_[k].peer_seen()) choice_.sent(uint32_t(k), now);
        v.clear();
      }
    }
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
  if (!mode_.polls()) return 0;
  Nanos nf_clock = now;  // another process: ours is the best guess
  if (!external_nf_ && cfg_.nf_lcore) nf_clock = nft_.clock.load();
  if (!external_nf_ && !cfg_.nf_lcore) {  // the oldest clock of the servers that have one
    nf_clock = INT64_MIN;
    for (NfServer* sv : servers_) {
      const Nanos c = sv->clock();
      if (c != INT64_MIN && (nf_clock == INT64_MIN || c < nf_clock)) nf_clock = c;
    }
  }
  bool settled = true;
  for (const Port& p : sw_nf_) settled = settled && p.rx_pending() == 0;
  if (!external_nf_ && !cfg_.nf_lcore)
    for (const Port& p : nf_side_) settled = settled && !p.backlogged();
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
  if (direct_) {  // nothing waits for it: its clock moves on as an empty poll's would
    for (NfServer* sv : servers_) sv->tick(now);
    return 0;
  }
  uint32_t box_work = 0;
  if (box_) {
    const uint64_t a = box_->activity.load(std::memory_order_relaxed);
    box_work = a != seen_box_activity_ || (box_->held.load() && !trace_time_) ? 1 : 0;
    seen_box_activity_ = a;
  }
  if (!cfg_.nf_lcore) {
    uint32_t work = box_work;
    for (size_t k = 0; k < servers_.size(); ++k)
      work += servers_[k]->poll(nf_side_[k], now) + (servers_[k]->held() && !trace_time_ ? 1 : 0);
    return work;
  }
  const uint64_t a = nft_.activity.load(std::memory_order_relaxed);
  if (a == seen_nf_activity_) return box_work;
  seen_nf_activity_ = a;
  return 1;
}

// Copies from another process: their input sequence number is unknown (back_from_nf).
uint32_t SwitchLoop::from_nf() {
  if (direct_) return 0;  // nothing comes back on a ring: hand_off() took it back
  uint32_t work = 0;
  for (size_t k = 0; k < sw_nf_.size(); ++k) {
    if (!traffic_.flushed()) break;
    const uint16_t n = sw_nf_[k].rx(in_nf_, kBurst);
    if (!n) continue;
    const BurstLen len = sw_nf_[k].count_rx(in_nf_, n);
    back_from_nf(in_nf_, n, uint32_t(k), &len);
    work += n;
  }
  return work;
}

// The end, in three steps, each after everything has settled: (0) the NF server releases what it
// holds (fault delays, Reframer) and the switch merges it; (1) the mode releases what it holds
// (partial batches, stranded payloads); then the loop stops. A run that is stopping takes step
// 0 at once.
void SwitchLoop::end_step(int phase, Nanos now) {
  if (phase == 0) {
    if (external_nf_) return;
    if (box_) box_->request_flush();  // first: the server's flush then takes what it released
    if (!cfg_.nf_lcore)
      for (size_t k = 0; k < servers_.size(); ++k) servers_[k]->flush(nf_side_[k], now);
    else
      nft_.request_flush();
    return;
  }
  to_out_.clear();
  mode_.drain(to_out_);
  traffic_.send(to_out_);
}

}  // namespace nfpark::dp
