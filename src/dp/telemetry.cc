#include "dp/telemetry.h"

#include <rte_telemetry.h>

#include <cstdio>
#include <mutex>

namespace nfpark::dp {

namespace {

constexpr Nanos kInterval = 2 * kSecond;

struct Shared {
  std::mutex mu;
  bool live = false;
  std::string role;
  double seconds = 0, interval = 0;
  LiveSample now, prev;
};
Shared g_shared;

int stats_cmd(const char*, const char*, rte_tel_data* d) {
  std::lock_guard<std::mutex> lock(g_shared.mu);
  rte_tel_data_start_dict(d);
  if (!g_shared.live) return 0;
  const LiveSample& s = g_shared.now;
  rte_tel_data_add_dict_string(d, "role", g_shared.role.c_str());
  rte_tel_data_add_dict_u64(d, "milliseconds", uint64_t(g_shared.seconds * 1000));
  rte_tel_data_add_dict_u64(d, "packets_in", s.in_packets);
  rte_tel_data_add_dict_u64(d, "bytes_in", s.in_bytes);
  rte_tel_data_add_dict_u64(d, "packets_out", s.out_packets);
  rte_tel_data_add_dict_u64(d, "bytes_out", s.out_bytes);
  rte_tel_data_add_dict_u64(d, "packets_to_nf", s.to_nf);
  rte_tel_data_add_dict_u64(d, "packets_from_nf", s.from_nf);
  rte_tel_data_add_dict_u64(d, "drops", s.drops);
  for (const auto& [k, v] : s.extra) rte_tel_data_add_dict_u64(d, k.c_str(), v);
  return 0;
}

double per_s(uint64_t a, uint64_t b, double dt) {
  return dt > 0 && a >= b ? double(a - b) / dt : 0;
}

int rates_cmd(const char*, const char*, rte_tel_data* d) {
  std::lock_guard<std::mutex> lock(g_shared.mu);
  rte_tel_data_start_dict(d);
  if (!g_shared.live) return 0;
  const LiveSample &s = g_shared.now, &p = g_shared.prev;
  const double dt = g_shared.interval;
  rte_tel_data_add_dict_u64(d, "pps_in", uint64_t(per_s(s.in_packets, p.in_packets, dt)));
  rte_tel_data_add_dict_u64(d, "bps_in", uint64_t(8 * per_s(s.in_bytes, p.in_bytes, dt)));
  rte_tel_data_add_dict_u64(d, "pps_out", uint64_t(per_s(s.out_packets, p.out_packets, dt)));
  rte_tel_data_add_dict_u64(d, "bps_out", uint64_t(8 * per_s(s.out_bytes, p.out_bytes, dt)));
  return 0;
}

std::string rate(double pps) {
  char b[32];
  if (pps >= 1e6)
    std::snprintf(b, sizeof b, "%.2f Mpps", pps / 1e6);
  else
    std::snprintf(b, sizeof b, "%.1f kpps", pps / 1e3);
  return b;
}

std::string bits(double bps) {
  char b[32];
  if (bps >= 1e9)
    std::snprintf(b, sizeof b, "%.2f Gb/s", bps / 1e9);
  else
    std::snprintf(b, sizeof b, "%.1f Mb/s", bps / 1e6);
  return b;
}

}  // namespace

LiveStats::LiveStats(std::string role, bool quiet, Nanos start)
    : role_(std::move(role)), quiet_(quiet), start_(start), next_(start), last_(start) {
  static const bool registered = [] {
    rte_telemetry_register_cmd("/nfpark/stats", stats_cmd,
                               "nfpark: the live run's counters (updated about once a second)");
    rte_telemetry_register_cmd("/nfpark/rates", rates_cmd,
                               "nfpark: packets and bits per second over the last interval");
    return true;
  }();
  (void)registered;
  std::lock_guard<std::mutex> lock(g_shared.mu);
  g_shared.live = true;
  g_shared.role = role_;
}

LiveStats::~LiveStats() {
  std::lock_guard<std::mutex> lock(g_shared.mu);
  g_shared.live = false;
}

void LiveStats::publish(Nanos now, LiveSample s) {
  if (start_ == 0) start_ = last_ = now;  // the loop's clock: from its first sample
  next_ = now + kInterval / 2;            // the telemetry snapshot: every second
  const double dt = double(now - last_) / 1e9;
  const bool print = !quiet_ && now - last_ >= kInterval;
  {
    std::lock_guard<std::mutex> lock(g_shared.mu);
    g_shared.seconds = double(now - start_) / 1e9;
    if (now - last_ >= kInterval) {
      g_shared.prev = prev_;
      g_shared.interval = dt;
    }
    g_shared.now = s;
  }
  if (now - last_ < kInterval) return;
  if (print)
    std::fprintf(stderr,
                 "nfpark run [%s]: %.0f s  in %s %s  out %s %s  to NF %s  from NF %s  drops %llu\n",
                 role_.c_str(), double(now - start_) / 1e9,
                 rate(per_s(s.in_packets, prev_.in_packets, dt)).c_str(),
                 bits(8 * per_s(s.in_bytes, prev_.in_bytes, dt)).c_str(),
                 rate(per_s(s.out_packets, prev_.out_packets, dt)).c_str(),
                 bits(8 * per_s(s.out_bytes, prev_.out_bytes, dt)).c_str(),
                 rate(per_s(s.to_nf, prev_.to_nf, dt)).c_str(),
                 rate(per_s(s.from_nf, prev_.from_nf, dt)).c_str(), (unsigned long long)s.drops);
  prev_ = std::move(s);
  last_ = now;
}

}  // namespace nfpark::dp
