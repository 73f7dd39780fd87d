// The sections of a scenario file, read into a SimRunConfig (scenario.h lists the keys).
#include "sim/scenario_sections.h"

#include <filesystem>

#include "sim/toml_section.h"

namespace nfpark::sim {

namespace {

const toml::table* sub(const toml::table& root, const char* name) {
  return root.get_as<toml::table>(name);
}

bool parse_sim(const toml::table& root, const std::string& where, SimRunConfig& c,
               std::string& err) {
  TomlSection s(sub(root, "sim"), "sim", err, where);
  std::string name, description, mode = "baseline", search = "none";
  double drain_ms = -1;
  if (!s.get("name", name) || !s.get("description", description) || !s.get("mode", mode) ||
      !s.get_time("duration_ms", c.duration, kMs) || !s.get_time("warmup_ms", c.warmup, kMs) ||
      !s.get_time("interval_us", c.interval, kUs) || !s.get("drain_ms", drain_ms) ||
      !s.get("seed", c.seed) || !s.get("full_bytes", c.full_bytes) ||
      !s.get("record_bytes", c.record_bytes) || !s.get("reorder", c.reorder) ||
      !s.get("search", search) || !s.get("search_max_drop", c.search.max_drop) ||
      !s.get_time("search_max_p99_us", c.search.max_p99, kUs) ||
      !s.get("search_steps", c.search.steps) ||
      !s.get("search_max_shortfall", c.search.max_shortfall) ||
      !s.get("reorder_cap", c.reorder_cap) || !s.check_unknown())
    return false;
  if (drain_ms >= 0) c.drain_limit = Picos(drain_ms * double(kMs));
  if (search != "none" && search != "max_rate") return s.fail("search", "\"none\" or \"max_rate\"");
  c.search.max_rate = search == "max_rate";
  if (c.search.steps < 1 || c.search.steps > 30) return s.fail("search_steps", "1..30");
  std::string merr;
  if (!parse_sim_mode(mode, c.mode, merr)) return s.error("mode", merr);
  if (c.duration <= 0) return s.fail("duration_ms", "a duration > 0");
  if (c.warmup >= c.duration) return s.fail("warmup_ms", "less than duration_ms");
  if (c.interval <= 0) return s.fail("interval_us", "an interval > 0");
  if (c.record_bytes < 64 || c.record_bytes > 9216) return s.fail("record_bytes", "64..9216");
  return true;
}

bool parse_traffic(const toml::table& root, const std::string& where, const std::string& dir,
                   SimRunConfig& c, std::string& err) {
  TomlSection s(sub(root, "traffic"), "traffic", err, where);
  TrafficConfig& t = c.traffic;
  RatePattern& p = t.pattern;
  std::string source = "synthetic", pattern = "constant", proto = "udp", timing = "trace",
              forward = "same";
  if (!s.get("source", source) || !s.get("ports", t.ports) || !s.get("line_gbps", t.line_gbps) ||
      !s.get("pattern", pattern) || !s.get("rate_gbps", p.gbps) ||
      !s.get("from_gbps", p.from_gbps) || !s.get("to_gbps", p.to_gbps) ||
      !s.get_time("ramp_ms", p.ramp, kMs) || !s.get("high_gbps", p.high_gbps) ||
      !s.get("low_gbps", p.low_gbps) || !s.get_time("period_ms", p.period, kMs) ||
      !s.get("min_gbps", p.min_gbps) || !s.get("max_gbps", p.max_gbps) ||
      !s.get_time("change_ms", p.change, kMs) || !s.get("skew", p.skew) ||
      !s.get("flows", t.gen.flows) || !s.get("slf", t.gen.slf) || !s.get("proto", proto) ||
      !s.get("zipf", t.gen.zipf) || !s.get("ipv6", t.gen.ipv6) || !s.get("vlan", t.gen.vlan) ||
      !s.get("pcap", t.pcap) || !s.get("timing", timing) || !s.get("loops", t.loops) ||
      !s.get("forward", forward))
    return false;
  if (const toml::node* n = s.raw("size")) {
    std::string spec = n->is_integer() ? std::to_string(*n->value<int64_t>())
                                       : n->value<std::string>().value_or("?");
    std::string serr;
    if (!trace::SizeSpec::parse(spec, t.gen.size, &serr)) return s.fail("size", serr);
  }
  if (!s.check_unknown()) return false;
  if (source == "synthetic")
    t.source = SourceKind::kSynthetic;
  else if (source == "pcap")
    t.source = SourceKind::kPcap;
  else
    return s.fail("source", "\"synthetic\" or \"pcap\"");
  if (!parse_pattern(pattern, p.kind)) return s.fail("pattern", "constant, ramp, square or random");
  if (proto == "udp")
    t.gen.proto = trace::GenProto::kUdp;
  else if (proto == "tcp")
    t.gen.proto = trace::GenProto::kTcp;
  else if (proto == "mix")
    t.gen.proto = trace::GenProto::kMix;
  else
    return s.fail("proto", "udp, tcp or mix");
  if (timing != "trace" && timing != "rate") return s.fail("timing", "\"trace\" or \"rate\"");
  t.trace_timing = timing == "trace";
  if (forward != "same" && forward != "ecmp") return s.fail("forward", "\"same\" or \"ecmp\"");
  t.ecmp = forward == "ecmp";
  if (t.ports < 1 || t.ports > 1024) return s.fail("ports", "1..1024");
  if (!(t.line_gbps > 0)) return s.fail("line_gbps", "a rate > 0");
  if (t.source == SourceKind::kPcap) {
    if (t.pcap.empty()) return s.fail("pcap", "the capture to replay (source = \"pcap\")");
    if (std::filesystem::path(t.pcap).is_relative())
      t.pcap = (dir / std::filesystem::path(t.pcap)).string();
  }
  t.gen.seed = c.seed;
  if (std::string e = p.validate(); !e.empty()) return s.fail("pattern", e);
  if (std::string e = t.gen.validate(); !e.empty()) return s.fail("flows/slf/zipf/ipv6", e);
  return true;
}

bool parse_switch(const toml::table& root, const std::string& where, SimRunConfig& c,
                  std::string& err) {
  TomlSection s(sub(root, "switch"), "switch", err, where);
  SwitchConfig& w = c.sw;
  std::string preset = "tofino1";
  if (!s.get("preset", preset)) return false;
  if (!w.apply_preset(preset))
    return s.fail("preset", "\"tofino1\" (20 MB) or \"tofino2\" (64 MB)");
  double buffer_mb = -1, register_mb = -1, queue_limit_kb = -1;
  if (!s.get("buffer_mb", buffer_mb) || !s.get("register_mb", register_mb) ||
      !s.get("cell_bytes", w.cell_bytes) || !s.get("queues", w.queues) ||
      !s.get_time("ingress_ns", w.ingress_latency, kNs) ||
      !s.get_time("egress_ns", w.egress_latency, kNs) ||
      !s.get_time("link_delay_ns", w.link_delay, kNs) || !s.get("queue_limit_kb", queue_limit_kb) ||
      !s.get("dt_alpha", w.dt_alpha) || !s.get("recirc_gbps", w.recirc_gbps) || !s.check_unknown())
    return false;
  if (buffer_mb >= 0) w.buffer_bytes = uint64_t(buffer_mb * double(1 << 20));
  if (register_mb >= 0) w.register_bytes = uint64_t(register_mb * double(1 << 20));
  if (queue_limit_kb >= 0) w.queue_limit_bytes = uint64_t(queue_limit_kb * 1024);
  return true;  // checked with the port rates when the run is built
}

bool parse_nf_server(const toml::table& root, const std::string& where, SimRunConfig& c,
                     std::string& err) {
  TomlSection s(sub(root, "nf_server"), "nf_server", err, where);
  NfServerConfig& n = c.nf;
  ServiceTime& st = n.service;
  std::string dist = "fixed";
  double nic_kb = -1, cycles_header = -1, cycles_whole = -1, clock_ghz = -1, latency_us = -1;
  if (!s.get("servers", c.nf_servers) || !s.get("link_gbps", n.link_gbps) ||
      !s.get("pcie_gbps", n.pcie_gbps) || !s.get("pcie_overhead_bytes", n.pcie_overhead_bytes) ||
      !s.get("nic_buffer_kb", nic_kb) || !s.get("cores", n.cores) || !s.get("rx_ring", n.rx_ring) ||
      !s.get("burst", n.burst) || !s.get("service", dist) || !s.get("header_ns", st.header_ns) ||
      !s.get("whole_ns", st.whole_ns) || !s.get("cycles_header", cycles_header) ||
      !s.get("cycles_whole", cycles_whole) || !s.get("clock_ghz", clock_ghz) ||
      !s.get("burst_ns", st.burst_ns) || !s.get("spread", st.spread) ||
      !s.get("latency_us", latency_us) || !s.get("drop", n.drop) || !s.get("chain", c.chain) ||
      !s.get("notify_drops", n.notify_drops) || !s.get("reframe_us", c.reframe_us) ||
      !s.check_unknown())
    return false;
  if (!parse_service_dist(dist, st.dist)) return s.fail("service", "fixed, exp or uniform");
  if (cycles_header >= 0 || cycles_whole >= 0) {
    if (!(clock_ghz > 0)) return s.fail("clock_ghz", "the core clock (GHz) for cycles_*");
    if (cycles_header >= 0) st.header_ns = cycles_header / clock_ghz;
    if (cycles_whole >= 0) st.whole_ns = cycles_whole / clock_ghz;
  }
  if (nic_kb >= 0) n.nic_buffer_bytes = uint64_t(nic_kb * 1024);
  if (latency_us >= 0) n.latency = Picos(latency_us * double(kUs));
  n.link_delay = c.sw.link_delay;
  if (c.nf_servers < 1 || c.nf_servers > 255) return s.fail("servers", "1..255");
  if (!(c.reframe_us >= 0 && c.reframe_us <= 1e6)) return s.fail("reframe_us", "0..1000000 (us)");
  if (std::string e = n.validate(); !e.empty()) {
    err = where + ": [nf_server] " + e;
    return false;
  }
  return true;
}

}  // namespace

bool parse_run(const toml::table& root, const std::string& where, const std::string& dir,
               SimRunConfig& c, std::string& err) {
  return parse_sim(root, where, c, err) && parse_traffic(root, where, dir, c, err) &&
         parse_switch(root, where, c, err) && parse_nf_server(root, where, c, err) &&
         parse_park(root, where, c.park, err) && parse_queuemem(root, where, c, err) &&
         parse_nic(root, where, c, err) && parse_nf_extras(root, where, c, err);
}

}  // namespace nfpark::sim
