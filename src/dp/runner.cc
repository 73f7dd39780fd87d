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
#include "dp/pcap_wire.h"
#include "dp/port.h"
#include "dp/run_report.h"
#include "dp/switch_mode.h"
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

// The NF server on its own lcore. The main lcore may end the run only when the server holds
// nothing: `epoch` counts polls and `busy` is set during one, so a reader that sees the same
// epoch and !busy before and after finding the server's RX ring empty knows that no packet was
// in the server's hands in between.
struct NfThread {
  NfServer* server;
  Port* port;
  std::atomic<bool> stop{false};
  std::atomic<bool> busy{false};
  std::atomic<uint64_t> epoch{0};
  std::atomic<uint64_t> activity{0};
  std::atomic<bool> flush_req{false};  // main asks the server to release what it holds

  bool idle() const {
    uint64_t e1 = epoch.load();
    bool b1 = busy.load();
    bool empty = port->rx_pending() == 0;
    bool b2 = busy.load();
    uint64_t e2 = epoch.load();
    return !b1 && !b2 && e1 == e2 && empty;
  }
};

int nf_thread_main(void* arg) {
  auto* t = static_cast<NfThread*>(arg);
  SteadyClock clock;
  while (!t->stop.load(std::memory_order_relaxed)) {
    t->busy.store(true);
    t->epoch.fetch_add(1);
    if (t->flush_req.load()) {
      t->server->flush(*t->port, clock.now());
      t->flush_req.store(false);
    }
    uint16_t n = t->server->poll(*t->port, clock.now());
    while (!t->port->flush()) {  // nothing may stay in the server's hands between polls
    }
    t->busy.store(false);
    if (n) t->activity.fetch_add(1, std::memory_order_relaxed);
  }
  t->server->flush(*t->port, clock.now());
  while (!t->port->flush()) {
  }
  return 0;
}

bool uses_tags(Mode m) { return m == Mode::kPayloadPark || m == Mode::kQueueMem; }

// Packets a mode may hold at once, which the pools must be able to supply on top of the rings.
uint32_t mode_holds(const RunConfig& c) {
  switch (c.mode) {
    case Mode::kPayloadPark: return c.park.slots * std::max<uint32_t>(c.park.slices, 1);
    case Mode::kQueueMem: return uint32_t(2 * c.queuemem.max_held());
    case Mode::kNfSlicer: return uint32_t(c.slicer.entries) * std::max<uint32_t>(c.slicer.cores, 1);
    default: return 0;
  }
}

}  // namespace

int run(const RunConfig& cfg, RunResult& res, std::string& err) {
  res.mode = std::string(to_string(cfg.mode));
  if (cfg.role == Role::kNf) return run_nf_role(cfg, res, err);
  if (cfg.role == Role::kSwitch && cfg.nf_port.empty()) {
    err = "role switch needs the port to the NF server: --nf-port vdev:net_memif0,role=server,...";
    return 2;
  }
  const bool live = !cfg.traffic_ports.empty();
  if (live && cfg.traffic_ports.size() != 2) {
    err = "--traffic takes two ports, A,B (packets in on A leave on B and vice versa)";
    return 2;
  }
  if (!live && cfg.in_path.empty()) {
    err = "no input: give --in FILE.pcap or --traffic A,B (or [run] in = \"...\")";
    return 2;
  }
  trace::TraceReader reader;
  if (!live && !reader.open(cfg.in_path)) {
    err = reader.error();
    return 2;
  }
  trace::PcapWriter writer;
  if (!cfg.out_path.empty() && !writer.open(cfg.out_path, trace::Precision::kNano)) {
    err = writer.error();
    return 2;
  }
  std::string cerr;
  auto chain = nf::build_chain(cfg.role == Role::kSwitch ? "forward" : cfg.chain,
                               cfg.nf_config.get(), cerr);
  if (!chain) {
    err = (cfg.source.empty() ? std::string() : cfg.source + ": ") + cerr;
    return 2;
  }

  // Pool sizing: every slot may hold a parked packet, plus what the rings and backlogs hold.
  const uint32_t reframe_hold = cfg.reframe_us > 0 ? 16384 : 0;
  const uint32_t pool_n =
      cfg.pool_mbufs ? cfg.pool_mbufs : mode_holds(cfg) + reframe_hold + 6 * kRing + 4096;
  const uint64_t bytes = uint64_t(pool_n) * (kDataRoom + kHeaderRoom + 3 * 256) + (64ull << 20);
  EalOptions eo;
  eo.mem_mb = cfg.mem_mb ? cfg.mem_mb : unsigned(bytes * 2 / (1 << 20)) + 128;
  eo.lcores = cfg.nf_lcore ? 2 : 1;
  if (!eal_init(eo, err)) return 1;
  int rc = 0;
  {
    if (!MbufMeta::register_meta()) {
      err = "cannot register the mbuf dynamic field";
      eal_cleanup();
      return 1;
    }
    rte_mempool* pkts = rte_pktmbuf_pool_create("pkts", pool_n, 256, 0, kDataRoom, 0);
    rte_mempool* hdrs = rte_pktmbuf_pool_create("hdrs", pool_n, 256, 0, kHeaderRoom, 0);
    rte_mempool* ind = rte_pktmbuf_pool_create("ind", pool_n, 256, 0, 0, 0);
    // nicmem: frames land in a fixed-size "NIC memory" pool, host memory when it is empty.
    rte_mempool* nic = cfg.mode == Mode::kNicmem
                           ? rte_pktmbuf_pool_create("nicmem", cfg.nicmem_mbufs, 0, 0, kDataRoom, 0)
                           : pkts;
    if (!pkts || !hdrs || !ind || !nic) {
      err = "cannot create mempools of " + std::to_string(pool_n) + " mbufs (raise --mem-mb)";
      eal_cleanup();
      return 1;
    }
    MbufOps::pools = {pkts, hdrs, ind};
    res.ran = true;
    // Traffic ports: one ring port fed from the pcap (packets leave where they came in), or
    // two live ports (packets in on one leave on the other).
    Port tports[2], sw_nf, nf_side;
    const int ntp = live ? 2 : 1;
    Port& traffic = tports[0];
    rte_ring *wire_in = nullptr, *wire_out = nullptr;
    auto mode = make_switch_mode(cfg, nic, err);
    const bool external_nf = cfg.role == Role::kSwitch;
    bool ok = mode != nullptr;
    if (ok && live) {
      // nicmem/split on live ports: ask the NIC for a header/data split (BUFFER_SPLIT).
      const BufferSplit bs{hdrs, nic, uint16_t(cfg.header_segment)};
      const bool nicsplit = cfg.mode == Mode::kNicmem || cfg.mode == Mode::kSplit;
      ok = Port::open(cfg.traffic_ports[0], nic, tports[0], err, nicsplit ? &bs : nullptr) &&
           Port::open(cfg.traffic_ports[1], nic, tports[1], err, nicsplit ? &bs : nullptr);
    } else if (ok) {
      ok = Port::ring_ends("traffic", pkts, traffic, wire_in, wire_out, err, kRing);
    }
    ok = ok && (external_nf ? Port::open(cfg.nf_port, pkts, sw_nf, err)
                            : Port::ring_pair("nflink", pkts, sw_nf, nf_side, err, kRing));
    if (!ok) {
      eal_cleanup();
      return mode ? 1 : 2;
    }
    // Where a packet leaves: the other live port, or the one traffic port.
    auto egress = [&](rte_mbuf* m) -> Port& {
      return live && m->port == tports[0].id() ? tports[1] : tports[0];
    };
    auto send = [&](std::vector<rte_mbuf*>& v) {
      if (v.empty()) return;
      if (!live) {
        traffic.tx(v.data(), uint16_t(v.size()));
        return;
      }
      for (rte_mbuf* m : v) egress(m).tx(&m, 1);
    };
    auto traffic_flushed = [&] {
      bool all = true;
      for (int i = 0; i < ntp; ++i) all = tports[i].flush() && all;
      return all;
    };
    auto traffic_backlogged = [&] {
      for (int i = 0; i < ntp; ++i)
        if (tports[i].backlogged()) return true;
      return false;
    };
    std::optional<park::TagFormat> fmt;
    if (uses_tags(cfg.mode)) fmt = cfg.park.format;
    NfServer server(std::move(chain), fmt, cfg.notify_drops, cfg.faults, pkts,
                    cfg.mode == Mode::kNfSlicer);
    const bool trace_time = !live;
    server.use_trace_time(trace_time);
    if (cfg.reframe_us > 0) {
      reframe::ReorderConfig rc;
      rc.t_buff = Nanos(cfg.reframe_us * 1000);
      rc.max_held_packets = reframe_hold;
      if (std::string e = rc.validate(); !e.empty()) {
        err = "reframe: " + e;
        eal_cleanup();
        return 2;
      }
      server.set_reframer(rc);
    }
    Feeder feeder(reader, pkts, nic, wire_in, cfg.pace);
    Writer out(cfg.out_path.empty() || live ? nullptr : &writer, wire_out);

    NfThread nft{&server, &nf_side};
    if (cfg.nf_lcore && !external_nf) rte_eal_remote_launch(nf_thread_main, &nft, rte_get_next_lcore(-1, 1, 0));

    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    SteadyClock clock;
    const Nanos start = clock.now();
    feeder.start(start);
    // How long nothing must move before the run is over: longer when the NF is another process.
    const Nanos quiet = std::max<Nanos>(external_nf ? 200 * kMilli : 2 * kMilli,
                                        Nanos(cfg.faults.delay_us * 3000));
    Nanos last_activity = start, next_progress = start + 2 * kSecond;
    uint64_t seen_nf_activity = 0;
    std::vector<rte_mbuf*> to_nf, to_out;
    to_nf.reserve(8 * kBurst);
    to_out.reserve(8 * kBurst);
    int end_phase = 0;
    bool seen_traffic = false;
    rte_mbuf* b[kBurst];
    for (;;) {
      const Nanos now = clock.now();
      uint32_t work = live ? 0 : feeder.retry() + (g_stop ? 0 : feeder.feed(now));
      // Switch: traffic -> NF.
      for (int t = 0; t < ntp && !g_stop; ++t) {
        if (!sw_nf.flush() || !traffic_flushed()) break;
        uint16_t n = tports[t].rx(b, kBurst);
        if (!n) continue;
        tports[t].count_rx(b, n);
        if (live) seen_traffic = true;
        to_nf.clear();
        to_out.clear();
        mode->to_nf(b, n, to_nf, to_out);
        if (!to_nf.empty()) sw_nf.tx(to_nf.data(), uint16_t(to_nf.size()));
        send(to_out);
        work += n;
      }
      // NF server, inline.
      if (external_nf) {
      } else if (!cfg.nf_lcore) {
        uint16_t n = server.poll(nf_side, now);
        // Held packets (fault delay, Reframer) count as work only while time moves on its own;
        // in trace time they wait for the end-of-input flush.
        work += n + (server.held() && !trace_time ? 1 : 0);
      } else {
        uint64_t a = nft.activity.load(std::memory_order_relaxed);
        if (a != seen_nf_activity) {
          seen_nf_activity = a;
          ++work;
        }
      }
      // Switch: NF -> traffic.
      if (traffic_flushed()) {
        uint16_t n = sw_nf.rx(b, kBurst);
        if (n) {
          sw_nf.count_rx(b, n);
          if (external_nf)
            for (uint16_t i = 0; i < n; ++i) MbufMeta::seq(b[i]) = MbufMeta::kUnknown;
          to_out.clear();
          mode->from_nf(b, n, to_out);
          send(to_out);
          work += n;
        }
      }
      if (!live) work += out.drain();
      if (work || traffic_backlogged() || sw_nf.backlogged() || nf_side.backlogged()) last_activity = now;
      // Live ports have no end of input: they run until a signal, the timeout, or --idle-exit.
      const bool input_done =
          live ? (cfg.idle_exit_s > 0 && seen_traffic &&
                  now - last_activity > Nanos(cfg.idle_exit_s * 1e9))
               : feeder.done();
      // Idle means: nothing moved for `quiet`, and no packet waits in a ring or a server's hands.
      const bool idle = now - last_activity > quiet && traffic.rx_pending() == 0 &&
                        sw_nf.rx_pending() == 0 && (external_nf || nf_side.rx_pending() == 0) &&
                        (!cfg.nf_lcore || external_nf || nft.idle());
      if ((input_done || g_stop) && idle) {
        // The end, in three steps, each after everything has settled: the NF server releases
        // what it holds (fault delays, Reframer) and the switch merges it; then the mode
        // releases what it holds (partial batches, stranded payloads); then stop.
        if (end_phase == 2) break;
        if (end_phase == 0) {
          if (external_nf) {
          } else if (!cfg.nf_lcore) {
            server.flush(nf_side, now);
          } else {
            nft.flush_req.store(true);
            for (int spin = 0; nft.flush_req.load() && spin < 100000000; ++spin) rte_pause();
          }
        } else {
          to_out.clear();
          mode->drain(to_out);
          send(to_out);
        }
        ++end_phase;
        last_activity = now;
      }
      if (now - start > Nanos(cfg.timeout_s * 1e9)) {
        if (live) break;  // a live run's length is its timeout
        err = "run timed out after " + std::to_string(cfg.timeout_s) + " s (see --timeout)";
        rc = 1;
        break;
      }
      if (cfg.progress && now > next_progress && !live) {
        std::fprintf(stderr, "\rnfpark run: %llu packets in, %llu out, %.1f s", (unsigned long long)feeder.packets,
                     (unsigned long long)out.packets, double(now - start) / 1e9);
        next_progress = now + kSecond;
      }
    }
    if (cfg.progress && clock.now() - start > 2 * kSecond) std::fputc('\n', stderr);
    if (cfg.nf_lcore && !external_nf) {
      nft.stop = true;
      rte_eal_mp_wait_lcore();
    }
    res.seconds = double(clock.now() - start) / 1e9;
    if (!feeder.error.empty()) {
      err = feeder.error;
      rc = 2;
    }
    // Anything left anywhere (only on timeout or signal) is freed here.
    // Counted as "abandoned": the run was cut short (signal, timeout) with packets in flight.
    uint64_t abandoned = 0;
    for (;;) {
      uint16_t n = sw_nf.rx(b, kBurst);
      if (!external_nf) n += nf_side.rx(b + n, uint16_t(kBurst - n));
      for (int t = 0; t < ntp && n < kBurst; ++t) n += tports[t].rx(b + n, uint16_t(kBurst - n));
      for (uint16_t i = 0; i < n; ++i) rte_pktmbuf_free(b[i]);
      abandoned += n;
      if (!n) break;
    }
    if (!live) {
      for (;;) {
        unsigned n = rte_ring_dequeue_burst(wire_in, reinterpret_cast<void**>(b), kBurst, nullptr);
        for (unsigned i = 0; i < n; ++i) rte_pktmbuf_free(b[i]);
        abandoned += n;
        if (!n) break;
      }
      out.drain();
      res.packets_in = feeder.packets;
      res.bytes_in = feeder.bytes;
      res.packets_out = out.packets;
      res.bytes_out = out.bytes;
    } else {
      for (int t = 0; t < 2; ++t) {
        for (int i = 0; i < 1000 && !tports[t].flush(); ++i) {
        }
        res.packets_in += tports[t].rx_packets;
        res.bytes_in += tports[t].rx_bytes;
        res.packets_out += tports[t].tx_packets;
        res.bytes_out += tports[t].tx_bytes;
      }
    }
    res.packets_to_nf = sw_nf.tx_packets;
    res.bytes_to_nf = sw_nf.tx_bytes;
    res.packets_from_nf = sw_nf.rx_packets;
    res.bytes_from_nf = sw_nf.rx_bytes;
    res.switch_drops = mode->drops() + server.coalesced + abandoned;
    report_server(server, !external_nf, res);
    report_mode(*mode, res);
    if (abandoned) res.drops.values["abandoned_at_exit"] = abandoned;
    if (live) {
      report_port("traffic_a", tports[0], res);
      report_port("traffic_b", tports[1], res);
      res.ports.values["hw_buffer_split"] = tports[0].hw_split() && tports[1].hw_split();
    } else {
      report_port("traffic", traffic, res);
    }
    report_port("switch_nf", sw_nf, res);
    if (!external_nf) report_port("nf_server", nf_side, res);

    for (int t = 0; t < ntp; ++t) tports[t].stop();
    sw_nf.stop();
    if (!external_nf) nf_side.stop();
    res.pools_full = rte_mempool_full(pkts) && rte_mempool_full(hdrs) && rte_mempool_full(ind) &&
                     rte_mempool_full(nic);
    if (!res.pools_full && rc == 0) {
      err = "mbuf leak: pools not full at exit (pkts " + std::to_string(rte_mempool_avail_count(pkts)) +
            "/" + std::to_string(pool_n) + ", hdrs " + std::to_string(rte_mempool_avail_count(hdrs)) +
            ", indirect " + std::to_string(rte_mempool_avail_count(ind)) + ")";
      rc = 1;
    }
    if (out.failed || (!cfg.out_path.empty() && !writer.close())) {
      err = writer.error().empty() ? "cannot write " + cfg.out_path : writer.error();
      rc = 1;
    }
  }
  eal_cleanup();
  return rc;
}

}  // namespace nfpark::dp
