#include "sim/run_report.h"

#include <cctype>
#include <cstdio>

#include "core/json.h"

namespace nfpark::sim {

namespace {

// A JSON writer value from a literal already in JSON (the params keep their scenario types).
void raw_value(std::string& out, const std::string& key, const std::string& literal) {
  out += JsonWriter::quote(key) + ": " + literal;
}

}  // namespace

std::string RunReport::to_json() const {
  JsonWriter j;
  j.begin_object();
  j.value("mode", mode);
  std::string params_obj = "{";
  for (size_t i = 0; i < params.size(); ++i) {
    if (i) params_obj += ", ";
    raw_value(params_obj, params[i].first, params[i].second);
  }
  params_obj += "}";
  std::string s = j.str() + ", \"params\": " + params_obj;
  JsonWriter k;
  k.begin_object();  // the rest, spliced after params
  k.value("throughput_in_gbps", in_gbps).value("throughput_out_gbps", out_gbps);
  k.value("nf_link_gbps", nf_link_gbps);
  k.begin_object("drops");
  for (auto& [reason, n] : drops) k.value(reason, n);
  k.end_object();
  k.begin_object("latency_us")
      .value("avg", latency_avg_us)
      .value("p50", latency_p50_us)
      .value("p90", latency_p90_us)
      .value("p99", latency_p99_us)
      .end_object();
  k.value("peak_buffer_bytes", peak_buffer_bytes);
  k.value("out_of_order_pct", reorder.flow_out_of_order_pct);
  k.value("reordering_extent", reorder.flow_extent_max);
  k.value("throughput_in_mpps", in_mpps).value("throughput_out_mpps", out_mpps);
  k.value("goodput_gbps", goodput_gbps);
  k.value("stream_out_of_order_pct", reorder.out_of_order_pct);
  k.value("stream_reordering_extent", reorder.extent_max);
  k.value("packets_in", packets_in).value("packets_out", packets_out);
  k.value("drops_total", drops_total).value("in_flight_at_end", in_flight_at_end);
  k.value("duplicates", duplicates);
  k.value("balanced", balanced).value("pools_full", pools_full);
  k.value("nf_core_utilization", nf_core_utilization);
  k.value("sim_seconds", sim_seconds).value("wall_seconds", wall_seconds);
  k.value("engine_seconds", engine_seconds).value("engine_cpu_seconds", engine_cpu_seconds);
  k.value("events", events);
  k.value("sim_packets_per_second", engine_seconds > 0 ? double(packets_in) / engine_seconds : 0);
  k.begin_object("counters");
  for (auto& [name, v] : counters.values) k.value(name, v);
  k.end_object();
  k.end_object();
  return s + ", " + k.str().substr(1);  // "{mode, params, " + the rest without its "{"
}

std::string RunReport::csv_header() {
  return "t_ms,in_gbps,out_gbps,nf_link_gbps,in_mpps,out_mpps,buffer_peak_bytes,drops,"
         "latency_avg_us,latency_p99_us\n";
}

std::string RunReport::csv_rows() const {
  std::string s;
  char b[256];
  for (const IntervalRow& r : series) {
    std::snprintf(b, sizeof b, "%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%llu,%llu,%.4f,%.4f\n", r.t_ms,
                  r.in_gbps, r.out_gbps, r.nf_link_gbps, r.in_mpps, r.out_mpps,
                  static_cast<unsigned long long>(r.buffer_peak_bytes),
                  static_cast<unsigned long long>(r.drops), r.latency_avg_us, r.latency_p99_us);
    s += b;
  }
  return s;
}

std::string RunReport::slug() const {
  std::string s = mode;
  for (auto& [k, v] : params) {
    s += '_';
    for (char c : v)
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-') s += c;
  }
  return s;
}

std::string runs_to_json(const std::vector<RunReport>& runs) {
  std::string s = "{\"runs\": [";
  for (size_t i = 0; i < runs.size(); ++i) s += (i ? ",\n  " : "\n  ") + runs[i].to_json();
  return s + "\n]}\n";
}

}  // namespace nfpark::sim
