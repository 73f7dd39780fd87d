#include "dp/runner.h"

#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <optional>
#include <vector>

#include "core/json.h"
#include "dp/eal.h"
#include "dp/mbuf_ops.h"
#include "dp/nf_server.h"
#include "dp/nf_thread.h"
#include "dp/pcap_wire.h"
#include "dp/pools.h"
#include "dp/port.h"
#include "dp/run_report.h"
#include "dp/switch_loop.h"
#include "dp/switch_mode.h"
#include "dp/telemetry.h"
#include "dp/traffic_ports.h"
#include "dp/worker.h"
#include "nf/registry.h"
#include "run/budget.h"
#include "run/nf_assembly.h"
#include "run/output_file.h"
#include "trace/pcap_reader.h"
#include "trace/pcap_writer.h"

namespace nfpark::dp {

std::atomic<int> g_stop_signal{0};

namespace {

void on_signal(int sig) {
  g_stop_signal = sig;
}

// Everything between EAL start and EAL cleanup: pools, ports, the NF server, the loop, and the
// result. Returns 0, 1 (run failed) or 2 (bad configuration found late).
int run_switch(const RunConfig& cfg, trace::TraceReader& reader, trace::PcapWriter* writer,
               std::unique_ptr<park::NfBurst<MbufOps>> step, const run::NfServerSpec& spec,
               const run::Budget& budget, RunResult& res, std::string& err) {
  if (!MbufMeta::register_meta()) return (err = "cannot register the mbuf dynamic field"), 1;
  Pools pools;
  if (!pools.create(cfg, budget.pool_mbufs, err)) return 1;
  MbufOps::pools = {pools.pkts, pools.hdrs, pools.ind};
  res.ran = true;
  const bool live = !cfg.traffic_ports.empty();
  const bool external_nf = cfg.role == Role::kSwitch;
  auto mode = make_switch_mode(cfg, pools.nic, err);
  if (!mode) return 2;
  TrafficPorts traffic;
  Port sw_nf, nf_side;
  rte_ring *wire_in = nullptr, *wire_out = nullptr;
  bool ok;
  if (live) {
    // nicmem/split on live ports: ask the NIC for a header/data split (BUFFER_SPLIT).
    const BufferSplit bs{pools.hdrs, pools.nic, uint16_t(cfg.header_segment)};
    const bool nicsplit = cfg.mode == Mode::kNicmem || cfg.mode == Mode::kSplit;
    ok = traffic.open_live(cfg.traffic_ports[0], cfg.traffic_ports[1], pools.nic,
                           nicsplit ? &bs : nullptr, err);
  } else {
    ok = traffic.open_replay(pools.pkts, kRing, wire_in, wire_out, err);
  }
  ok = ok && (external_nf ? Port::open(cfg.nf_port, pools.pkts, sw_nf, err)
                          : Port::ring_pair("nflink", pools.pkts, sw_nf, nf_side, err, kRing));
  if (!ok) return 2;
  NfServer server(std::move(step), spec.faults, spec.shape, pools.pkts);
  Feeder feeder(reader, pools.pkts, pools.nic, wire_in, cfg.pace, cfg.pad);
  Writer out(live ? nullptr : writer, wire_out);
  NfThread nft{&server, &nf_side};
  SwitchLoop loop(cfg, *mode, server, traffic, sw_nf, nf_side, feeder, out, nft, g_stop_signal);
  std::optional<LiveStats> stats;
  if (live) loop.observe(&stats.emplace(external_nf ? "switch" : "all", cfg.quiet, 0));
  if (cfg.nf_lcore && !external_nf)
    rte_eal_remote_launch(nf_thread_main, &nft, rte_get_next_lcore(-1, 1, 0));

  res.end = loop.run();
  res.signal = g_stop_signal;

  if (cfg.progress && loop.seconds() > 2) std::fputc('\n', stderr);
  if (cfg.nf_lcore && !external_nf) {
    nft.stop = true;
    rte_eal_mp_wait_lcore();
  }
  const uint64_t abandoned = loop.finish(wire_in);
  res.seconds = loop.seconds();
  int rc = 0;
  if (!feeder.error.empty()) {
    err = feeder.error;
    rc = 2;
  }
  if (!live) {
    out.drain();
    res.packets_in = feeder.packets;
    res.bytes_in = feeder.bytes;
    res.packets_out = out.packets;
    res.bytes_out = out.bytes;
  } else {
    traffic.count_live(res);
  }
  res.packets_to_nf = sw_nf.tx_packets;
  res.bytes_to_nf = sw_nf.tx_bytes;
  res.packets_from_nf = sw_nf.rx_packets;
  res.bytes_from_nf = sw_nf.rx_bytes;
  // Frames longer than a port carries (port.h "Frame limits"), dropped there and counted.
  uint64_t too_long = sw_nf.too_long + (external_nf ? 0 : nf_side.too_long);
  for (int t = 0; t < traffic.size(); ++t) too_long += traffic[t].too_long;
  report_server(server, !external_nf, res);
  report_mode(*mode, server, res);
  // Another process's NF answers for what it did; what it never sent back is named here, and
  // what it sent back beyond what it got (duplicates) is counted as such.
  uint64_t unanswered = 0;
  if (external_nf) {
    unanswered =
        res.packets_to_nf > res.packets_from_nf ? res.packets_to_nf - res.packets_from_nf : 0;
    res.duplicates +=
        res.packets_from_nf > res.packets_to_nf ? res.packets_from_nf - res.packets_to_nf : 0;
    res.drops.values["nf_unanswered"] = unanswered;
  }
  res.switch_drops = mode->drops() + server.coalesced() + abandoned + unanswered + too_long;
  if (abandoned) res.drops.values["abandoned_at_exit"] = abandoned;
  if (too_long) res.drops.values["frame_too_long"] = too_long;
  if (feeder.padded) res.ports.values["replay.padded"] = feeder.padded;
  traffic.report(res);
  report_port("switch_nf", sw_nf, res);
  if (!external_nf) report_port("nf_server", nf_side, res);

  traffic.stop();
  sw_nf.stop();
  if (!external_nf) nf_side.stop();
  res.pools_full = pools.full();
  if (!res.pools_full && rc == 0) err = pools.leak();
  if (out.failed || (writer && !writer->close())) {
    err = writer && !writer->error().empty() ? writer->error() : "cannot write " + cfg.out_path;
    rc = 1;
  }
  return rc;
}

}  // namespace

void catch_stop_signals() {
  g_stop_signal = 0;
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
}

int run(const RunConfig& cfg, RunResult& res, std::string& err) {
  res.mode = std::string(to_string(cfg.mode));
  res.live = !cfg.traffic_ports.empty();
  catch_stop_signals();
  if (cfg.role == Role::kNf) return run_nf_role(cfg, res, err);
  if (cfg.workers > 1 && res.live)
    return (err = "--workers " + std::to_string(cfg.workers) +
                  " with --traffic: live ports run with one worker for now (docs/run.md, "
                  "Workers); replay a trace (--in) or use --workers 1"),
           2;
  trace::TraceReader reader;
  if (!res.live && !reader.open(cfg.in_path)) return (err = reader.error()), 2;
  // The output goes to a temporary file beside --out, moved over it at the end (or removed).
  run::OutputFile out_file(res.live ? std::string() : cfg.out_path);
  trace::PcapWriter writer;
  if (!out_file.empty() && !writer.open(out_file.temp_path(), trace::Precision::kNano))
    return (err = "cannot write " + cfg.out_path + ": " + writer.error()), 2;
  const run::Budget budget = run::plan_memory(cfg, 0);
  const run::NfServerSpec spec = run::nf_server_spec(cfg, budget, !res.live, err);
  if (!err.empty()) return 2;
  auto step = run::build_nf_step<MbufOps>(cfg, spec, err);
  if (!step) return 2;
  EalOptions eo;
  eo.mem_mb = budget.eal_mb;
  eo.lcores = cfg.workers > 1 ? cfg.workers + 1 : cfg.nf_lcore ? 2 : 1;  // dp/worker.h
  eo.telemetry = res.live;  // dpdk-telemetry.py reads a live run (dp/telemetry.h)
  if (!eal_init(eo, err)) return 1;
  trace::PcapWriter* w = out_file.empty() ? nullptr : &writer;
  int rc = cfg.workers > 1 ? run_switch_workers(cfg, reader, w, budget, res, err)
                           : run_switch(cfg, reader, w, std::move(step), spec, budget, res, err);
  eal_cleanup();
  std::string why;
  if (rc == 0 && res.ran && res.verdict(why) != run::kExitBroken && !out_file.commit(err)) rc = 1;
  return rc;
}

}  // namespace nfpark::dp
