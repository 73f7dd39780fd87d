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
#include "trace/pcap_reader.h"
#include "trace/pcap_writer.h"

namespace nfpark::dp {

namespace {

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

constexpr uint32_t kRing = 4096;
constexpr uint32_t kDataRoom = RTE_MBUF_DEFAULT_BUF_SIZE;  // 2048 B + headroom
constexpr uint32_t kHeaderRoom = 256 + RTE_PKTMBUF_HEADROOM;

bool uses_tags(Mode m) { return m == Mode::kPayloadPark || m == Mode::kQueueMem; }

// Packets a mode may hold at once, which the pools must be able to supply on top of the rings.
uint32_t mode_holds(const RunConfig& c) {
  switch (c.mode) {
    case Mode::kPayloadPark: return c.park.slots * std::max<uint32_t>(c.park.slices, 1);
    case Mode::kQueueMem: return uint32_t(c.queuemem.max_held());  // payloads; headers: hdrs
    case Mode::kNfSlicer: return uint32_t(c.slicer.entries) * std::max<uint32_t>(c.slicer.cores, 1);
    default: return 0;
  }
}

// Arguments that make a switch run impossible, found before anything starts: "" or why.
std::string check_inputs(const RunConfig& cfg) {
  if (cfg.role == Role::kSwitch && cfg.nf_port.empty())
    return "role switch needs the port to the NF server: --nf-port vdev:net_memif0,role=server,...";
  const bool live = !cfg.traffic_ports.empty();
  if (live && cfg.traffic_ports.size() != 2)
    return "--traffic takes two ports, A,B (packets in on A leave on B and vice versa)";
  if (!live && cfg.in_path.empty())
    return "no input: give --in FILE.pcap or --traffic A,B (or [run] in = \"...\")";
  return "";
}

// The run's mempools. Sized so that every slot may hold a parked packet, plus what the rings
// and backlogs hold.
struct Pools {
  rte_mempool *pkts = nullptr, *hdrs = nullptr, *ind = nullptr;
  rte_mempool* nic = nullptr;  // nicmem: frames land in "NIC memory", host memory when it is empty
  uint32_t n = 0;

  static uint32_t size_for(const RunConfig& cfg, uint32_t reframe_hold) {
    return cfg.pool_mbufs ? cfg.pool_mbufs : mode_holds(cfg) + reframe_hold + 6 * kRing + 4096;
  }
  static uint64_t bytes_for(uint32_t n) {
    return uint64_t(n) * (kDataRoom + kHeaderRoom + 3 * 256) + (64ull << 20);
  }
  bool create(const RunConfig& cfg, uint32_t mbufs, std::string& err) {
    n = mbufs;
    pkts = rte_pktmbuf_pool_create("pkts", n, 256, 0, kDataRoom, 0);
    hdrs = rte_pktmbuf_pool_create("hdrs", n, 256, 0, kHeaderRoom, 0);
    ind = rte_pktmbuf_pool_create("ind", n, 256, 0, 0, 0);
    nic = cfg.mode == Mode::kNicmem
              ? rte_pktmbuf_pool_create("nicmem", cfg.nicmem_mbufs, 0, 0, kDataRoom, 0)
              : pkts;
    if (pkts && hdrs && ind && nic) return true;
    err = "cannot create mempools of " + std::to_string(n) + " mbufs (raise --mem-mb)";
    return false;
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
int run_switch(const RunConfig& cfg, trace::TraceReader& reader, trace::PcapWriter& writer,
               std::unique_ptr<nf::Chain> chain, uint32_t pool_n, uint32_t reframe_hold,
               RunResult& res, std::string& err) {
  if (!MbufMeta::register_meta()) return (err = "cannot register the mbuf dynamic field"), 1;
  Pools pools;
  if (!pools.create(cfg, pool_n, err)) return 1;
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
  if (!ok) return 1;
  std::optional<park::TagFormat> fmt;
  if (uses_tags(cfg.mode)) fmt = cfg.park.format;
  NfServer server(std::move(chain), fmt, cfg.notify_drops, cfg.faults, pools.pkts,
                  cfg.mode == Mode::kNfSlicer);
  server.use_trace_time(!live);
  if (cfg.reframe_us > 0) {
    reframe::ReorderConfig rc;
    rc.t_buff = Nanos(cfg.reframe_us * 1000);
    rc.max_held_packets = reframe_hold;
    if (std::string e = rc.validate(); !e.empty()) return (err = "reframe: " + e), 2;
    server.set_reframer(rc);
  }
  Feeder feeder(reader, pools.pkts, pools.nic, wire_in, cfg.pace);
  Writer out(cfg.out_path.empty() || live ? nullptr : &writer, wire_out);
  NfThread nft{&server, &nf_side};
  SwitchLoop loop(cfg, *mode, server, traffic, sw_nf, nf_side, feeder, out, nft, g_stop);
  if (cfg.nf_lcore && !external_nf)
    rte_eal_remote_launch(nf_thread_main, &nft, rte_get_next_lcore(-1, 1, 0));
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);

  int rc = loop.run(err);

  if (cfg.progress && loop.seconds() > 2) std::fputc('\n', stderr);
  if (cfg.nf_lcore && !external_nf) {
    nft.stop = true;
    rte_eal_mp_wait_lcore();
  }
  res.seconds = loop.seconds();
  if (!feeder.error.empty()) {
    err = feeder.error;
    rc = 2;
  }
  // Counted as "abandoned": the run was cut short (signal, timeout) with packets in flight.
  const uint64_t abandoned = loop.free_leftovers(wire_in);
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
  res.switch_drops = mode->drops() + server.coalesced + abandoned;
  report_server(server, !external_nf, res);
  report_mode(*mode, res);
  if (abandoned) res.drops.values["abandoned_at_exit"] = abandoned;
  traffic.report(res);
  report_port("switch_nf", sw_nf, res);
  if (!external_nf) report_port("nf_server", nf_side, res);

  traffic.stop();
  sw_nf.stop();
  if (!external_nf) nf_side.stop();
  res.pools_full = pools.full();
  if (!res.pools_full && rc == 0) {
    err = pools.leak();
    rc = 1;
  }
  if (out.failed || (!cfg.out_path.empty() && !writer.close())) {
    err = writer.error().empty() ? "cannot write " + cfg.out_path : writer.error();
    rc = 1;
  }
  return rc;
}

}  // namespace

int run(const RunConfig& cfg, RunResult& res, std::string& err) {
  res.mode = std::string(to_string(cfg.mode));
  if (cfg.role == Role::kNf) return run_nf_role(cfg, res, err);
  if (std::string e = check_inputs(cfg); !e.empty()) return (err = e), 2;
  const bool live = !cfg.traffic_ports.empty();
  trace::TraceReader reader;
  if (!live && !reader.open(cfg.in_path)) return (err = reader.error()), 2;
  trace::PcapWriter writer;
  if (!cfg.out_path.empty() && !writer.open(cfg.out_path, trace::Precision::kNano))
    return (err = writer.error()), 2;
  std::string cerr;
  auto chain = nf::build_chain(cfg.role == Role::kSwitch ? "forward" : cfg.chain,
                               cfg.nf_config.get(), cerr);
  if (!chain) return (err = (cfg.source.empty() ? std::string() : cfg.source + ": ") + cerr), 2;

  const uint32_t reframe_hold = cfg.reframe_us > 0 ? 16384 : 0;
  const uint32_t pool_n = Pools::size_for(cfg, reframe_hold);
  EalOptions eo;
  eo.mem_mb = cfg.mem_mb ? cfg.mem_mb : unsigned(Pools::bytes_for(pool_n) * 2 / (1 << 20)) + 128;
  eo.lcores = cfg.nf_lcore ? 2 : 1;
  if (!eal_init(eo, err)) return 1;
  const int rc = run_switch(cfg, reader, writer, std::move(chain), pool_n, reframe_hold, res, err);
  eal_cleanup();
  return rc;
}

}  // namespace nfpark::dp
