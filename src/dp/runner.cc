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
#include "dp/port.h"
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

// The wire in front of the traffic port: input pcap -> mbufs -> the port's RX ring.
class Feeder {
 public:
  // `primary`: where received frames land (the NIC-memory pool in nicmem mode); when it is
  // empty they land in `pool` instead (nicmem's secondary ring), counted in `fallbacks`.
  Feeder(trace::TraceReader& r, rte_mempool* pool, rte_mempool* primary, rte_ring* ring,
         std::vector<Nanos>& ts, bool pace)
      : reader_(r), pool_(pool), primary_(primary), ring_(ring), ts_(ts), pace_(pace) {}
  void start(Nanos now) { start_ = now; }
  // Enqueues up to one burst; returns packets fed. Sets done() at end of input.
  uint32_t feed(Nanos now) {
    if (done_ || has_pending_) return 0;
    if (rte_ring_free_count(ring_) < kBurst || rte_ring_count(ring_) > 4 * kBurst) return 0;
    rte_mbuf* b[kBurst];
    uint32_t n = 0;
    trace::PacketRecord rec;
    while (n < kBurst) {
      if (has_paced_) {  // a packet read earlier, waiting for its time on the wire
        if (now - start_ < paced_.ts - first_ts_) break;
        rec = paced_;
        has_paced_ = false;
      } else {
        auto st = reader_.next(rec);
        if (st != trace::ReadStatus::kPacket) {
          done_ = true;
          if (st == trace::ReadStatus::kError) error = reader_.error();
          break;
        }
        if (pace_) {
          if (ts_.empty() && n == 0 && first_ts_ == INT64_MIN) first_ts_ = rec.ts;
          if (now - start_ < rec.ts - first_ts_) {
            paced_ = rec;
            has_paced_ = true;
            break;
          }
        }
      }
      rte_mbuf* m = to_mbuf(rec);
      if (!m) {  // pool empty: the pipeline holds too much; retry this packet later
        pending_ = rec;
        has_pending_ = true;
        break;
      }
      b[n++] = m;
    }
    if (n) {
      unsigned q = rte_ring_enqueue_burst(ring_, reinterpret_cast<void**>(b), n, nullptr);
      for (unsigned i = q; i < n; ++i) rte_pktmbuf_free(b[i]);  // cannot happen: space checked
      packets += q;
    }
    return n;
  }
  bool done() const { return done_ && !has_pending_ && !has_paced_; }
  uint64_t packets = 0, bytes = 0, fallbacks = 0;
  std::string error;

 private:
  rte_mbuf* alloc() {
    if (primary_ != pool_) {
      if (rte_mbuf* m = rte_pktmbuf_alloc(primary_)) return m;
      ++fallbacks;
    }
    return rte_pktmbuf_alloc(pool_);
  }
  rte_mbuf* to_mbuf(const trace::PacketRecord& rec) {
    rte_mbuf* head = alloc();
    if (!head) return nullptr;
    uint32_t off = 0;
    rte_mbuf* last = head;
    while (off < rec.len) {
      rte_mbuf* seg = off == 0 ? head : alloc();
      if (!seg) {
        rte_pktmbuf_free(head);
        return nullptr;
      }
      uint32_t room = rte_pktmbuf_tailroom(seg);
      uint32_t take = rec.len - off < room ? rec.len - off : room;
      std::memcpy(rte_pktmbuf_mtod(seg, uint8_t*), rec.data + off, take);
      seg->data_len = uint16_t(take);
      if (seg != head) {
        last->next = seg;
        head->nb_segs++;
        last = seg;
      }
      off += take;
    }
    head->pkt_len = rec.len;
    MbufMeta::seq(head) = ts_.size();
    ts_.push_back(rec.ts);
    bytes += rec.len;
    return head;
  }

  trace::TraceReader& reader_;
  rte_mempool *pool_, *primary_;
  rte_ring* ring_;
  std::vector<Nanos>& ts_;
  bool pace_;
  bool done_ = false, has_pending_ = false, has_paced_ = false;
  trace::PacketRecord pending_, paced_;
  Nanos start_ = 0, first_ts_ = INT64_MIN;

 public:
  // Retry a packet that found the pool empty.
  uint32_t retry() {
    if (!has_pending_) return 0;
    rte_mbuf* m = to_mbuf(pending_);
    if (!m) return 0;
    if (rte_ring_enqueue(ring_, m) != 0) {
      bytes -= m->pkt_len;
      rte_pktmbuf_free(m);
      ts_.pop_back();
      return 0;
    }
    has_pending_ = false;
    ++packets;
    return 1;
  }
};

// The wire behind the traffic port: the port's TX ring -> output pcap.
class Writer {
 public:
  Writer(trace::PcapWriter* w, rte_ring* ring, const std::vector<Nanos>& ts)
      : w_(w), ring_(ring), ts_(ts), buf_(16384) {}
  uint32_t drain() {
    rte_mbuf* b[kBurst];
    unsigned n = rte_ring_dequeue_burst(ring_, reinterpret_cast<void**>(b), kBurst, nullptr);
    for (unsigned i = 0; i < n; ++i) {
      rte_mbuf* m = b[i];
      bytes += m->pkt_len;
      if (w_) {
        const uint8_t* d = static_cast<const uint8_t*>(rte_pktmbuf_read(m, 0, m->pkt_len, buf_.data()));
        // Stamp with the input time; a packet whose sequence number was lost in another process
        // (whole packets back from an external NF) takes the previous packet's time.
        uint64_t seq = MbufMeta::seq(m);
        if (seq < ts_.size()) last_ts_ = ts_[seq];
        if (!w_->write(last_ts_, d, m->pkt_len, m->pkt_len)) failed = true;
      }
      rte_pktmbuf_free(m);
    }
    packets += n;
    return n;
  }
  uint64_t packets = 0, bytes = 0;
  bool failed = false;

 private:
  trace::PcapWriter* w_;
  rte_ring* ring_;
  const std::vector<Nanos>& ts_;
  std::vector<uint8_t> buf_;
  Nanos last_ts_ = 0;
};

struct NfThread {
  NfServer* server;
  Port* port;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> activity{0};
};

int nf_thread_main(void* arg) {
  auto* t = static_cast<NfThread*>(arg);
  SteadyClock clock;
  while (!t->stop.load(std::memory_order_relaxed)) {
    uint16_t n = t->server->poll(*t->port, clock.now());
    if (n || t->server->held() || t->port->backlogged()) t->activity.fetch_add(1, std::memory_order_relaxed);
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
  if (cfg.in_path.empty()) {
    err = "no input: give --in FILE.pcap (or [run] in = \"...\" in the config)";
    return 2;
  }
  trace::TraceReader reader;
  if (!reader.open(cfg.in_path)) {
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
    Port traffic, sw_nf, nf_side;
    rte_ring *wire_in = nullptr, *wire_out = nullptr;
    auto mode = make_switch_mode(cfg, nic, err);
    const bool external_nf = cfg.role == Role::kSwitch;
    if (!mode || !Port::ring_ends("traffic", pkts, traffic, wire_in, wire_out, err, kRing) ||
        !(external_nf ? Port::open(cfg.nf_port, pkts, sw_nf, err)
                      : Port::ring_pair("nflink", pkts, sw_nf, nf_side, err, kRing))) {
      eal_cleanup();
      return mode ? 1 : 2;
    }
    std::optional<park::TagFormat> fmt;
    if (uses_tags(cfg.mode)) fmt = cfg.park.format;
    NfServer server(std::move(chain), fmt, cfg.notify_drops, cfg.faults, pkts,
                    cfg.mode == Mode::kNfSlicer);
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
    std::vector<Nanos> ts;
    Feeder feeder(reader, pkts, nic, wire_in, ts, cfg.pace);
    Writer out(cfg.out_path.empty() ? nullptr : &writer, wire_out, ts);

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
    bool drained = false;
    rte_mbuf* b[kBurst];
    for (;;) {
      const Nanos now = clock.now();
      uint32_t work = feeder.retry() + (g_stop ? 0 : feeder.feed(now));
      // Switch: traffic -> NF.
      if (sw_nf.flush() && traffic.flush()) {
        uint16_t n = traffic.rx(b, kBurst);
        if (n) {
          traffic.count_rx(b, n);
          to_nf.clear();
          to_out.clear();
          mode->to_nf(b, n, to_nf, to_out);
          if (!to_nf.empty()) sw_nf.tx(to_nf.data(), uint16_t(to_nf.size()));
          if (!to_out.empty()) traffic.tx(to_out.data(), uint16_t(to_out.size()));
          work += n;
        }
      }
      // NF server, inline.
      if (external_nf) {
      } else if (!cfg.nf_lcore) {
        uint16_t n = server.poll(nf_side, now);
        work += n + (server.held() ? 1 : 0);
      } else {
        uint64_t a = nft.activity.load(std::memory_order_relaxed);
        if (a != seen_nf_activity) {
          seen_nf_activity = a;
          ++work;
        }
      }
      // Switch: NF -> traffic.
      if (traffic.flush()) {
        uint16_t n = sw_nf.rx(b, kBurst);
        if (n) {
          sw_nf.count_rx(b, n);
          if (external_nf)
            for (uint16_t i = 0; i < n; ++i) MbufMeta::seq(b[i]) = MbufMeta::kUnknown;
          to_out.clear();
          mode->from_nf(b, n, to_out);
          if (!to_out.empty()) traffic.tx(to_out.data(), uint16_t(to_out.size()));
          work += n;
        }
      }
      work += out.drain();
      if (work || traffic.backlogged() || sw_nf.backlogged() || nf_side.backlogged()) last_activity = now;
      if ((feeder.done() || g_stop) && now - last_activity > quiet) {
        if (drained) break;
        // Nothing moves: release what the mode holds and go round once more to write it out.
        if (!cfg.nf_lcore && !external_nf) server.flush(nf_side, now);
        to_out.clear();
        mode->drain(to_out);
        if (!to_out.empty()) traffic.tx(to_out.data(), uint16_t(to_out.size()));
        drained = true;
        last_activity = now;
      }
      if (now - start > Nanos(cfg.timeout_s * 1e9)) {
        err = "run timed out after " + std::to_string(cfg.timeout_s) + " s (see --timeout)";
        rc = 1;
        break;
      }
      if (cfg.progress && now > next_progress) {
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
    for (;;) {
      uint16_t n = sw_nf.rx(b, kBurst);
      if (!external_nf) n += nf_side.rx(b + n, uint16_t(kBurst - n));
      if (n < kBurst) n += traffic.rx(b + n, uint16_t(kBurst - n));
      for (uint16_t i = 0; i < n; ++i) rte_pktmbuf_free(b[i]);
      if (!n) break;
    }
    for (;;) {
      unsigned n = rte_ring_dequeue_burst(wire_in, reinterpret_cast<void**>(b), kBurst, nullptr);
      for (unsigned i = 0; i < n; ++i) rte_pktmbuf_free(b[i]);
      if (!n) break;
    }
    out.drain();

    res.packets_in = feeder.packets;
    res.bytes_in = feeder.bytes;
    res.packets_out = out.packets;
    res.bytes_out = out.bytes;
    res.packets_to_nf = sw_nf.tx_packets;
    res.bytes_to_nf = sw_nf.tx_bytes;
    res.packets_from_nf = sw_nf.rx_packets;
    res.bytes_from_nf = sw_nf.rx_bytes;
    res.nf_drops = server.nf_drops;
    res.switch_drops = mode->drops() + server.coalesced;
    if (const FaultCounters* f = server.faults()) {
      res.fault_drops = f->dropped;
      res.duplicates = f->duplicated;
      auto s = res.faults.sink();
      s("dropped", f->dropped);
      s("duplicated", f->duplicated);
      s("reordered", f->reordered);
      s("corrupted", f->corrupted);
      s("delayed", f->delayed);
    }
    auto ds = res.drops.sink();
    ds("nf", res.nf_drops);
    ds("fault_injected", res.fault_drops);
    mode->drop_reasons(ds);
    mode->report(res.park.sink());
    if (!external_nf) server.chain().counters(res.nf.sink());
    const auto& ep = server.endpoint();
    auto es = res.nf.sink("server.");
    es("header_only", ep.header_only);
    es("whole", ep.whole);
    es("drop_notified", ep.drop_notified);
    es("drop_freed", ep.drop_freed);
    res.held_at_exit = mode->held();
    auto port_counters = [&](const char* name, const Port& p) {
      auto ps = res.ports.sink(std::string(name) + ".");
      ps("rx_packets", p.rx_packets);
      ps("rx_bytes", p.rx_bytes);
      ps("tx_packets", p.tx_packets);
      ps("tx_bytes", p.tx_bytes);
    };
    port_counters("traffic", traffic);
    port_counters("switch_nf", sw_nf);
    if (!external_nf) port_counters("nf_server", nf_side);

    traffic.stop();
    sw_nf.stop();
    if (!external_nf) nf_side.stop();
    res.pools_full = rte_mempool_full(pkts) && rte_mempool_full(hdrs) && rte_mempool_full(ind) &&
                     rte_mempool_full(nic);
    if (nic != pkts) res.park.values["nicmem_fallbacks"] = feeder.fallbacks;
    if (const auto* rf = server.reframer()) {
      const auto& st = rf->stats();
      res.reframe_on = true;
      res.reframe_slf_in = st.slf_in();
      res.reframe_slf_out = st.slf_out();
      res.reframe_held = st.held;
      res.reframe_useless_wait_us = double(st.useless_wait_ns) / 1000;
      rf->counters(res.reframe.sink());
      res.drops.values["reframe_coalesced"] = server.coalesced;
    }
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
