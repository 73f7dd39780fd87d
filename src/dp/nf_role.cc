// The NF server as a process of its own: it serves one port (memif, af_packet, a NIC) that
// leads to a switch in another process, until SIGINT/SIGTERM, its timeout, or until it has been
// idle for idle_exit_s after seeing traffic. Its result reports what the server saw and did.
// It ends within about a second of a signal whatever it holds: delayed packets are released at
// once, and what its port does not take is freed and counted as abandoned_at_exit.
#include <rte_mbuf.h>

#include "dp/eal.h"
#include "dp/mbuf_ops.h"
#include "dp/nf_server.h"
#include "dp/port.h"
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
  eo.lcores = cfg.workers > 1 ? cfg.workers + 1 : 1;  // nf_workers.cc
  // No telemetry socket here yet: with it, a role-nf process on memif died of SIGSEGV in
  // tests/e2e/test_own_packets.py (two processes); not understood yet (docs/testbed.md).
  eo.telemetry = false;
  if (!eal_init(eo, err)) return 1;
  int rc = 0;
  if (cfg.workers > 1) {
    step.reset();  // each worker builds its own
    rc = run_nf_workers(cfg, budget, spec, res, err);
  } else {
    MbufMeta::register_meta();
    rte_mempool* pool =
        rte_pktmbuf_pool_create("nfpkts", pool_n, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
    rte_mempool* hdrs =
        rte_pktmbuf_pool_create("nfhdrs", 1024, 0, 0, 256 + RTE_PKTMBUF_HEADROOM, 0);
    rte_mempool* ind = rte_pktmbuf_pool_create("nfind", 1024, 0, 0, 0, 0);
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
    for (;;) {
      const Nanos now = clock.now();
      if (stats.due(now)) {
        LiveSample s;
        s.in_packets = port.rx_packets, s.in_bytes = port.rx_bytes;
        s.out_packets = port.tx_packets, s.out_bytes = port.tx_bytes;
        s.drops = server.nf_drops();
        stats.publish(now, std::move(s));
      }
      if (g_stop_signal.load()) {
        res.end = run::End::kSignal;
        res.signal = g_stop_signal.load();
        break;
      }
      if (server.poll(port, now) || server.held() || port.backlogged()) last = now;
      if (cfg.idle_exit_s > 0 && server.rx() > 0 && now - last > Nanos(cfg.idle_exit_s * 1e9)) {
        res.end = run::End::kIdleExit;
        break;
      }
      if (now - start > Nanos(cfg.timeout_s * 1e9)) {
        res.end = run::End::kTimeout;
        break;
      }
    }
    server.flush(port, clock.now());
    for (int i = 0; i < 1000 && !port.flush(); ++i) {
    }
    uint64_t abandoned = 0;
    for (rte_mbuf* m : port.take_backlog()) {
      rte_pktmbuf_free(m);
      ++abandoned;
    }
    if (abandoned) res.drops.values["abandoned_at_exit"] = abandoned;
    res.seconds = double(clock.now() - start) / 1e9;
    res.packets_in = server.rx();
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
