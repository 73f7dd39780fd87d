// dp_harness: the closed-loop DPDK rig of switch_bench and nicmode_bench. It runs the real
// dataplane code (dp::make_switch_mode, dp::NfServer over an nf::Chain, dp::Port ring ports) on
// one lcore, as `nfpark run` does inline, with the wire replaced by a ring of recycled mbufs:
//
//   wire_in ring -> [traffic port] rx -> SwitchMode::to_nf -> [NF link a] tx
//                                                               | (rte ring)
//                                           NfServer::poll <- [NF link b] rx ; tx ->
//   wire_out ring <- [traffic port] tx <- SwitchMode::from_nf <- [NF link a] rx
//        '--------- recycle: restore the packet, enqueue on wire_in again ---------'
//
// `inflight` mbufs are loaded once per run (from the NIC-memory pool in nicmem mode) with
// generated frames and circulate until `warm + measure` packets have left the traffic port.
// Recycling is a pointer move plus, when the chain rewrites headers, a copy of the frame's first
// bytes from its pristine image (the wire sends the same packets again). A header segment that
// nicmem/split chained in front of the payload is unchained and the payload's headroom given back.
// After the measured section the loop stops refilling, drains what the mode and the server still
// hold, frees every mbuf and checks that every pool is full again (no leak, nothing lost).
// NF link: a ring pair (pointers move, no byte is copied) or, with LoopSpec::memif, a memif
// server/client pair in this process (each packet's bytes are copied into and out of shared
// memory, as between two processes: fewer bytes on the link cost less). memif does not carry
// mbuf metadata, so the wire finds a packet's frame by the IPv4 identification field (the
// generator writes the packet id there; frames are IPv4, fewer than 65536).
// Time: thread CPU and wall time of the measured section; TSC time inside the switch calls and
// inside NfServer::poll, to split the loop's cost between the switch and the NF server.
#pragma once
#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "bench_stats.h"
#include "dp/eal.h"
#include "dp/mbuf_ops.h"
#include "dp/mbuf_pool.h"
#include "dp/nf_server.h"
#include "dp/port.h"
#include "dp/switch_mode.h"
#include "nf/registry.h"
#include "run/load.h"
#include "run/nf_assembly.h"
#include "trace/generator.h"

namespace nfpark::bench {

// Generated frames, one pristine image each.
struct Frames {
  std::vector<uint8_t> bytes;
  std::vector<uint32_t> off, len;
  size_t size() const { return len.size(); }
  const uint8_t* data(size_t i) const { return bytes.data() + off[i]; }
  static Frames generate(const trace::GenConfig& g) {
    Frames f;
    trace::Generator gen(g);
    Nanos ts;
    const std::vector<uint8_t>* fr;
    uint32_t flow;
    while (gen.next(ts, fr, flow)) {
      f.off.push_back(uint32_t(f.bytes.size()));
      f.len.push_back(uint32_t(fr->size()));
      f.bytes.insert(f.bytes.end(), fr->begin(), fr->end());
    }
    return f;
  }
  double mean_len() const {
    double s = 0;
    for (uint32_t l : len) s += l;
    return len.empty() ? 0 : s / double(len.size());
  }
};

// EAL, pools and ports, created once per process and reused by every run.
struct DpEnv {
  rte_mempool *pkts = nullptr, *hdrs = nullptr, *ind = nullptr, *nic = nullptr;
  dp::Port traffic, sw_nf, nf_side;
  dp::Port sw_memif, nf_memif;  // valid when has_memif
  bool has_memif = false;
  rte_ring *wire_in = nullptr, *wire_out = nullptr;
  static constexpr uint32_t kPool = 16384, kRing = 4096;

  bool init(std::string& err) {
    dp::EalOptions eo;
    eo.mem_mb = 512;
    if (!dp::eal_init(eo, err)) return false;
    if (!dp::MbufMeta::register_meta()) return (err = "cannot register mbuf dynfield"), false;
    const uint32_t room = RTE_MBUF_DEFAULT_BUF_SIZE, hroom = 256 + RTE_PKTMBUF_HEADROOM;
    pkts = dp::mbuf_pool_create("b_pkts", kPool, 256, room);
    hdrs = dp::mbuf_pool_create("b_hdrs", kPool, 256, hroom);
    ind = dp::mbuf_pool_create("b_ind", kPool, 256, 0);
    nic = dp::mbuf_pool_create("b_nicmem", kPool, 0, room);
    if (!pkts || !hdrs || !ind || !nic) return (err = "cannot create mempools"), false;
    dp::MbufOps::pools = {pkts, hdrs, ind};
    return dp::Port::ring_ends("traffic", pkts, traffic, wire_in, wire_out, err, kRing) &&
           dp::Port::ring_pair("nflink", pkts, sw_nf, nf_side, err, kRing);
  }
  // A memif pair as a second NF link. False (with err) when memif is unavailable.
  bool init_memif(std::string& err) {
    const std::string sock = "socket=/tmp/nfpark-bench-" + std::to_string(getpid()) + ".sock";
    if (!dp::Port::open("vdev:net_memif0,role=server,id=0," + sock, pkts, sw_memif, err) ||
        !dp::Port::open("vdev:net_memif1,role=client,id=0," + sock, pkts, nf_memif, err))
      return false;
    for (int i = 0; i < 5000; ++i) {  // the control channel connects in the background
      rte_eth_link a{}, b{};
      rte_eth_link_get_nowait(sw_memif.id(), &a);
      rte_eth_link_get_nowait(nf_memif.id(), &b);
      if (a.link_status && b.link_status) return has_memif = true;
      rte_delay_ms(1);
    }
    err = "memif link did not come up within 5 s";
    return false;
  }
  // Stops every port (before dp::eal_cleanup(), which will not close a started device).
  void stop() {
    for (dp::Port* p : {&traffic, &sw_nf, &nf_side, &sw_memif}) p->stop();
    // memif's control thread must handle the server's disconnect before the client stops:
    // stopping both back to back made DPDK 22.11 log "EAL: Error: Invalid memory" at exit.
    rte_delay_ms(50);
    nf_memif.stop();
  }
  bool pools_full() const {
    return rte_mempool_full(pkts) && rte_mempool_full(hdrs) && rte_mempool_full(ind) &&
           rte_mempool_full(nic);
  }
};

// main()'s first step in every DPDK bench: EAL, pools and ports, or one line on stderr.
inline bool init_or_report(DpEnv& env, const char* bench) {
  std::string err;
  if (env.init(err)) return true;
  std::fprintf(stderr, "%s: %s\n", bench, err.c_str());
  return false;
}

// main()'s last step in every DPDK bench: the RATIO lines, ports stopped, EAL released; the
// process's exit status.
inline int finish(DpEnv& env, const std::vector<std::string>& summary, bool ok) {
  std::printf("\n");
  for (const auto& l : summary) std::printf("%s\n", l.c_str());
  env.stop();
  dp::eal_cleanup();
  return ok ? 0 : 1;
}

// One mode a bench compares with its baseline: the name it prints, the mode, and (payloadpark
// only) the bytes parked per packet (0 = the whole payload) and the tag format.
struct Variant {
  const char* name;
  dp::Mode mode;
  uint32_t park_bytes = 0;
  park::TagFormat format = park::TagFormat::kNfpark;
};

// The parking benches' two traffic patterns: 1500 B frames, and the generator's `dc` size mix.
struct Traffic {
  const char* label;
  trace::SizeSpec size;
  // The benches' frames of this size: 1024 of them, 256 flows, UDP/TCP mix, fixed seed.
  Frames frames() const {
    trace::GenConfig g;
    g.packets = 1024;
    g.flows = 256;
    g.size = size;
    g.proto = trace::GenProto::kMix;
    g.seed = 3;
    return Frames::generate(g);
  }
};
inline Traffic traffic_1500() {
  Traffic t{"1500B", {}};
  t.size.fixed = 1500;
  return t;
}
inline Traffic traffic_dc() {
  Traffic t{"dc", {}};
  t.size.kind = trace::SizeKind::kDc;
  return t;
}

struct LoopSpec {
  dp::RunConfig cfg;  // mode, chain, park/queuemem/slicer parameters
  uint32_t inflight = 1024;
  uint64_t warm = 20000, measure = 200000;  // packets out of the traffic port
  bool restore = false;     // the chain rewrites headers: copy the pristine headers back
  bool memif = false;       // NF link over memif instead of a ring pair
  bool check_pools = true;  // pools full after the run (false: loops share them, workers_bench)
};

struct LoopResult {
  bool ok = false;
  std::string err;
  uint64_t packets = 0;  // measured packets out of the traffic port
  double cpu_s = 0, wall_s = 0;
  // TSC time per packet inside the mode's calls (to_nf + from_nf) and inside NfServer::poll.
  // Intervals longer than kPreempted are left out (the thread lost the core meanwhile).
  double switch_ns = 0, server_ns = 0;
  double to_nf_ns = 0, from_nf_ns = 0;  // switch_ns = to_nf_ns + from_nf_ns
  uint64_t to_nf_pkts = 0, to_nf_bytes = 0, from_nf_pkts = 0, from_nf_bytes = 0;
  uint64_t wire_bytes = 0, server_rx = 0, mode_drops = 0, nf_drops = 0, rebuilt = 0;
  CounterMap park;  // the mode's counters at the end of the run
  double mpps() const { return cpu_s > 0 ? double(packets) / cpu_s / 1e6 : 0; }
  double per_pkt(uint64_t v) const { return packets ? double(v) / double(packets) : 0; }
};

class Loop {
 public:
  static constexpr double kPreempted = 100e-6;  // s: a burst call never takes this long
  Loop(DpEnv& e, const Frames& f, const LoopSpec& s)
      : e_(e),
        f_(f),
        s_(s),
        sw_(s.memif ? e.sw_memif : e.sw_nf),
        nf_(s.memif ? e.nf_memif : e.nf_side) {}

  LoopResult run() {
    LoopResult r;
    dp::RunConfig keyed = s_.cfg;  // tags and tokens keyed as in every run
    if (!run::derive_keys(keyed, r.err)) return r;
    auto mode = dp::make_switch_mode(keyed, e_.nic, r.err);
    if (!mode) return r;
    // The NF server as every role assembles it (run/nf_assembly.h), without faults.
    const run::NfServerSpec spec = run::nf_server_spec(s_.cfg, run::Budget{}, false, r.err);
    if (!r.err.empty()) return r;
    auto step = run::build_nf_step<dp::MbufOps>(s_.cfg, spec, r.err);
    if (!step) return r;
    const dp::Mode m = s_.cfg.mode;
    dp::NfServer server(std::move(step), dp::Faults{}, spec.shape, e_.pkts);
    rte_mempool* src = m == dp::Mode::kNicmem ? e_.nic : e_.pkts;
    for (uint32_t i = 0; i < s_.inflight; ++i) {
      rte_mbuf* mb = rte_pktmbuf_alloc(src);
      if (!mb) return (r.err = "wire: pool empty"), r;
      dp::MbufMeta::seq(mb) = i;
      load(mb);
      if (rte_ring_enqueue(e_.wire_in, mb) != 0) return (r.err = "wire ring full"), r;
    }
    const double ns_per_cycle = 1e9 / double(rte_get_tsc_hz());
    const uint64_t target = s_.warm + s_.measure;
    uint64_t out = 0, freed = 0, idle = 0;
    Tsc to_nf_t, from_nf_t, srv_t;
    const uint64_t preempted = uint64_t(double(rte_get_tsc_hz()) * kPreempted);
    bool measuring = false, drained = false;
    Stopwatch sw;
    dp::Port snap;  // counters at the start of the measured section
    std::vector<rte_mbuf*> to_nf, to_out;
    to_nf.reserve(8 * dp::kBurst);
    to_out.reserve(8 * dp::kBurst);
    rte_mbuf* b[dp::kBurst];
    rte_mbuf* in[dp::kBurst];  // a burst offered to the mode; what it refused waits here
    uint16_t refused = 0;
    while (freed < s_.inflight) {
      uint64_t work = 0;
      // The wire: what left the traffic port comes back in (or is freed once measured).
      unsigned n =
          rte_ring_dequeue_burst(e_.wire_out, reinterpret_cast<void**>(b), dp::kBurst, nullptr);
      unsigned m = 0;
      for (unsigned i = 0; i < n; ++i) {
        if (measuring) r.wire_bytes += b[i]->pkt_len;
        if (rte_mbuf* x = recycle(b[i], r))
          b[m++] = x;
        else
          ++freed;  // could not rebuild it (pool empty): one packet fewer in flight
      }
      if (out < target) {
        rte_ring_enqueue_burst(e_.wire_in, reinterpret_cast<void**>(b), m, nullptr);
      } else {
        for (unsigned i = 0; i < m; ++i) rte_pktmbuf_free(b[i]);
        freed += m;
      }
      out += n;
      work += n;
      if (!measuring && out >= s_.warm && out < target) {
        measuring = true;
        sw = Stopwatch();
        snap.tx_packets = sw_.tx_packets, snap.tx_bytes = sw_.tx_bytes;
        snap.rx_packets = sw_.rx_packets, snap.rx_bytes = sw_.rx_bytes;
        r.server_rx = server.rx();
        to_nf_t = from_nf_t = srv_t = Tsc{};
        r.packets = out;
      } else if (measuring && out >= target) {
        measuring = false;
        r.cpu_s = sw.cpu(), r.wall_s = sw.wall();
        r.packets = out - r.packets;
        r.to_nf_ns = to_nf_t.per_pkt() * ns_per_cycle;
        r.from_nf_ns = from_nf_t.per_pkt() * ns_per_cycle;
        r.switch_ns = r.to_nf_ns + r.from_nf_ns;
        r.server_ns = srv_t.per_pkt() * ns_per_cycle;
        r.to_nf_pkts = sw_.tx_packets - snap.tx_packets;
        r.to_nf_bytes = sw_.tx_bytes - snap.tx_bytes;
        r.from_nf_pkts = sw_.rx_packets - snap.rx_packets;
        r.from_nf_bytes = sw_.rx_bytes - snap.rx_bytes;
        r.server_rx = server.rx() - r.server_rx;
      }
      // Switch: traffic -> NF.
      if (sw_.flush() && e_.traffic.flush()) {
        const uint16_t k = refused ? refused : e_.traffic.rx(in, dp::kBurst);
        if (k) {
          uint64_t t0 = rte_rdtsc();
          if (!refused) e_.traffic.count_rx(in, k);
          to_nf.clear();
          to_out.clear();
          const uint16_t took = mode->to_nf(in, k, to_nf, to_out);
          to_nf_t.add(rte_rdtsc() - t0, took, preempted);
          refused = uint16_t(k - took);
          if (took && refused) std::copy(in + took, in + k, in);
          if (!to_nf.empty()) sw_.tx(to_nf.data(), uint16_t(to_nf.size()));
          if (!to_out.empty()) e_.traffic.tx(to_out.data(), uint16_t(to_out.size()));
          work += took;
        }
      }
      // NF server, inline.
      const uint64_t t1 = rte_rdtsc();
      const uint16_t polled = server.poll(nf_, Nanos(double(t1) * ns_per_cycle));
      srv_t.add(rte_rdtsc() - t1, polled, preempted);
      work += polled;
      // Switch: NF -> traffic.
      if (e_.traffic.flush()) {
        uint16_t k = sw_.rx(b, dp::kBurst);
        if (k) {
          uint64_t t0 = rte_rdtsc();
          sw_.count_rx(b, k);
          to_out.clear();
          mode->from_nf(b, k, 0, to_out);
          mode->poll(server.clock(), sw_.rx_pending() == 0, to_out);  // the mode's timers
          from_nf_t.add(rte_rdtsc() - t0, k, preempted);
          if (!to_out.empty()) e_.traffic.tx(to_out.data(), uint16_t(to_out.size()));
          work += k;
        }
      }
      idle = work ? 0 : idle + 1;
      if (idle > 100000) {  // nothing moves: release what the mode and the server hold
        if (drained) return (r.err = "stalled: packets lost in the loop"), r;
        server.flush(nf_, Nanos(double(rte_rdtsc()) * ns_per_cycle));
        to_out.clear();
        mode->nf_idle(to_out);  // the server holds nothing now: nothing more will come back
        mode->drain(to_out);
        if (!to_out.empty()) e_.traffic.tx(to_out.data(), uint16_t(to_out.size()));
        drained = true;
        idle = 0;
      }
    }
    r.mode_drops = mode->drops();
    r.nf_drops = server.nf_drops();
    mode->report(r.park.sink());
    if (s_.check_pools && !e_.pools_full())
      return (r.err = "mbuf leak: pools not full after the run"), r;
    r.ok = r.packets > 0;
    if (!r.ok) r.err = "no packet measured";
    return r;
  }

 private:
  void load(rte_mbuf* mb) {
    const size_t i = dp::MbufMeta::seq(mb) % f_.size();
    std::memcpy(rte_pktmbuf_mtod(mb, uint8_t*), f_.data(i), f_.len[i]);
    mb->data_len = uint16_t(f_.len[i]);
    mb->pkt_len = f_.len[i];
  }
  // Gives the wire back the packet it sent: one segment, original headers.
  rte_mbuf* recycle(rte_mbuf* mb, LoopResult& r) {
    if (mb->nb_segs == 2 && mb->pool == e_.hdrs) {  // nicmem/split header segment
      rte_mbuf* payload = mb->next;
      const uint16_t h = mb->data_len;
      mb->next = nullptr;
      mb->nb_segs = 1;
      mb->pkt_len = h;
      rte_pktmbuf_free(mb);
      rte_pktmbuf_prepend(payload, h);  // the header bytes are still there, untouched
      mb = payload;
    }
    if (s_.memif)  // received copies carry no dynfield: the packet id is in the IPv4 header
      dp::MbufMeta::seq(mb) = rte_be_to_cpu_16(*rte_pktmbuf_mtod_offset(mb, uint16_t*, 18));
    const size_t i = dp::MbufMeta::seq(mb) % f_.size();
    // A tag inserted and removed again may leave the frame a few bytes off its usual start:
    // that is fine as long as the frame is intact and has headroom for the next tag.
    if (mb->nb_segs != 1 || mb->pkt_len != f_.len[i] || rte_mbuf_refcnt_read(mb) != 1 ||
        mb->data_off < RTE_PKTMBUF_HEADROOM / 2 || mb->data_off > 2 * RTE_PKTMBUF_HEADROOM) {
      ++r.rebuilt;  // not what was sent: rebuild it from the pristine frame
      rte_mempool* pool = mb->pool;
      const uint64_t seq = dp::MbufMeta::seq(mb);
      rte_pktmbuf_free(mb);
      mb = rte_pktmbuf_alloc(pool);
      if (!mb) return nullptr;
      dp::MbufMeta::seq(mb) = seq;
      load(mb);
    } else if (s_.restore) {
      std::memcpy(rte_pktmbuf_mtod(mb, uint8_t*), f_.data(i), std::min<uint32_t>(f_.len[i], 128));
    }
    return mb;
  }

  struct Tsc {  // cycles and packets of the intervals kept
    uint64_t cyc = 0, pkts = 0;
    void add(uint64_t dt, uint64_t k, uint64_t limit) {
      if (dt < limit) cyc += dt, pkts += k;
    }
    double per_pkt() const { return pkts ? double(cyc) / double(pkts) : 0; }
  };
  DpEnv& e_;
  const Frames& f_;
  const LoopSpec& s_;
  dp::Port& sw_;  // NF link, switch side
  dp::Port& nf_;  // NF link, NF server side
};

// NFPARK_BENCH_ONLY=MODE: run the baseline `base` and MODE only (e.g. under perf record).
inline bool selected(const char* name, const char* base) {
  const char* only = std::getenv("NFPARK_BENCH_ONLY");
  return !only || !*only || std::strcmp(only, name) == 0 || std::strcmp(name, base) == 0;
}

// One variant over the repetitions: seconds per packet (thread CPU, wall, inside the NF server),
// one sample per repetition, and the last run's result.
struct Runs {
  Series cpu, wall, server;
  LoopResult last;
};

// Runs every (name, spec) `reps` times, interleaved (a, b, ..., a, b, ...), over the same frames.
// False, after one line on stderr naming `what` and the variant, if a run fails.
inline bool run_interleaved(DpEnv& env, const Frames& frames, int reps,
                            const std::vector<std::pair<std::string, LoopSpec>>& specs,
                            const std::string& what, std::map<std::string, Runs>& out) {
  for (int rep = 0; rep < reps; ++rep) {
    for (const auto& [name, spec] : specs) {
      Loop loop(env, frames, spec);
      LoopResult r = loop.run();
      if (!r.ok) {
        std::fprintf(stderr, "%s %s: %s\n", what.c_str(), name.c_str(), r.err.c_str());
        return false;
      }
      Runs& a = out[name];
      a.cpu.add(r.cpu_s / double(r.packets));
      a.wall.add(r.wall_s / double(r.packets));
      a.server.add(r.server_ns * 1e-9);
      a.last = r;
    }
  }
  return true;
}

}  // namespace nfpark::bench
