#include "sim/run.h"

#include <time.h>

#include <chrono>
#include <memory>

#include "nf/registry.h"
#include "sim/collector.h"
#include "sim/run_topology.h"
#include "trace/pcap_writer.h"

namespace nfpark::sim {

namespace {

double cpu_now() {  // this thread's CPU time: what the simulation cost, whatever else ran
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

double wall_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double gbps(uint64_t bytes, Picos over) {
  return over > 0 ? double(bytes) * 8.0 / (double(over) / double(kNs)) : 0;
}
double mpps(uint64_t pkts, Picos over) {
  return over > 0 ? double(pkts) / (double(over) / double(kUs)) : 0;
}

// Reads the counters every `interval` into rows of the time series; stops when the traffic is
// over and nothing else is pending.
class Sampler final : public EventHandler {
 public:
  Sampler(RunTopology& t, Picos interval, Picos stop, RunReport& r)
      : t_(t), interval_(interval), stop_(stop), r_(r) {
    set_tie(Rank::kSampler, 0);  // reads the state at the end of the instant
  }
  void on_event(uint64_t) override {
    Engine& e = t_.engine;
    t_.sw->settle();  // the ports' trains' dequeues until now (egress_port.h)
    IntervalRow row;
    row.t_ms = double(e.now()) / double(kMs);
    const FlowCounts& in = t_.collector->in();
    // the interval that just ended: [now - interval, now)
    const OutBucket out = t_.collector->take_bucket(uint64_t(e.now() / interval_) - 1);
    uint64_t nf_bytes = 0, nf_pkts = 0;
    for (uint16_t k = 0; k < t_.topo.nf_servers; ++k) {
      const PortCounters& c = t_.sw->port(t_.topo.traffic + k).counters();
      nf_bytes += c.tx_bytes;
      nf_pkts += c.tx_packets;
    }
    const Picos dt = e.now() - last_t_;
    row.in_gbps =
        gbps(in.bytes - last_.in_bytes + (in.packets - last_.in_pkts) * kWireOverhead, dt);
    row.out_gbps = gbps(out.bytes + out.packets * kWireOverhead, dt);
    row.nf_link_gbps =
        gbps(nf_bytes - last_.nf_bytes + (nf_pkts - last_.nf_pkts) * kWireOverhead, dt);
    row.in_mpps = mpps(in.packets - last_.in_pkts, dt);
    row.out_mpps = mpps(out.packets, dt);
    row.buffer_peak_bytes = t_.sw->take_interval_peak();
    const uint64_t drops = t_.drops_total();
    row.drops = drops - last_.drops;
    row.latency_avg_us = out.latency.mean() / double(kUs);
    row.latency_p99_us = double(out.latency.quantile(0.99)) / double(kUs);
    r_.series.push_back(row);
    last_ = {in.bytes, in.packets, nf_bytes, nf_pkts, drops};
    last_t_ = e.now();
    if (e.now() < stop_ || e.pending() > 0) e.schedule(e.now() + interval_, this);
  }

 private:
  struct Last {
    uint64_t in_bytes = 0, in_pkts = 0, nf_bytes = 0, nf_pkts = 0, drops = 0;
  };
  RunTopology& t_;
  Picos interval_, stop_;
  RunReport& r_;
  Last last_;
  Picos last_t_ = 0;
};

}  // namespace

bool run_sim(const SimRunConfig& cfg, RunReport& r, std::string& err, const ProgressFn& progress) {
  const double wall0 = wall_now();
  RunTopology t;
  if (!t.build(cfg, err)) return false;
  // The output frames as they leave the switch (bytes the record holds, the frame's length),
  // stamped with their departure time: what `nfpark run --out` writes.
  trace::PcapWriter out;
  if (!cfg.out_pcap.empty()) {
    if (!out.open(cfg.out_pcap)) return err = "--out-pcap: " + out.error(), false;
    t.collector->set_tap([&out](const Packet& p, Picos at) {
      out.write(to_nanos(at), p.data(), std::min(p.head, p.len), p.len);
    });
  }
  r = RunReport{};
  r.mode = to_string(cfg.mode);
  r.params = cfg.params;
  Sampler sampler(t, cfg.interval, cfg.duration, r);
  t.engine.schedule(cfg.interval, &sampler);
  t.start();

  // Run in slices of simulated time, reporting progress between them.
  const Picos end = cfg.duration + cfg.drain_limit;
  const Picos slice = std::max<Picos>(cfg.duration / 50, kUs);
  double last_report = wall0;
  const double loop0 = wall_now(), cpu0 = cpu_now();
  while (t.engine.pending() > 0 && t.engine.now() < end) {
    t.engine.run(std::min(end, t.engine.now() + slice));
    const double w = wall_now();
    if (progress && w - last_report > 0.5) {
      progress(t.engine.now(), cfg.duration, t.collector->in().packets, w - wall0);
      last_report = w;
    }
  }
  r.engine_seconds = wall_now() - loop0;
  r.engine_cpu_seconds = cpu_now() - cpu0;
  t.finish(cfg, r);
  if (!cfg.out_pcap.empty() && !out.close()) return err = "--out-pcap: " + out.error(), false;
  r.wall_seconds = wall_now() - wall0;
  return true;
}

}  // namespace nfpark::sim
