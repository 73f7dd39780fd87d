// The NF server as a process of its own: it serves one port (memif, af_packet, a NIC) that
// leads to a switch in another process, until SIGINT/SIGTERM, its timeout, or until it has been
// idle for idle_exit_s after seeing traffic. Its result reports what the server saw and did.
// It ends within about a second of a signal whatever it holds: delayed packets are released at
// once, and what its port does not take is freed and counted as abandoned_at_exit.
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include <memory>

#include "dp/eal.h"
#include "dp/mbuf_ops.h"
#include "dp/mbuf_pool.h"
#include "dp/nf_server.h"
#include "dp/port.h"
#include "dp/reframe_box.h"
#include "dp/run_report.h"
#include "dp/runner.h"
#include "dp/telemetry.h"
#include "nf/registry.h"
#include "run/budget.h"
#include "run/nf_assembly.h"

namespace nfpark::dp {

int run_nf_role(const RunConfig& cfg, RunResult& res, std::string& err) {
  res.role_nf = true;
  res.live = true;  // its timeout is a planned end
  if (cfg.port.empty()) {
    err = "role nf needs the port to the switch: --port vdev:net_memif0,role=client,...";
    return 2;
  }
  const run::Budget budget = run::plan_memory(cfg, 0);
  // Live traffic from another process: the chain runs on this process's clock.
  const run::NfServerSpec spec = run::nf_server_spec(cfg, budget, false, err);
  if (!err.empty()) return 2;
  auto step = run::build_nf_step<MbufOps>(cfg, spec, err);
  if (!step) return 2;
  const uint32_t pool_n = budget.pool_mbufs;
  EalOptions eo;
  eo.mem_mb = cfg.mem_mb ? cfg.mem_mb : 256 * cfg.workers;
  // nf_workers.cc; the Reframer box takes lcore 1 (dp/reframe_box.h)
  eo.lcores = (cfg.workers > 1 ? cfg.workers + 1 : 1) +
              (spec.reframe_box ? std::max<uint32_t>(cfg.workers, 1) : 0);
  eo.telemetry = true;  // dpdk-telemetry.py reads /nfpark/stats (dp/telemetry.h)
  if (!eal_init(eo, err)) return 1;
  int rc = 0;
  if (cfg.workers > 1) {
    step.reset();  // each worker builds its own
    rc = run_nf_workers(cfg, budget, spec, res, err);
  } else {
    MbufMeta::register_meta();
    rte_mempool* pool = mbuf_pool_create("nfpkts", pool_n, 256, RTE_MBUF_DEFAULT_BUF_SIZE);
    rte_mempool* hdrs = mbuf_pool_create("nfhdrs", 1024, 0, 256 + RTE_PKTMBUF_HEADROOM);
    rte_mempool* ind = mbuf_pool_create("nfind", 1024, 0, 0);
    Port port;
    if (!pool || !hdrs || !ind || !Port::open(cfg.port, pool, port, err)) {
      if (err.empty()) err = "cannot create the NF server's mempool (raise --mem-mb)";
      eal_cleanup();
      return 1;
    }
    MbufOps::pools = {pool, hdrs, ind};
    res.ran = true;
    NfServer server(std::move(step), spec.faults, spec.shape, pool);
    SteadyClock clock;
    const Nanos start = clock.now();
    Nanos last = start;
    LiveStats stats("nf", cfg.quiet, start);
    // The Reframer box reads the port on its lcore while this one writes it: each through a
    // view of its own (a view never holds the ControlGate: this lcore holds it for the run once
    // the switch is there, as nf_workers.cc does).
    std::unique_ptr<ReframeBox> box;
    Port rx_view, tx_view;
    Port* io = &port;
    bool serve = true;
    uint64_t box_seen = 0;
    if (spec.reframe_box) {
      if (!port.wait_peer(g_stop_signal, cfg.timeout_s)) {
        res.end = g_stop_signal.load() ? run::End::kSignal : run::End::kTimeout;
        res.signal = g_stop_signal.load();
        serve = false;
      }
      rx_view = port.queue(0);
      tx_view = port.queue(0);
      io = &tx_view;
      box = std::make_unique<ReframeBox>();
      if (!box->add_lane(run::build_reframe_stage<MbufOps>(spec), false, &rx_view, err)) {
        port.stop();
        eal_cleanup();
        return 1;
      }
      server.from_box(box->lanes.back().get());
      box->lcore = rte_get_next_lcore(-1, 1, 0);
      if (serve) rte_eal_remote_launch(reframe_box_main, box.get(), box->lcore);
    }
    for (; serve;) {
      const Nanos now = clock.now();
      if (stats.due(now)) {
        LiveSample s;
        const Port& in = box ? rx_view : port;
        s.in_packets = in.rx_packets, s.in_bytes = in.rx_bytes;
        s.out_packets = io->tx_packets, s.out_bytes = io->tx_bytes;
        s.drops = server.nf_drops();
        stats.publish(now, std::move(s));
      }
      if (g_stop_signal.load()) {
        res.end = run::End::kSignal;
        res.signal = g_stop_signal.load();
        break;
      }
      if (server.poll(*io, now) || server.held() || io->backlogged()) last = now;
      if (box) {  // the box moved packets since the last look, or holds some
        const uint64_t a = box->activity.load(std::memory_order_relaxed);
        if (a != box_seen || box->held.load() || box->waiting.load()) last = now;
        box_seen = a;
      }
      if (cfg.idle_exit_s > 0 && server.rx() > 0 && now - last > Nanos(cfg.idle_exit_s * 1e9)) {
        res.end = run::End::kIdleExit;
        break;
      }
      if (now - start > Nanos(cfg.timeout_s * 1e9)) {
        res.end = run::End::kTimeout;
        break;
      }
    }
    if (box && serve) {  // first: it releases what it holds, which the server then takes
      box->stop = true;
      rte_eal_wait_lcore(box->lcore);
    }
    server.flush(*io, clock.now());
    for (int i = 0; i < 1000 && !io->flush(); ++i) {
    }
    uint64_t abandoned = 0;
    for (rte_mbuf* m : io->take_backlog()) {
      rte_pktmbuf_free(m);
      ++abandoned;
    }
    if (abandoned) res.drops.values["abandoned_at_exit"] = abandoned;
    res.seconds = double(clock.now() - start) / 1e9;
    res.packets_in = server.rx();
    if (box) {  // the views' counters are the port's
      port.rx_packets = rx_view.rx_packets, port.rx_bytes = rx_view.rx_bytes;
      port.tx_packets = tx_view.tx_packets, port.tx_bytes = tx_view.tx_bytes;
      port.too_long = tx_view.too_long;
    }
    res.packets_from_nf = port.tx_packets;
    res.bytes_from_nf = port.tx_bytes;
    report_server(server, true, res);
    report_port("nf_server", port, res);
    port.stop();
    res.pools_full = rte_mempool_full(pool);
  }
  eal_cleanup();
  return rc;
}

}  // namespace nfpark::dp
