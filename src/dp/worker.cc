#include "dp/worker.h"

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include <atomic>
#include <memory>
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
#include "dp/switch_loop.h"
#include "dp/switch_mode.h"
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
  std::vector<std::unique_ptr<NfServer>> server;  // one (SwitchLoop's NF server 0)
  std::vector<NfServer*> inline_servers;          // it, when it runs here (not role switch)
  TrafficPorts traffic;                           // queue q of the traffic port
  std::vector<Port> sw_nf{1}, nf_side;            // queue q of the NF link
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
  const Port& link = w.sw_nf[0];
  p.packets_to_nf = link.tx_packets;
  p.bytes_to_nf = link.tx_bytes;
  p.packets_from_nf = link.rx_packets;
  p.bytes_from_nf = link.rx_bytes;
  const uint64_t link_too_long = link.too_long + (external_nf ? 0 : w.nf_side[0].too_long);
  const uint64_t too_long = link_too_long + w.traffic[0].too_long;
  p.servers.resize(1);
  report_servers(w.server, external_nf, p);
  report_mode(*w.mode, w.inline_servers, external_nf, p);
  run::ServerResult& sr = p.servers[0];
  sr.packets_to = link.tx_packets, sr.bytes_to = link.tx_bytes;
  sr.packets_from = link.rx_packets, sr.bytes_from = link.rx_bytes;
  sr.too_long = link_too_long;
  uint64_t unanswered = 0;
  if (external_nf) {
    unanswered = p.packets_to_nf > p.packets_from_nf ? p.packets_to_nf - p.packets_from_nf : 0;
    p.duplicates += p.packets_from_nf > p.packets_to_nf ? p.packets_from_nf - p.packets_to_nf : 0;
    p.drops.values["nf_unanswered"] = unanswered;
    sr.unanswered = unanswered;
  }
  const uint64_t coalesced = external_nf ? 0 : w.server[0]->coalesced();
  p.switch_drops = w.mode->drops() + coalesced + abandoned + unanswered + too_long;
  if (abandoned) p.drops.values["abandoned_at_exit"] = abandoned;
  if (too_long) p.drops.values["frame_too_long"] = too_long;
  const std::string k = "worker" + std::to_string(w.cfg.worker) + ".";
  p.ports.values[k + "rx_packets"] = w.traffic[0].rx_packets;
  p.ports.values[k + "tx_packets"] = w.traffic[0].tx_packets;
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
  TrafficPorts traffic;
  std::vector<rte_ring*> wire_in, wire_out;
  Port sw_nf, nf_side;
  bool ok = traffic.open_replay(pools.pkts, kRing, n, wire_in, wire_out, err);
  ok = ok && (external_nf ? Port::open(cfg.nf_port, pools.pkts, sw_nf, err, nullptr, n)
                          : Port::ring_pair("nflink", pools.pkts, sw_nf, nf_side, err, kRing, n));
  if (!ok) return 2;
  const run::Budget one = run::plan_memory(run::worker_config(cfg, 0), 0);
  const run::NfServerSpec spec = run::nf_server_spec(cfg, one, true, err);
  if (!err.empty()) return 2;
  Feeder feeder(reader, pools.pkts, pools.nic, wire_in[0], cfg.pace, cfg.pad);
  feeder.shard_over(make_shard(cfg), wire_in);
  Writer out(writer, wire_out[0]);
  out.drain_all(wire_out);
  std::atomic<bool> input_done{false};
  std::vector<std::unique_ptr<SwitchWorker>> ws;
  for (uint16_t q = 0; q < n; ++q) {
    auto w = std::make_unique<SwitchWorker>();
    w->cfg = run::worker_config(cfg, q);
    w->cfg.nf_lcore = false;  // the NF server runs inline on the worker's lcore
    w->mode = make_switch_mode(w->cfg, pools.nic, err);
    auto step = run::build_nf_step<MbufOps>(w->cfg, spec, err);
    if (!w->mode || !step) return 2;
    park::FaultConfig faults = spec.faults;
    faults.seed = w->cfg.faults.seed;
    w->server.push_back(
        std::make_unique<NfServer>(std::move(step), faults, spec.shape, pools.pkts));
    w->traffic = traffic.queue(q);
    w->sw_nf[0] = sw_nf.queue(q);
    if (!external_nf) {
      w->nf_side.push_back(nf_side.queue(q));
      w->inline_servers.push_back(w->server[0].get());
    }
    w->loop =
        std::make_unique<SwitchLoop>(w->cfg, *w->mode, w->inline_servers, w->traffic, w->sw_nf,
                                     w->nf_side, feeder, out, w->nft, g_stop_signal);
    w->loop->wire_elsewhere(&input_done);
    if (spec.reframe_box && !external_nf) {  // one box per worker, on its queue of the NF link
      w->box = std::make_unique<ReframeBox>();
      w->box->name = "rfbox" + std::to_string(q) + "_";
      if (!w->box->add_lane(run::build_reframe_stage<MbufOps>(spec), true, &w->nf_side[0], err))
        return 1;
      w->server[0]->from_box(w->box->lanes.back().get());
      w->loop->set_box(w->box.get());
    }
    ws.push_back(std::move(w));
  }
  if (external_nf && !sw_nf.wait_peer(g_stop_signal, cfg.timeout_s)) {
    err = "the NF server never connected to " + cfg.nf_port;
    traffic.stop();
    sw_nf.stop();
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
  // The wire: feed and drain until every worker has ended.
  SteadyClock clock;
  const Nanos start = clock.now();
  feeder.start(start);
  bool stopping = false;
  for (;;) {
    const Nanos now = clock.now();
    stopping = stopping || g_stop_signal.load() != 0 || now - start > Nanos(cfg.timeout_s * 1e9);
    uint32_t work = stopping ? 0 : feeder.retry() + feeder.feed(now);
    work += out.drain();
    if (feeder.done() || stopping) input_done.store(true, std::memory_order_release);
    bool all = true;
    for (auto& w : ws) all = all && w->done.load(std::memory_order_acquire);
    if (all) break;
    if (!work) rte_delay_us_sleep(20);
  }
  for (auto& w : ws)  // the boxes release what they hold; the workers' finish() takes it
    if (w->box) w->box->stop = true;
  rte_eal_mp_wait_lcore();
  res.end = run::End::kInputDone;
  for (auto& w : ws)
    if (w->end != run::End::kInputDone) res.end = w->end;
  res.signal = g_stop_signal;
  res.seconds = double(clock.now() - start) / 1e9;
  // Settle, worker by worker (on this lcore: the workers have stopped), then the wire.
  std::vector<uint64_t> abandoned(n, 0);
  for (uint16_t q = 0; q < n; ++q) abandoned[q] = ws[q]->loop->finish(nullptr);
  uint64_t wire_abandoned = 0;
  for (rte_ring* r : wire_in) {
    rte_mbuf* b[kBurst];
    for (unsigned k;
         (k = rte_ring_dequeue_burst(r, reinterpret_cast<void**>(b), kBurst, nullptr)) > 0;) {
      for (unsigned i = 0; i < k; ++i) rte_pktmbuf_free(b[i]);
      wire_abandoned += k;
    }
  }
  out.drain();
  int rc = 0;
  if (!feeder.error.empty()) {
    err = feeder.error;
    rc = 2;
  }
  res.packets_in = feeder.packets;
  res.bytes_in = feeder.bytes;
  res.packets_out = out.packets;
  res.bytes_out = out.bytes;
  for (uint16_t q = 0; q < n; ++q) {
    SwitchWorker& w = *ws[q];
    run::add_part(res, worker_part(w, external_nf, abandoned[q]));
    add_counts(traffic[0], w.traffic[0]);
    add_counts(sw_nf, w.sw_nf[0]);
    if (!external_nf) add_counts(nf_side, w.nf_side[0]);
  }
  if (wire_abandoned) {
    res.switch_drops += wire_abandoned;
    res.drops.values["abandoned_at_exit"] += wire_abandoned;
  }
  if (feeder.padded) res.ports.values["replay.padded"] = feeder.padded;
  res.ports.values["workers"] = n;
  traffic.report(res);
  report_port("switch_nf", sw_nf, res);
  if (!external_nf) report_port("nf_server", nf_side, res);
  traffic.stop();
  sw_nf.stop();
  if (!external_nf) nf_side.stop();
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
