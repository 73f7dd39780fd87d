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
#include "dp/reframe_box.h"
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
               std::vector<std::unique_ptr<park::NfBurst<MbufOps>>> steps,
               const run::NfServerSpec& spec, const run::Budget& budget, RunResult& res,
               std::string& err) {
  if (!MbufMeta::register_meta()) return (err = "cannot register the mbuf dynamic field"), 1;
  Pools pools;
  if (!pools.create(cfg, budget.pool_mbufs, err)) return 1;
  MbufOps::pools = {pools.pkts, pools.hdrs, pools.ind};
  res.ran = true;
  const bool live = !cfg.traffic_ports.empty();
  const bool external_nf = cfg.role == Role::kSwitch;
  auto mode = make_switch_mode(cfg, pools.nic, err);
  if (!mode) return 2;
  // What the chain reads. Role switch: the NF servers' chains run in other processes, which
  // this one cannot see (nothing says they run this config's chain), so touched bytes count
  // the L2-L4 headers there, the host boundary's default.
  if (!steps.empty() && !external_nf) mode->set_reads(steps[0]->chain().reads());
  TrafficPorts traffic;
  // One NF link per NF server: sw_nf[k] here, nf_side[k] its in-process end (role all).
  const size_t m = std::max<uint32_t>(cfg.nf_servers, 1);
  const auto nf_specs = run::nf_ports(cfg);
  std::vector<Port> sw_nf(m), nf_side(external_nf ? 0 : m);
  rte_ring *wire_in = nullptr, *wire_out = nullptr;
  bool ok;
  if (live) {
    // nicmem/split on live ports: ask the NIC for a header/data split (BUFFER_SPLIT).
    const BufferSplit bs{pools.hdrs, pools.nic, uint16_t(cfg.header_segment)};
    const bool nicsplit = cfg.mode == Mode::kNicmem || cfg.mode == Mode::kSplit;
    ok = traffic.open_live(cfg.traffic_ports[0], cfg.traffic_ports[1], pools.nic,
                           nicsplit ? &bs : nullptr, err);
    if (ok) traffic.skip_meta_reset();  // no feeder: nothing writes metadata (pools.h)
  } else {
    ok = traffic.open_replay(pools.pkts, kRing, wire_in, wire_out, err);
  }
  for (size_t k = 0; k < m && ok; ++k) {
    const std::string link = m == 1 ? "nflink" : "nflink" + std::to_string(k);
    ok = external_nf ? Port::open(nf_specs[k], pools.pkts, sw_nf[k], err)
                     : Port::ring_pair(link, pools.pkts, sw_nf[k], nf_side[k], err, kRing);
    if (ok && live) sw_nf[k].skip_meta_reset();
  }
  if (!ok) return 2;
  // Role switch: one NfServer, unused but for the report (the servers are other processes).
  std::vector<std::unique_ptr<NfServer>> servers;
  std::vector<NfServer*> server_ptrs;
  for (auto& step : steps) {
    servers.push_back(
        std::make_unique<NfServer>(std::move(step), spec.faults, spec.shape, pools.pkts));
    server_ptrs.push_back(servers.back().get());
  }
  Feeder feeder(reader, pools.pkts, pools.nic, wire_in, cfg.pace, cfg.pad);
  Writer out(live ? nullptr : writer, wire_out);
  NfThread nft;
  for (size_t k = 0; k < nf_side.size(); ++k) {
    nft.servers.push_back(server_ptrs[k]);
    nft.ports.push_back(&nf_side[k]);
  }
  SwitchLoop loop(cfg, *mode, external_nf ? std::vector<NfServer*>{} : server_ptrs, traffic, sw_nf,
                  nf_side, feeder, out, nft, g_stop_signal);
  // The Reframer box (dp/reframe_box.h): one lane per NF server, between its NF link and it.
  std::unique_ptr<ReframeBox> box;
  if (spec.reframe_box && !external_nf) {
    box = std::make_unique<ReframeBox>();
    for (size_t k = 0; k < m; ++k) {
      if (!box->add_lane(run::build_reframe_stage<MbufOps>(spec), spec.trace_time, &nf_side[k],
                         err))
        return 1;
      servers[k]->from_box(box->lanes.back().get());
    }
    loop.set_box(box.get());
  }
  std::optional<LiveStats> stats;
  if (live) loop.observe(&stats.emplace(external_nf ? "switch" : "all", cfg.quiet, 0));
  // Lcores: main = the switch (and the NF server inline), then the NF lcore, then the box.
  unsigned next = rte_get_next_lcore(-1, 1, 0);
  const bool nf_thread = cfg.nf_lcore && !external_nf;
  if (nf_thread) {
    rte_eal_remote_launch(nf_thread_main, &nft, next);
    next = rte_get_next_lcore(next, 1, 0);
  }
  if (box) {
    if (next >= RTE_MAX_LCORE) {  // eal_init was asked for it: never expected
      nft.stop = true;
      rte_eal_mp_wait_lcore();
      return (err = "the Reframer box needs an lcore of its own and EAL has none left"), 1;
    }
    box->lcore = next;
    rte_eal_remote_launch(reframe_box_main, box.get(), next);
  }

  res.end = loop.run();
  res.signal = g_stop_signal;

  if (cfg.progress && loop.seconds() > 2) std::fputc('\n', stderr);
  if (box) {  // first: it releases what it holds, which the NF server then takes
    box->stop = true;
    rte_eal_wait_lcore(box->lcore);
  }
  if (nf_thread) {
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
  // Frames longer than a port carries (port.h "Frame limits"), dropped there and counted.
  uint64_t too_long = 0, late = 0;
  for (int t = 0; t < traffic.size(); ++t) too_long += traffic[t].too_long;
  // Per NF server, and summed. Another process's NF answers for what it did; what it never
  // sent back is named here, and what it sent back beyond what it got (duplicates) is counted
  // as such.
  res.servers.resize(m);
  report_servers(servers, external_nf, res);
  uint64_t unanswered = 0, coalesced = 0;
  for (size_t k = 0; k < m; ++k) {
    const Port& p = sw_nf[k];
    res.packets_to_nf += p.tx_packets;
    res.bytes_to_nf += p.tx_bytes;
    res.packets_from_nf += p.rx_packets;
    res.bytes_from_nf += p.rx_bytes;
    too_long += p.too_long + (external_nf ? 0 : nf_side[k].too_long);
    run::ServerResult& r = res.servers[k];
    r.packets_to = p.tx_packets, r.bytes_to = p.tx_bytes;
    r.packets_from = p.rx_packets, r.bytes_from = p.rx_bytes;
    r.late = loop.server_drops(uint32_t(k)).late;
    r.refused = loop.server_drops(uint32_t(k)).refused;
    r.too_long = p.too_long + (external_nf ? 0 : nf_side[k].too_long);
    const park::ServerState& st = loop.choice().state(uint32_t(k));
    r.live = st.live, r.downs = st.downs, r.takebacks = st.takebacks;
    if (external_nf) {
      r.unanswered = p.tx_packets > p.rx_packets ? p.tx_packets - p.rx_packets : 0;
      res.duplicates += p.rx_packets > p.tx_packets ? p.rx_packets - p.tx_packets : 0;
      unanswered += r.unanswered;
    }
    late += r.late;
    if (!external_nf) coalesced += servers[k]->coalesced();
  }
  report_mode(*mode, server_ptrs, external_nf, res);
  if (external_nf) res.drops.values["nf_unanswered"] = unanswered;
  if (late) res.drops.values["from_down_server"] = late;
  res.switch_drops = mode->drops() + coalesced + abandoned + unanswered + too_long + late;
  if (abandoned) res.drops.values["abandoned_at_exit"] = abandoned;
  if (too_long) res.drops.values["frame_too_long"] = too_long;
  if (feeder.padded) res.ports.values["replay.padded"] = feeder.padded;
  // What the NF lcore and the box cost: busy time in polls that moved packets.
  if (nf_thread) res.ports.values["nf_lcore.busy_ns"] = nft.busy_ns;
  if (!external_nf) res.ports.values["nf_link.direct"] = loop.direct() ? 1 : 0;  // switch_loop.h
  if (box) res.ports.values["reframe_box.busy_ns"] = box->busy_ns;
  traffic.report(res);
  for (size_t k = 0; k < m; ++k) {
    const std::string n = m == 1 ? "" : std::to_string(k);
    report_port("switch_nf" + n, sw_nf[k], res);
    if (!external_nf) report_port("nf_server" + n, nf_side[k], res);
  }

  traffic.stop();
  for (Port& p : sw_nf) p.stop();
  for (Port& p : nf_side) p.stop();
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
  // One NF chain per NF server (each has its own state, as separate machines would); one in
  // role switch, for the report.
  std::vector<std::unique_ptr<park::NfBurst<MbufOps>>> steps;
  const uint32_t chains = cfg.role == Role::kSwitch ? 1 : std::max<uint32_t>(cfg.nf_servers, 1);
  for (uint32_t k = 0; k < chains; ++k) {
    steps.push_back(run::build_nf_step<MbufOps>(cfg, spec, err));
    if (!steps.back()) return 2;
  }
  EalOptions eo;
  eo.mem_mb = budget.eal_mb;
  // dp/worker.h; a Reframer box takes one more, per worker (dp/reframe_box.h)
  const uint32_t boxes = spec.reframe_box ? std::max<uint32_t>(cfg.workers, 1) : 0;
  eo.lcores = (cfg.workers > 1 ? cfg.workers + 1 : 1 + (cfg.nf_lcore ? 1 : 0)) + boxes;
  eo.telemetry = res.live;  // dpdk-telemetry.py reads a live run (dp/telemetry.h)
  if (!eal_init(eo, err)) return 1;
  trace::PcapWriter* w = out_file.empty() ? nullptr : &writer;
  int rc = cfg.workers > 1 ? run_switch_workers(cfg, reader, w, budget, res, err)
                           : run_switch(cfg, reader, w, std::move(steps), spec, budget, res, err);
  eal_cleanup();
  std::string why;
  if (rc == 0 && res.ran && res.verdict(why) != run::kExitBroken && !out_file.commit(err)) rc = 1;
  return rc;
}

}  // namespace nfpark::dp
