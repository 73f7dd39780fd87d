#include "dp/runner.h"

#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <vector>

#include "core/json.h"
#include "dp/eal.h"
#include "dp/mbuf_ops.h"
#include "dp/nf_server.h"
#include "dp/nf_thread.h"
#include "dp/pcap_wire.h"
#include "dp/port.h"
#include "dp/run_report.h"
#include "dp/switch_loop.h"
#include "dp/switch_mode.h"
#include "dp/traffic_ports.h"
#include "nf/registry.h"
#include "run/budget.h"
#include "run/output_file.h"
#include "trace/pcap_reader.h"
#include "trace/pcap_writer.h"

namespace nfpark::dp {

std::atomic<int> g_stop_signal{0};

namespace {

void on_signal(int sig) {
  g_stop_signal = sig;
}

// Mirrors of the run module's sizes (run/budget.h), which plans memory without DPDK.
constexpr uint32_t kRing = run::kRingSize;
constexpr uint32_t kDataRoom = RTE_MBUF_DEFAULT_BUF_SIZE;
constexpr uint32_t kHeaderRoom = 256 + RTE_PKTMBUF_HEADROOM;
static_assert(kDataRoom == run::kDataRoom && kHeaderRoom == run::kHeaderRoom);

bool uses_tags(Mode m) {
  return m == Mode::kPayloadPark || m == Mode::kQueueMem;
}

// The run's mempools, sized by run::plan_memory.
struct Pools {
  rte_mempool *pkts = nullptr, *hdrs = nullptr, *ind = nullptr;
  rte_mempool* nic = nullptr;  // nicmem: frames land in "NIC memory", host memory when it is empty
  uint32_t n = 0;

  bool create(const RunConfig& cfg, uint32_t mbufs, std::string& err) {
    n = mbufs;
    pkts = rte_pktmbuf_pool_create("pkts", n, 256, 0, kDataRoom, 0);
    hdrs = rte_pktmbuf_pool_create("hdrs", n, 256, 0, kHeaderRoom, 0);
    ind = rte_pktmbuf_pool_create("ind", n, 256, 0, 0, 0);
    if (!pkts || !hdrs || !ind) {
      err = "cannot create mempools of " + std::to_string(n) + " mbufs (raise --mem-mb)";
      return false;
    }
    nic = cfg.mode == Mode::kNicmem
              ? rte_pktmbuf_pool_create("nicmem", cfg.nicmem_mbufs, 0, 0, kDataRoom, 0)
              : pkts;
    if (!nic) {
      err = "cannot create the NIC-memory pool of " + std::to_string(cfg.nicmem_mbufs) +
            " mbufs ([nicmem] pool; raise --mem-mb)";
      return false;
    }
    return true;
  }
  bool full() const {
    return rte_mempool_full(pkts) && rte_mempool_full(hdrs) && rte_mempool_full(ind) &&
           rte_mempool_full(nic);
  }
  std::string leak() const {
    return "mbuf leak: pools not full at exit (pkts " +
           std::to_string(rte_mempool_avail_count(pkts)) + "/" + std::to_string(n) + ", hdrs " +
           std::to_string(rte_mempool_avail_count(hdrs)) + ", indirect " +
           std::to_string(rte_mempool_avail_count(ind)) + ")";
  }
};

// Everything between EAL start and EAL cleanup: pools, ports, the NF server, the loop, and the
// result. Returns 0, 1 (run failed) or 2 (bad configuration found late).
int run_switch(const RunConfig& cfg, trace::TraceReader& reader, trace::PcapWriter* writer,
               std::unique_ptr<nf::Chain> chain, const run::Budget& budget, RunResult& res,
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
  std::optional<park::TagFormat> fmt;
  if (uses_tags(cfg.mode)) fmt = cfg.park.format;
  NfServer server(std::move(chain), fmt, cfg.notify_drops, cfg.faults, pools.pkts,
                  cfg.mode == Mode::kNfSlicer);
  server.use_trace_time(!live);
  if (budget.reframe_hold > 0) {
    reframe::ReorderConfig rc = cfg.reframe.cfg;
    rc.t_buff = Nanos(cfg.reframe_us * 1000);
    rc.max_held_packets = budget.reframe_hold;
    if (std::string e = rc.validate(); !e.empty()) return (err = "reframe: " + e), 2;
    reframe::BypassRules rules;
    rules.tcp_syn = cfg.reframe.bypass_syn;
    for (uint64_t d : cfg.reframe.bypass_dscp) rules.dscp_mask |= uint64_t(1) << d;
    server.set_reframer(rc, rules);
  }
  Feeder feeder(reader, pools.pkts, pools.nic, wire_in, cfg.pace, cfg.pad);
  Writer out(live ? nullptr : writer, wire_out);
  NfThread nft{&server, &nf_side};
  SwitchLoop loop(cfg, *mode, server, traffic, sw_nf, nf_side, feeder, out, nft, g_stop_signal);
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
  report_mode(*mode, res);
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
  res.switch_drops = mode->drops() + server.coalesced + abandoned + unanswered + too_long;
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
  trace::TraceReader reader;
  if (!res.live && !reader.open(cfg.in_path)) return (err = reader.error()), 2;
  // The output goes to a temporary file beside --out, moved over it at the end (or removed).
  run::OutputFile out_file(res.live ? std::string() : cfg.out_path);
  trace::PcapWriter writer;
  if (!out_file.empty() && !writer.open(out_file.temp_path(), trace::Precision::kNano))
    return (err = "cannot write " + cfg.out_path + ": " + writer.error()), 2;
  std::string cerr;
  auto chain =
      nf::build_chain(cfg.role == Role::kSwitch ? "forward" : cfg.chain, cfg.nf_config.get(), cerr);
  if (!chain) return (err = (cfg.source.empty() ? std::string() : cfg.source + ": ") + cerr), 2;

  const run::Budget budget = run::plan_memory(cfg, 0);
  EalOptions eo;
  eo.mem_mb = budget.eal_mb;
  eo.lcores = cfg.nf_lcore ? 2 : 1;
  if (!eal_init(eo, err)) return 1;
  int rc = run_switch(cfg, reader, out_file.empty() ? nullptr : &writer, std::move(chain), budget,
                      res, err);
  eal_cleanup();
  std::string why;
  if (rc == 0 && res.ran && res.verdict(why) != run::kExitBroken && !out_file.commit(err)) rc = 1;
  return rc;
}

}  // namespace nfpark::dp
