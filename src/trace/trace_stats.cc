#include "trace/trace_stats.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "core/packet_builder.h"
#include "core/parse.h"
#include "trace/pcap_reader.h"

namespace nfpark::trace {

const std::array<const char*, kSizeBins> kSizeBinNames = {
    "0-64", "65-127", "128-255", "256-511", "512-1023", "1024-1518", "1519-max"};

size_t size_bin(uint32_t n) {
  if (n <= 64) return 0;
  if (n <= 127) return 1;
  if (n <= 255) return 2;
  if (n <= 511) return 3;
  if (n <= 1023) return 4;
  if (n <= 1518) return 5;
  return 6;
}

template <class T>
DistSummary summarize(std::vector<T>& v) {
  DistSummary d;
  d.count = v.size();
  if (v.empty()) return d;
  double sum = 0;
  uint64_t gt1 = 0;
  for (T x : v) {
    sum += double(x);
    gt1 += x > 1;
  }
  d.mean = sum / double(v.size());
  d.share_gt1 = double(gt1) / double(v.size());
  auto rank = [&](double p) {  // nearest-rank percentile
    size_t k = size_t(std::ceil(p / 100.0 * double(v.size())));
    k = k == 0 ? 0 : k - 1;
    std::nth_element(v.begin(), v.begin() + k, v.end());
    return double(v[k]);
  };
  d.p50 = rank(50);
  d.p90 = rank(90);
  d.p99 = rank(99);
  d.max = double(*std::max_element(v.begin(), v.end()));
  return d;
}
template DistSummary summarize(std::vector<uint32_t>&);
template DistSummary summarize(std::vector<int64_t>&);
template DistSummary summarize(std::vector<double>&);

StatsBuilder::StatsBuilder(size_t expected) : index_(expected / 4) {
  spatial_.reserve(expected);
  temporal_.reserve(expected);
}

void StatsBuilder::add(Nanos ts, const uint8_t* data, uint32_t len, uint32_t wire_len) {
  const uint64_t idx = s_.packets++;
  if (idx == 0) s_.first_ts = ts;
  s_.last_ts = ts;
  s_.bytes += wire_len;
  s_.captured_bytes += len;
  ++s_.size_hist[size_bin(wire_len)];
  PacketLayout L = parse_packet(data, len);
  FlowKey k;
  int64_t flow = -1;
  if (extract_flow_key(data, L, k)) {
    bool inserted;
    flow = index_.find_or_insert(k, k.hash(), inserted);
    if (inserted) {
      last_idx_.push_back(idx);
      last_ts_.push_back(ts);
      count_.push_back(1);
    } else {
      spatial_.push_back(uint32_t(std::min<uint64_t>(idx - last_idx_[flow], UINT32_MAX)));
      temporal_.push_back(ts - last_ts_[flow]);
      last_idx_[flow] = idx;
      last_ts_[flow] = ts;
      ++count_[flow];
    }
    (L.ip_version == 4 ? s_.ipv4 : s_.ipv6)++;
    if (L.is_tcp())
      ++s_.tcp;
    else if (L.is_udp())
      ++s_.udp;
    else if (L.l4_off && (L.l4_proto == proto::kIcmp || L.l4_proto == proto::kIcmpV6))
      ++s_.icmp;
    if (L.l4_off && read_packet_id(data + L.payload_off, L.captured_payload())) ++s_.with_id;
  } else {
    ++s_.unparsed;
  }
  if (flow != prev_flow_) ++s_.runs;
  prev_flow_ = flow;
}

TraceStats StatsBuilder::finish() {
  TraceStats s = s_;
  s.flows = index_.size();
  s.mean_size = s.packets ? double(s.bytes) / double(s.packets) : 0;
  s.slf = s.runs ? double(s.packets) / double(s.runs) : 0;
  uint64_t in_flows = 0;
  for (uint32_t c : count_) {
    in_flows += c;
    s.max_flow_packets = std::max<uint64_t>(s.max_flow_packets, c);
  }
  s.mean_flow_packets = s.flows ? double(in_flows) / double(s.flows) : 0;
  s.spatial = summarize(spatial_);
  s.temporal = summarize(temporal_);
  return s;
}

namespace {
double share(uint64_t n, uint64_t d) {
  return d ? double(n) / double(d) : 0;
}
void dist_json(std::string& o, const char* name, const DistSummary& d, bool gt1) {
  char b[320];
  std::snprintf(b, sizeof b,
                "  \"%s\": {\"pairs\": %" PRIu64
                ", \"mean\": %.3f, \"p50\": %.0f, \"p90\": %.0f, \"p99\": %.0f, \"max\": %.0f",
                name, d.count, d.mean, d.p50, d.p90, d.p99, d.max);
  o += b;
  if (gt1) {
    std::snprintf(b, sizeof b, ", \"share_gt1\": %.4f", d.share_gt1);
    o += b;
  }
  o += "}";
}
}  // namespace

std::string TraceStats::to_json() const {
  std::string o = "{\n";
  char b[512];
  std::snprintf(b, sizeof b,
                "  \"packets\": %" PRIu64 ",\n  \"bytes\": %" PRIu64
                ",\n  \"captured_bytes\": %" PRIu64 ",\n  \"flows\": %" PRIu64
                ",\n  \"mean_size\": %.2f,\n  \"slf\": %.4f,\n"
                "  \"runs\": %" PRIu64 ",\n",
                packets, bytes, captured_bytes, flows, mean_size, slf, runs);
  o += b;
  o += "  \"size_hist\": {";
  for (size_t i = 0; i < kSizeBins; ++i) {
    std::snprintf(b, sizeof b, "%s\"%s\": %" PRIu64, i ? ", " : "", kSizeBinNames[i], size_hist[i]);
    o += b;
  }
  o += "},\n";
  std::snprintf(b, sizeof b,
                "  \"ipv4\": %.4f,\n  \"ipv6\": %.4f,\n  \"tcp\": %.4f,\n  \"udp\": %.4f,\n"
                "  \"icmp\": %.4f,\n",
                share(ipv4, packets), share(ipv6, packets), share(tcp, packets),
                share(udp, packets), share(icmp, packets));
  o += b;
  std::snprintf(b, sizeof b,
                "  \"counts\": {\"ipv4\": %" PRIu64 ", \"ipv6\": %" PRIu64 ", \"tcp\": %" PRIu64
                ", \"udp\": %" PRIu64 ", \"icmp\": %" PRIu64 ", \"unparsed\": %" PRIu64
                ", \"with_id\": %" PRIu64 "},\n",
                ipv4, ipv6, tcp, udp, icmp, unparsed, with_id);
  o += b;
  std::snprintf(b, sizeof b,
                "  \"mean_flow_packets\": %.3f,\n  \"max_flow_packets\": %" PRIu64
                ",\n  \"duration_ns\": %" PRId64 ",\n",
                mean_flow_packets, max_flow_packets, last_ts - first_ts);
  o += b;
  dist_json(o, "spatial_distance", spatial, true);
  o += ",\n";
  dist_json(o, "temporal_distance_ns", temporal, false);
  o += "\n}\n";
  return o;
}

std::string TraceStats::to_text() const {
  std::string o;
  char b[512];
  std::snprintf(b, sizeof b,
                "packets        %" PRIu64 "\nbytes          %" PRIu64 "\nflows          %" PRIu64
                "\nmean size      %.1f B\nSLF            %.3f (%" PRIu64
                " runs)\n"
                "flow size      mean %.1f, max %" PRIu64
                " packets\n"
                "IPv4 %.1f%%  IPv6 %.1f%%  TCP %.1f%%  UDP %.1f%%  ICMP %.1f%%  unparsed %" PRIu64
                "  with id %" PRIu64 "\nduration       %.6f s\nsizes         ",
                packets, bytes, flows, mean_size, slf, runs, mean_flow_packets, max_flow_packets,
                100 * share(ipv4, packets), 100 * share(ipv6, packets), 100 * share(tcp, packets),
                100 * share(udp, packets), 100 * share(icmp, packets), unparsed, with_id,
                double(last_ts - first_ts) / 1e9);
  o += b;
  for (size_t i = 0; i < kSizeBins; ++i) {
    std::snprintf(b, sizeof b, " %s:%" PRIu64, kSizeBinNames[i], size_hist[i]);
    o += b;
  }
  std::snprintf(b, sizeof b,
                "\nspatial dist.  mean %.2f  p50 %.0f  p90 %.0f  p99 %.0f  max %.0f packets;"
                " %.1f%% > 1 (%" PRIu64
                " pairs)\n"
                "temporal dist. mean %.0f  p50 %.0f  p90 %.0f  p99 %.0f  max %.0f ns\n",
                spatial.mean, spatial.p50, spatial.p90, spatial.p99, spatial.max,
                100 * spatial.share_gt1, spatial.count, temporal.mean, temporal.p50, temporal.p90,
                temporal.p99, temporal.max);
  o += b;
  return o;
}

bool stats_file(const std::string& path, TraceStats& out, std::string* error) {
  TraceReader r;
  if (!r.open(path)) {
    if (error) *error = r.error();
    return false;
  }
  StatsBuilder sb(size_t(r.file_bytes() / 256) + 1024);
  PacketRecord rec;
  ReadStatus st;
  while ((st = r.next(rec)) == ReadStatus::kPacket) sb.add(rec.ts, rec.data, rec.len, rec.wire_len);
  if (st == ReadStatus::kError) {
    if (error) *error = r.error();
    return false;
  }
  out = sb.finish();
  return true;
}

}  // namespace nfpark::trace
