#include "sim/run_topology.h"

#include <algorithm>
#include <optional>

#include "nf/registry.h"
#include "run/nf_assembly.h"
#include "sim/frames.h"
#include "sim/queue_mem_program.h"

namespace nfpark::sim {

namespace {
constexpr uint32_t kFullRecordBytes = 9216;  // jumbo frames, when records hold whole frames

run::Mode run_mode(SimMode m) {
  switch (m) {
    case SimMode::kBaseline:
      return run::Mode::kBaseline;
    case SimMode::kPayloadPark:
      return run::Mode::kPayloadPark;
    case SimMode::kQueueMem:
      return run::Mode::kQueueMem;
    case SimMode::kNfSlicer:
      return run::Mode::kNfSlicer;
    case SimMode::kNicmem:
      return run::Mode::kNicmem;
    case SimMode::kSplit:
      return run::Mode::kSplit;
  }
  return run::Mode::kBaseline;
}

// The NF servers' NIC program: the host boundary of baseline and of the NIC modes (the
// switch modes' NF servers take whole packets, as the dataplane's do, uncounted).
std::optional<park::HostMode> nic_mode(SimMode m) {
  switch (m) {
    case SimMode::kBaseline:
      return park::HostMode::kHost;
    case SimMode::kNfSlicer:
      return park::HostMode::kNfslicer;
    case SimMode::kNicmem:
      return park::HostMode::kNicmem;
    case SimMode::kSplit:
      return park::HostMode::kSplit;
    default:
      return std::nullopt;
  }
}
}  // namespace

bool RunTopology::build(const SimRunConfig& cfg, std::string& err) {
  const TrafficConfig& tc = cfg.traffic;
  if (tc.ports < 1) return err = "[traffic] ports must be >= 1", false;
  if (cfg.nf_servers < 1) return err = "[nf_server] servers must be >= 1", false;
  if (!(tc.line_gbps > 0)) return err = "[traffic] line_gbps must be > 0", false;
  if (cfg.duration <= 0) return err = "[sim] duration_ms must be > 0", false;
  if (cfg.interval <= 0) return err = "[sim] interval_us must be > 0", false;
  if (std::string e = cfg.nf.validate(); !e.empty()) return err = "[nf_server] " + e, false;
  topo.traffic = tc.ports;
  topo.nf_servers = cfg.nf_servers;
  duration = cfg.duration;
  SwitchConfig swc = cfg.sw;
  swc.port_gbps.assign(tc.ports, tc.line_gbps);
  swc.port_gbps.insert(swc.port_gbps.end(), cfg.nf_servers, cfg.nf.link_gbps);
  if (cfg.mode == SimMode::kQueueMem) {  // payload queues + the header queue, served first
    const uint16_t hq = cfg.queuemem.queues;
    swc.queues = std::max<uint16_t>(swc.queues, uint16_t(hq + 1));
    swc.priority.resize(swc.queues, 0);
    if (hq < swc.queues) swc.priority[hq] = 7;
  }
  if (std::string e = swc.validate(); !e.empty()) return err = "[switch] " + e, false;
  // synthetic frames without full bytes write only their headers (FlowTemplates::kMax at most):
  // their records need no more room than a header packet's
  const bool headers_only = !cfg.full_bytes && tc.pcap.empty();
  pool =
      std::make_unique<PacketPool>(cfg.full_bytes ? kFullRecordBytes : cfg.record_bytes,
                                   uint64_t(1) << 24, headers_only ? PacketPool::kHeaderBytes : 0);
  sw = std::make_unique<Switch>(engine, swc);
  sw->set_window(cfg.warmup, cfg.duration);
  if (!build_program(cfg, err)) return false;
  sw->set_program(program.get());
  collector = std::make_unique<Collector>(tc.ports, tc.ecmp, cfg.reorder ? cfg.reorder_cap : 0,
                                          cfg.interval);
  collector->set_window(cfg.warmup, cfg.duration);
  for (uint16_t p = 0; p < tc.ports; ++p) sw->connect(p, collector.get(), p);
  // The NF server is assembled as nfpark run's is (run/nf_assembly.h): chain, tag format per
  // mode, drop notification; the chain runs on virtual time.
  run::RunConfig rc;
  rc.mode = run_mode(cfg.mode);
  rc.chain = cfg.chain;
  rc.nf_config = std::const_pointer_cast<toml::table>(cfg.nf_params);
  rc.park = cfg.park;
  rc.notify_drops = cfg.nf.notify_drops;
  rc.faults = cfg.faults;
  rc.reframe_us = cfg.reframe_us;  // Reframer: in-chain (the step) or a box (its own core)
  rc.reframe = cfg.reframe;
  run::Budget budget;
  if (cfg.reframe_us > 0)
    budget.reframe_hold =
        cfg.reframe.cfg.max_held_packets ? cfg.reframe.cfg.max_held_packets : run::kReframeHold;
  const run::NfServerSpec spec = run::nf_server_spec(rc, budget, false, err);
  if (!err.empty()) return false;
  if (spec.reframe && !spec.reframe_box && cfg.nf.cores > 1)
    return err =
               "[nf_server] cores: in-chain Reframer runs on the NF server's one lcore, as in "
               "nfpark run; give cores = 1, or [reframe] placement = \"box\"",
           false;
  for (uint16_t k = 0; k < cfg.nf_servers; ++k) {
    auto step = run::build_nf_step<SimBuffer>(rc, spec, err);
    if (!step) return err = "[nf_server] chain: " + err, false;
    NfServerConfig nc = cfg.nf;
    nc.seed = cfg.seed * 1000003 + k;
    auto s = std::make_unique<NfServer>(engine, nc, std::move(step));
    s->set_index(k);                         // its place in the tie order (sim/tie.h)
    s->set_faults(spec.faults, spec.shape);  // [faults]: the same seed for each, as nfpark run's
    s->set_box(run::build_reframe_stage<SimBuffer>(spec));  // nullptr unless placement = box
    if (auto hm = nic_mode(cfg.mode)) {                     // the NIC program in front of PCIe
      auto nic = make_nic_program(*hm, cfg.nic, err);
      if (!nic) return false;
      nic->set_reads(s->chain().reads());  // the touched bytes: what the chain reads
      s->set_nic(std::move(nic));
    }
    const uint16_t port = uint16_t(tc.ports + k);
    s->connect(sw.get(), port);
    sw->connect(port, s.get(), 0);
    // the NF port's trains (egress_port.h), where the program and the server allow them
    sw->port(port).set_train(program->egress_train(port) && s->takes_early());
    servers.push_back(std::move(s));
  }
  return build_traffic(cfg, err);
}

bool RunTopology::build_program(const SimRunConfig& cfg, std::string& err) {
  switch (cfg.mode) {
    case SimMode::kBaseline:
    case SimMode::kNfSlicer:  // the NIC modes: the switch forwards; the NF server's NIC works
    case SimMode::kNicmem:
    case SimMode::kSplit:
      program = std::make_unique<BaselineProgram>(topo);
      return true;
    case SimMode::kPayloadPark: {
      if (cfg.park.slots == 0) return err = "[park] slots must be >= 1", false;
      auto pp = std::make_unique<PayloadParkProgram>(topo, cfg.park);
      if (!pp->reserve(*sw, err)) return err = "[park] " + err, false;
      program = std::move(pp);
      return true;
    }
    case SimMode::kQueueMem: {
      auto qm = std::make_unique<QueueMemProgram>(*sw, topo, cfg.queuemem, cfg.queuemem_poll);
      if (!qm->reserve(err)) return err = "[queuemem] " + err, false;
      program = std::move(qm);
      return true;
    }
  }
  err = "unknown mode";
  return false;
}

bool RunTopology::build_traffic(const SimRunConfig& cfg, std::string& err) {
  const TrafficConfig& tc = cfg.traffic;
  if (std::string e = tc.pattern.validate(); !e.empty()) return err = "[traffic] " + e, false;
  std::shared_ptr<const FlowTemplates> templates;
  std::shared_ptr<const LoadedTrace> loaded;
  if (tc.source == SourceKind::kSynthetic) {
    templates = FlowTemplates::build(tc.gen, tc.ports, err);
    if (!templates) return err = "[traffic] " + err, false;
  } else {
    loaded = LoadedTrace::load(tc.pcap, err);
    if (!loaded) return false;
  }
  sources = std::make_unique<TrafficMux>(engine);
  for (uint16_t p = 0; p < tc.ports; ++p) {
    std::unique_ptr<FrameSource> frames;
    if (templates)
      frames = std::make_unique<SyntheticFrames>(templates, tc.gen, p, cfg.full_bytes);
    else
      frames = std::make_unique<PcapFrames>(loaded, p, tc.loops);
    RatePattern pat = tc.pattern;
    pat.seed = cfg.seed;
    sources->add(std::make_unique<TrafficSource>(*sw, p, std::move(frames), pat,
                                                 tc.source == SourceKind::kPcap && tc.trace_timing,
                                                 *pool, collector.get()));
  }
  return true;
}

void RunTopology::start() {
  sources->start(0, duration);
}

uint64_t RunTopology::drops_total() const {
  uint64_t d = sw->counters().drops() + program->drops() + program->nf_drops_returned();
  for (auto& s : servers) d += s->counters().drops() + (s->nic() ? s->nic()->drops() : 0);
  return d;
}

void RunTopology::finish(const SimRunConfig& cfg, RunReport& r) {
  const uint64_t live_before_drain = pool->live();
  uint64_t held = program->held();
  for (auto& s : servers) held += s->nic() ? s->nic()->held() : 0;
  program->drain();
  if (engine.pending() == 0)
    sw->settle_all();  // the trains' frames have all left (egress_port.h)
  else
    sw->settle();  // cut short: those decided after now are still in the queue
  for (auto& s : servers) s->drain_nic();
  const FlowCounts& in = collector->in();
  const FlowCounts& out = collector->out();
  const Picos window = cfg.duration - cfg.warmup;
  auto gbps = [&](uint64_t wire_bytes) {
    return double(wire_bytes) * 8.0 / (double(window) / kNs);
  };
  r.in_gbps = gbps(in.wire_bytes);
  r.out_gbps = gbps(out.wire_bytes);
  r.in_mpps = double(in.win_packets) / (double(window) / kUs);
  r.out_mpps = double(out.win_packets) / (double(window) / kUs);
  r.goodput_gbps = r.out_mpps * 1e6 * 42 * 8 / 1e9;
  uint64_t nf_wire = 0;
  for (uint16_t k = 0; k < topo.nf_servers; ++k) {
    const PortCounters& c = sw->port(uint16_t(topo.traffic + k)).counters();
    nf_wire += c.win_bytes + c.win_packets * kWireOverhead;
  }
  r.nf_link_gbps = gbps(nf_wire);
  const LatencyHistogram& lat = collector->latency();
  r.latency_avg_us = lat.mean() / double(kUs);
  r.latency_p50_us = double(lat.quantile(0.5)) / double(kUs);
  r.latency_p90_us = double(lat.quantile(0.9)) / double(kUs);
  r.latency_p99_us = double(lat.quantile(0.99)) / double(kUs);
  r.peak_buffer_bytes = sw->buffer_peak();
  r.reorder = collector->reorder();

  // Drops by reason: the switch's, the NF servers', the mode's.
  const SwitchCounters& sc = sw->counters();
  NfServerCounters nc;
  Picos busy = 0;
  for (auto& s : servers) {
    const NfServerCounters& c = s->counters();
    nc.drop_nic_buffer += c.drop_nic_buffer;
    nc.drop_rx_ring += c.drop_rx_ring;
    nc.drop_fault += c.drop_fault;
    nc.nf_drops += c.nf_drops;
    nc.nf_freed += c.nf_freed;
    nc.fault_injected += c.fault_injected;
    nc.duplicates += c.duplicates;
    nc.reframe_coalesced += c.reframe_coalesced;
    busy += s->busy_time();
  }
  r.drops = {{"buffer_full", sc.drop_buffer_full},
             {"queue_limit", sc.drop_queue_limit},
             {"queue_threshold", sc.drop_queue_threshold},
             {"nic_buffer_full", nc.drop_nic_buffer},
             {"rx_ring_full", nc.drop_rx_ring},
             // the NF's drops as they ended, as nfpark run counts them: freed by the server,
             // or notices that found their payload (one lost on the way counts there)
             {"nf", nc.nf_freed + program->nf_drops_returned()},
             {"fault", nc.drop_fault},
             {"fault_injected", nc.fault_injected},
             {"reframe_coalesced", nc.reframe_coalesced}};
  program->drop_reasons([&](std::string_view k, uint64_t v) { r.drops.emplace_back(k, v); });
  CounterMap nic_drops;  // the NICs' reasons, summed over servers
  for (auto& s : servers)
    if (s->nic()) s->nic()->drop_reasons(nic_drops.sink());
  for (auto& [k, v] : nic_drops.values) r.drops.emplace_back(k, v);
  r.packets_in = in.packets;
  r.packets_out = out.packets;
  r.drops_total = drops_total();
  // Records still out after the drain were stuck in a device when the run was cut short.
  r.in_flight_at_end = live_before_drain > held ? live_before_drain - held : 0;
  r.drops.emplace_back("in_flight_at_end", r.in_flight_at_end);
  r.duplicates = nc.duplicates;
  r.balanced = r.packets_in + r.duplicates == r.packets_out + r.drops_total + r.in_flight_at_end;
  r.pools_full = pool->live() == 0;
  for (auto& s : servers) r.pools_full = r.pools_full && (!s->nic() || s->nic()->all_back());
  const Picos span = engine.now();
  r.sim_seconds = to_seconds(span);
  r.events = engine.events_run();
  const uint64_t cores = uint64_t(cfg.nf.cores) * topo.nf_servers;
  r.nf_core_utilization = span > 0 ? double(busy) / double(span) / double(cores) : 0;
  sw->report(r.counters.sink());
  program->report(r.counters.sink());
  for (auto& s : servers) s->report(r.counters.sink());
}

}  // namespace nfpark::sim
