#include "dp/worker.h"

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include <atomic>
#include <csignal>
#include <memory>
#include <optional>
#include <vector>

#include "core/shard.h"
#include "dp/mbuf_ops.h"
#include "dp/nf_server.h"
#include "dp/nf_thread.h"
#include "dp/pcap_wire.h"
#include "dp/pools.h"
#include "dp/port.h"
#include "dp/reframe_box.h"
#include "dp/run_report.h"
#include "dp/runner.h"
#include "dp/steer.h"
#include "dp/switch_loop.h"
#include "dp/switch_mode.h"
#include "dp/telemetry.h"
#include "dp/traffic_ports.h"
#include "nf/registry.h"
#include "run/nf_assembly.h"
#include "run/result_sum.h"
#include "run/worker_config.h"

namespace nfpark::dp {

namespace {

// One worker's pipeline: everything it touches per packet is its own.
struct SwitchWorker {
  RunConfig cfg;  // run::worker_config(run, q)
  std::unique_ptr<SwitchMode> mode;
  std::vector<std::unique_ptr<NfServer>> server;  // one per NF server (role switch: one)
  std::vector<NfServer*> inline_servers;          // they, when they run here (not role switch)
  TrafficPorts traffic;                           // queue q of the traffic port(s)
  std::unique_ptr<Steer> steer;                   // live ports: its share of what they bring
  std::vector<Port> sw_nf, nf_side;               // queue q of each NF server's link
  NfThread nft;
  std::unique_ptr<ReframeBox> box;  // [reframe] placement = "box": the worker's own
  std::unique_ptr<SwitchLoop> loop;
  run::End end = run::End::kInputDone;
  std::atomic<bool> done{false};
};

int switch_worker_main(void* arg) {
  auto* w = static_cast<SwitchWorker*>(arg);
  w->end = w->loop->run();
  w->done.store(true, std::memory_order_release);
  return 0;
}

// The steering rules of the chain the NF side runs (a NAT's replies to their worker). The
// switch of --role switch builds the chain only for them: give it the NF process's --chain.
Shard make_shard(const RunConfig& cfg) {
  std::vector<SteerRule> rules;
  std::string cerr;
  if (auto chain = nf::build_chain(cfg.chain, cfg.nf_config.get(), cerr)) chain->steering(rules);
  return Shard(cfg.workers, std::move(rules));
}

void add_counts(Port& to, const Port& from) {
  to.rx_packets += from.rx_packets, to.rx_bytes += from.rx_bytes;
  to.tx_packets += from.tx_packets, to.tx_bytes += from.tx_bytes;
  to.too_long += from.too_long, to.peer_gone += from.peer_gone;
}

// Worker q's share of the result (runner.cc's run_switch, for one worker).
RunResult worker_part(SwitchWorker& w, bool external_nf, uint64_t abandoned) {
  RunResult p;
  const size_t m = w.sw_nf.size();
  p.servers.resize(m);
  report_servers(w.server, external_nf, p);
  report_mode(*w.mode, w.inline_servers, external_nf, p);
  uint64_t too_long = 0, unanswered = 0, late = 0, coalesced = 0;
  for (size_t k = 0; k < m; ++k) {
    const Port& link = w.sw_nf[k];
    p.packets_to_nf += link.tx_packets, p.bytes_to_nf += link.tx_bytes;
    p.packets_from_nf += link.rx_packets, p.bytes_from_nf += link.rx_bytes;
    run::ServerResult& sr = p.servers[k];
    sr.packets_to = link.tx_packets, sr.bytes_to = link.tx_bytes;
    sr.packets_from = link.rx_packets, sr.bytes_from = link.rx_bytes;
    sr.too_long = link.too_long + (external_nf ? 0 : w.nf_side[k].too_long);
    sr.late = w.loop->server_drops(uint32_t(k)).late;
    sr.refused = w.loop->server_drops(uint32_t(k)).refused;
    const park::ServerState& st = w.loop->choice().state(uint32_t(k));
    sr.live = st.live, sr.downs = st.downs, sr.takebacks = st.takebacks;
    if (external_nf) {
      sr.unanswered = link.tx_packets > link.rx_packets ? link.tx_packets - link.rx_packets : 0;
      p.duplicates += link.rx_packets > link.tx_packets ? link.rx_packets - link.tx_packets : 0;
      unanswered += sr.unanswered;
    } else {
      coalesced += w.server[k]->coalesced();
    }
    too_long += sr.too_long;
    late += sr.late;
  }
  for (int t = 0; t < w.traffic.size(); ++t) too_long += w.traffic[t].too_long;
  if (external_nf) p.drops.values["nf_unanswered"] = unanswered;
  if (late) p.drops.values["from_down_server"] = late;
  p.switch_drops = w.mode->drops() + coalesced + abandoned + unanswered + too_long + late;
  if (abandoned) p.drops.values["abandoned_at_exit"] = abandoned;
  if (too_long) p.drops.values["frame_too_long"] = too_long;
  const std::string k = "worker" + std::to_string(w.cfg.worker) + ".";
  uint64_t rx = 0, tx = 0;
  for (int t = 0; t < w.traffic.size(); ++t) {
    rx += w.traffic[t].rx_packets, tx += w.traffic[t].tx_packets;
    if (w.traffic.live()) {  // live: the run's in and out are the ports' (replay: the wire's)
      p.packets_in += w.traffic[t].rx_packets, p.bytes_in += w.traffic[t].rx_bytes;
      p.packets_out += w.traffic[t].tx_packets, p.bytes_out += w.traffic[t].tx_bytes;
    }
  }
  p.ports.values[k + "rx_packets"] = rx;
  p.ports.values[k + "tx_packets"] = tx;
  if (w.steer) p.ports.values[k + "steered"] = w.steer->steered;
  p.ports.values[k + "to_nf"] = p.packets_to_nf;
  p.ports.values[k + "from_nf"] = p.packets_from_nf;
  p.ports.values[k + "switch_drops"] = p.switch_drops;
  return p;
}

}  // namespace

int run_switch_workers(const RunConfig& cfg, trace::TraceReader& reader, trace::PcapWriter* writer,
                       const run::Budget& budget, RunResult& res, std::string& err) {
  if (!MbufMeta::register_meta()) return (err = "cannot register the mbuf dynamic field"), 1;
  Pools pools;
  if (!pools.create(cfg, budget.pool_mbufs, err)) return 1;
  MbufOps::pools = {pools.pkts, pools.hdrs, pools.ind};
  res.ran = true;
  const uint16_t n = uint16_t(cfg.workers);
  const bool external_nf = cfg.role == Role::kSwitch;
  const bool live = !cfg.traffic_ports.empty();
  TrafficPorts traffic;
  std::vector<rte_ring*> wire_in, wire_out;
  SteerRings rings;
  // One NF link per NF server, `n` queues each: sw_nf[k] here, nf_side[k] its in-process end.
  const size_t m = std::max<uint32_t>(cfg.nf_servers, 1);
  const auto nf_specs = run::nf_ports(cfg);
  std::vector<Port> sw_nf(m), nf_side(external_nf ? 0 : m);
  bool ok;
  if (live) {
    const BufferSplit bs{pools.hdrs, pools.nic, uint16_t(cfg.header_segment)};
    const bool nicsplit = cfg.mode == Mode::kNicmem || cfg.mode == Mode::kSplit;
    ok = traffic.open_live(cfg.traffic_ports[0], cfg.traffic_ports[1], pools.nic,
                           nicsplit ? &bs : nullptr, err, n) &&
         rings.create(n, 2, err);
    if (ok) traffic.skip_meta_reset();  // no feeder: nothing writes metadata (pools.h)
  } else {
    ok = traffic.open_replay(pools.pkts, kRing, n, wire_in, wire_out, err);
  }
  for (size_t k = 0; k < m && ok && external_nf; ++k)
    if (nf_specs[k].find("af_packet") != std::string::npos)
      return (err = "--workers " + std::to_string(n) + " with an af_packet NF link (" +
                    nf_specs[k] +
                    "): its frames would come back on the queue the kernel's fanout picks, not "
                    "on the worker that parked them; use memif (one queue per worker) or "
                    "--workers 1"),
             2;
  for (size_t k = 0; k < m && ok; ++k) {
    const std::string link = m == 1 ? "nflink" : "nflink" + std::to_string(k);
    ok = external_nf ? Port::open(nf_specs[k], pools.pkts, sw_nf[k], err, nullptr, n)
                     : Port::ring_pair(link, pools.pkts, sw_nf[k], nf_side[k], err, kRing, n);
    if (ok && live) sw_nf[k].skip_meta_reset();
  }
  if (!ok) return 2;
  const run::Budget one = run::plan_memory(run::worker_config(cfg, 0), 0);
  const run::NfServerSpec spec = run::nf_server_spec(cfg, one, !live, err);
  if (!err.empty()) return 2;
  const Shard shard = make_shard(cfg);
  Feeder feeder(reader, pools.pkts, pools.nic, live ? nullptr : wire_in[0], cfg.pace, cfg.pad);
  Writer out(live ? nullptr : writer, live ? nullptr : wire_out[0]);
  if (!live) {
    feeder.shard_over(shard, wire_in);
    out.drain_all(wire_out);
  }
  std::atomic<bool> input_done{false};
  // Live: the workers stop when this is set (a signal, or --idle-exit decided here, where every
  // worker's intake is seen); replay: on the signal itself.
  std::atomic<int> halt{0};
  std::vector<std::unique_ptr<SwitchWorker>> ws;
  for (uint16_t q = 0; q < n; ++q) {
    auto w = std::make_unique<SwitchWorker>();
    w->cfg = run::worker_config(cfg, q);
    w->cfg.nf_lcore = false;  // the NF server runs inline on the worker's lcore
    if (live) w->cfg.idle_exit_s = 0;
    w->mode = make_switch_mode(w->cfg, pools.nic, err);
    if (!w->mode) return 2;
    park::FaultConfig faults = spec.faults;
    faults.seed = w->cfg.faults.seed;
    // Each NF server's own chain (its own state, as separate machines would); role switch: one,
    // for the report (the servers are other processes).
    for (size_t k = 0; k < (external_nf ? 1 : m); ++k) {
      auto step = run::build_nf_step<MbufOps>(w->cfg, spec, err);
      if (!step) return 2;
      w->server.push_back(
          std::make_unique<NfServer>(std::move(step), faults, spec.shape, pools.pkts));
    }
    // What the chain reads, for touched bytes; role switch: unseen, the headers (runner.cc)
    if (!external_nf) w->mode->set_reads(w->server[0]->chain().reads());
    w->traffic = traffic.queue(q);
    if (live) {
      w->steer = std::make_unique<Steer>(shard, rings, q);
      w->traffic.steer_by(w->steer.get());
    }
    for (size_t k = 0; k < m; ++k) {
      w->sw_nf.push_back(sw_nf[k].queue(q));
      if (external_nf) continue;
      w->nf_side.push_back(nf_side[k].queue(q));
      w->inline_servers.push_back(w->server[k].get());
    }
    w->loop =
        std::make_unique<SwitchLoop>(w->cfg, *w->mode, w->inline_servers, w->traffic, w->sw_nf,
                                     w->nf_side, feeder, out, w->nft, live ? halt : g_stop_signal);
    w->loop->wire_elsewhere(&input_done);
    if (spec.reframe_box && !external_nf) {     // one box per worker: a lane per NF server k,
      w->box = std::make_unique<ReframeBox>();  // on its queue of that server's NF link
      w->box->name = "rfbox" + std::to_string(q) + "_";
      for (size_t k = 0; k < m; ++k) {
        if (!w->box->add_lane(run::build_reframe_stage<MbufOps>(spec), spec.trace_time,
                              &w->nf_side[k], err))
          return 1;
        w->server[k]->from_box(w->box->lanes.back().get());
      }
      w->loop->set_box(w->box.get());
    }
    ws.push_back(std::move(w));
  }
  // Every NF server's link up first, then the gate held (Port::wait_peer): the gate is the
  // process's (control_gate.h), and once held the interrupt thread runs no other handshake.
  const uint64_t until = rte_get_timer_cycles() + uint64_t(cfg.timeout_s * rte_get_timer_hz());
  for (size_t k = 0; k < m && external_nf && m > 1; ++k)
    for (rte_eth_link link{}; g_stop_signal.load() == 0 && rte_get_timer_cycles() < until;) {
      if (rte_eth_link_get_nowait(sw_nf[k].id(), &link) == 0 && link.link_status == RTE_ETH_LINK_UP)
        break;
      rte_delay_us_sleep(1000);
    }
  for (size_t k = 0; k < m && external_nf; ++k)
    if (!sw_nf[k].wait_peer(g_stop_signal, cfg.timeout_s)) {
      err = "the NF server never connected to " + nf_specs[k];
      traffic.stop();
      for (Port& p : sw_nf) p.stop();
      res.pools_full = pools.full();
      return 1;
    }
  unsigned lcore = rte_get_next_lcore(-1, 1, 0);
  for (auto& w : ws) {
    rte_eal_remote_launch(switch_worker_main, w.get(), lcore);
    lcore = rte_get_next_lcore(lcore, 1, 0);
  }
  for (auto& w : ws) {  // the boxes: the lcores after the workers' (eal.h floats them)
    if (!w->box) continue;
    w->box->lcore = lcore;
    rte_eal_remote_launch(reframe_box_main, w->box.get(), lcore);
    lcore = rte_get_next_lcore(lcore, 1, 0);
  }
  // The wire (replay: feed and drain), or the live run's watch (signal, --idle-exit, live
  // stats), until every worker has ended.
  SteadyClock clock;
  const Nanos start = clock.now();
  std::optional<LiveStats> stats;
  if (live) stats.emplace(external_nf ? "switch" : "all", cfg.quiet, start);
  feeder.start(start);
  bool stopping = false, idle_exit = false;
  uint64_t seen = 0;
  Nanos last_seen = start;
  for (;;) {
    const Nanos now = clock.now();
    stopping = stopping || g_stop_signal.load() != 0 || now - start > Nanos(cfg.timeout_s * 1e9);
    uint32_t work = 0;
    if (live) {
      uint64_t read = 0;
      for (auto& w : ws) read += w->steer->read.load(std::memory_order_relaxed);
      if (read != seen) seen = read, last_seen = now;
      if (!idle_exit && cfg.idle_exit_s > 0 && seen > 0 &&
          now - last_seen > Nanos(cfg.idle_exit_s * 1e9)) {
        idle_exit = true;
        halt.store(SIGTERM);
      }
      if (g_stop_signal.load() && !halt.load()) halt.store(g_stop_signal.load());
      if (stats->due(now)) {
        LiveSample s;
        s.in_packets = seen;
        for (auto& w : ws)
          s.extra.emplace_back("worker" + std::to_string(w->cfg.worker) + ".packets_read",
                               w->steer->read.load(std::memory_order_relaxed));
        stats->publish(now, std::move(s));
      }
    } else {
      work = stopping ? 0 : feeder.retry() + feeder.feed(now);
      work += out.drain();
      if (feeder.done() || stopping) input_done.store(true, std::memory_order_release);
    }
    bool all = true;
    for (auto& w : ws) all = all && w->done.load(std::memory_order_acquire);
    if (all) break;
    if (!work) rte_delay_us_sleep(live ? 1000 : 20);
  }
  for (auto& w : ws)  // the boxes release what they hold; the workers' finish() takes it
    if (w->box) w->box->stop = true;
  rte_eal_mp_wait_lcore();
  res.end = run::End::kInputDone;
  for (auto& w : ws)
    if (w->end != run::End::kInputDone) res.end = w->end;
  if (idle_exit) res.end = run::End::kIdleExit;
  res.signal = g_stop_signal;
  res.seconds = double(clock.now() - start) / 1e9;
  // Settle, worker by worker (on this lcore: the workers have stopped), then the wire.
  std::vector<uint64_t> abandoned(n, 0);
  for (uint16_t q = 0; q < n; ++q) abandoned[q] = ws[q]->loop->finish(nullptr);
  // Live: what was read but never reached its worker (on a steering ring, or staged for one)
  // counts as received there, and abandoned.
  for (uint16_t q = 0; q < n && live; ++q)
    ws[q]->steer->take_rest([&](int t, rte_mbuf* const* b, uint16_t k) {
      ws[q]->traffic[t].count_rx(b, k);
      for (uint16_t i = 0; i < k; ++i) rte_pktmbuf_free(b[i]);
      abandoned[q] += k;
    });
  uint64_t wire_abandoned = 0;
  for (rte_ring* r : wire_in) {
    rte_mbuf* b[kBurst];
    for (unsigned k;
         (k = rte_ring_dequeue_burst(r, reinterpret_cast<void**>(b), kBurst, nullptr)) > 0;) {
      for (unsigned i = 0; i < k; ++i) rte_pktmbuf_free(b[i]);
      wire_abandoned += k;
    }
  }
  if (!live) out.drain();
  int rc = 0;
  if (!feeder.error.empty()) {
    err = feeder.error;
    rc = 2;
  }
  if (!live) {
    res.packets_in = feeder.packets;
    res.bytes_in = feeder.bytes;
    res.packets_out = out.packets;
    res.bytes_out = out.bytes;
  }
  for (uint16_t q = 0; q < n; ++q) {
    SwitchWorker& w = *ws[q];
    run::add_part(res, worker_part(w, external_nf, abandoned[q]));
    for (int t = 0; t < traffic.size(); ++t) add_counts(traffic[t], w.traffic[t]);
    for (size_t k = 0; k < m; ++k) {
      add_counts(sw_nf[k], w.sw_nf[k]);
      if (!external_nf) add_counts(nf_side[k], w.nf_side[k]);
    }
  }
  if (wire_abandoned) {
    res.switch_drops += wire_abandoned;
    res.drops.values["abandoned_at_exit"] += wire_abandoned;
  }
  if (feeder.padded) res.ports.values["replay.padded"] = feeder.padded;
  res.ports.values["workers"] = n;
  if (!external_nf) res.ports.values["nf_link.direct"] = ws[0]->loop->direct() ? 1 : 0;
  traffic.report(res);
  for (size_t k = 0; k < m; ++k) {
    const std::string name = m == 1 ? "" : std::to_string(k);
    report_port("switch_nf" + name, sw_nf[k], res);
    if (!external_nf) report_port("nf_server" + name, nf_side[k], res);
  }
  traffic.stop();
  for (Port& p : sw_nf) p.stop();
  for (Port& p : nf_side) p.stop();
  ws.clear();  // the stores are empty (drained): nothing they hold goes back to a pool late
  res.pools_full = pools.full();
  if (!res.pools_full && rc == 0) err = pools.leak();
  if (out.failed || (writer && !writer->close())) {
    err = writer && !writer->error().empty() ? writer->error() : "cannot write " + cfg.out_path;
    rc = 1;
  }
  return rc;
}

}  // namespace nfpark::dp
