// The NF-server role over `--workers N` lcores (N > 1): worker q serves queue q of the port to
// the switch (memif: the switch's worker q sends its share there), with its own NfServer (NF
// chain told set_worker(q, N), Reframer, faults) and its own counters. The main lcore only
// coordinates: it waits for the switch, holds the memif ControlGate for the run (Port::
// wait_peer), ends the run (signal, timeout, --idle-exit once every worker has been idle that
// long), publishes the live counters (per worker too) and sums the workers' parts.
// With the Reframer box ([reframe] placement = "box"), worker q has its own box on lcore N + 1 + q
// reading queue q through a view of its own (dp/reframe_box.h); the boxes stop first.
#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include <atomic>
#include <memory>
#include <vector>

#include "dp/mbuf_ops.h"
#include "dp/mbuf_pool.h"
#include "dp/nf_server.h"
#include "dp/port.h"
#include "dp/reframe_box.h"
#include "dp/run_report.h"
#include "dp/runner.h"
#include "dp/telemetry.h"
#include "run/budget.h"
#include "run/nf_assembly.h"
#include "run/result_sum.h"
#include "run/worker_config.h"

namespace nfpark::dp {

namespace {

struct NfWorker {
  RunConfig cfg;
  std::unique_ptr<NfServer> server;
  Port port;  // queue q (the box, if any, reads it through rx_view)
  Port rx_view;
  std::unique_ptr<ReframeBox> box;  // [reframe] placement = "box": this worker's own
  std::atomic<bool> stop{false}, done{false};
  // Published for the main lcore once per loop (relaxed stores to this worker's own lines).
  alignas(64) std::atomic<Nanos> last{0};
  std::atomic<uint64_t> rx{0}, tx{0};
  uint64_t abandoned = 0;
};

int nf_worker_main(void* arg) {
  auto* w = static_cast<NfWorker*>(arg);
  SteadyClock clock;
  uint64_t box_seen = 0;
  while (!w->stop.load(std::memory_order_relaxed)) {
    const Nanos now = clock.now();
    bool box_busy = false;
    if (w->box) {  // the box moved packets since the last look, or holds some
      const uint64_t a = w->box->activity.load(std::memory_order_relaxed);
      box_busy = a != box_seen || w->box->held.load() || w->box->waiting.load();
      box_seen = a;
    }
    if (w->server->poll(w->port, now) || w->server->held() || w->port.backlogged() || box_busy) {
      w->last.store(now, std::memory_order_relaxed);
      w->rx.store(w->server->rx(), std::memory_order_relaxed);
      w->tx.store(w->port.tx_packets, std::memory_order_relaxed);
    }
  }
  w->server->flush(w->port, clock.now());
  for (int i = 0; i < 1000 && !w->port.flush(); ++i) {
  }
  for (rte_mbuf* m : w->port.take_backlog()) {
    rte_pktmbuf_free(m);
    ++w->abandoned;
  }
  w->done.store(true, std::memory_order_release);
  return 0;
}

}  // namespace

int run_nf_workers(const RunConfig& cfg, const run::Budget& budget, const run::NfServerSpec& spec,
                   RunResult& res, std::string& err) {
  const uint16_t n = uint16_t(cfg.workers);
  MbufMeta::register_meta();
  rte_mempool* pool = mbuf_pool_create("nfpkts", budget.pool_mbufs, 256, RTE_MBUF_DEFAULT_BUF_SIZE);
  rte_mempool* hdrs = mbuf_pool_create("nfhdrs", 1024u * n, 0, 256 + RTE_PKTMBUF_HEADROOM);
  rte_mempool* ind = mbuf_pool_create("nfind", 1024u * n, 0, 0);
  Port port;
  if (!pool || !hdrs || !ind || !Port::open(cfg.port, pool, port, err, nullptr, n)) {
    if (err.empty()) err = "cannot create the NF server's mempool (raise --mem-mb)";
    return 1;
  }
  MbufOps::pools = {pool, hdrs, ind};
  res.ran = true;
  std::vector<std::unique_ptr<NfWorker>> ws;
  for (uint16_t q = 0; q < n; ++q) {
    auto w = std::make_unique<NfWorker>();
    w->cfg = run::worker_config(cfg, q);
    auto step = run::build_nf_step<MbufOps>(w->cfg, spec, err);
    if (!step) return 2;
    park::FaultConfig faults = spec.faults;
    faults.seed = w->cfg.faults.seed;
    w->server = std::make_unique<NfServer>(std::move(step), faults, spec.shape, pool);
    w->port = port.queue(q);
    if (spec.reframe_box) {  // reads queue q through a view of its own; the worker answers
      w->rx_view = port.queue(q);
      w->box = std::make_unique<ReframeBox>();
      w->box->name = "rfbox" + std::to_string(q) + "_";
      if (!w->box->add_lane(run::build_reframe_stage<MbufOps>(spec), false, &w->rx_view, err))
        return 1;
      w->server->from_box(w->box->lanes.back().get());
    }
    ws.push_back(std::move(w));
  }
  SteadyClock clock;
  const Nanos start = clock.now();
  LiveStats stats("nf", cfg.quiet, start);
  if (!port.wait_peer(g_stop_signal, cfg.timeout_s)) {
    res.end = g_stop_signal.load() ? run::End::kSignal : run::End::kTimeout;
    res.signal = g_stop_signal.load();
  } else {
    unsigned lcore = rte_get_next_lcore(-1, 1, 0);
    for (auto& w : ws) {
      rte_eal_remote_launch(nf_worker_main, w.get(), lcore);
      lcore = rte_get_next_lcore(lcore, 1, 0);
    }
    for (auto& w : ws) {  // the boxes: lcores N + 1 .. 2N
      if (!w->box) continue;
      w->box->lcore = lcore;
      rte_eal_remote_launch(reframe_box_main, w->box.get(), lcore);
      lcore = rte_get_next_lcore(lcore, 1, 0);
    }
    for (;;) {
      const Nanos now = clock.now();
      uint64_t rx = 0;
      Nanos last = start;
      for (auto& w : ws) {
        rx += w->rx.load(std::memory_order_relaxed);
        last = std::max(last, w->last.load(std::memory_order_relaxed));
      }
      if (stats.due(now)) {
        LiveSample s;
        s.in_packets = rx;
        for (auto& w : ws) {
          s.out_packets += w->tx.load(std::memory_order_relaxed);
          s.extra.emplace_back("worker" + std::to_string(w->cfg.worker) + ".packets_in",
                               w->rx.load(std::memory_order_relaxed));
        }
        stats.publish(now, std::move(s));
      }
      if (g_stop_signal.load()) {
        res.end = run::End::kSignal;
        res.signal = g_stop_signal.load();
        break;
      }
      if (cfg.idle_exit_s > 0 && rx > 0 && now - last > Nanos(cfg.idle_exit_s * 1e9)) {
        res.end = run::End::kIdleExit;
        break;
      }
      if (now - start > Nanos(cfg.timeout_s * 1e9)) {
        res.end = run::End::kTimeout;
        break;
      }
      rte_delay_us_sleep(1000);
    }
    for (auto& w : ws)  // first the boxes: they release what they hold to their workers
      if (w->box) w->box->stop.store(true);
    for (auto& w : ws)
      if (w->box) rte_eal_wait_lcore(w->box->lcore);
    for (auto& w : ws) w->stop.store(true);
    rte_eal_mp_wait_lcore();
  }
  res.seconds = double(clock.now() - start) / 1e9;
  uint64_t abandoned = 0;
  Port total;
  for (auto& w : ws) {
    RunResult p;
    p.packets_in = w->server->rx();
    p.packets_from_nf = w->port.tx_packets;
    p.bytes_from_nf = w->port.tx_bytes;
    report_server(*w->server, true, p);
    p.ports.values["worker" + std::to_string(w->cfg.worker) + ".packets_in"] = p.packets_in;
    run::add_part(res, p);
    abandoned += w->abandoned;
    const Port& in = w->box ? w->rx_view : w->port;
    total.rx_packets += in.rx_packets, total.rx_bytes += in.rx_bytes;
    total.tx_packets += w->port.tx_packets, total.tx_bytes += w->port.tx_bytes;
    total.too_long += w->port.too_long;
  }
  if (abandoned) res.drops.values["abandoned_at_exit"] = abandoned;
  res.ports.values["workers"] = n;
  report_port("nf_server", total, res);
  port.stop();
  ws.clear();
  res.pools_full = rte_mempool_full(pool);
  return 0;
}

}  // namespace nfpark::dp
