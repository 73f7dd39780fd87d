#include <cstdio>

#include "core/json.h"
#include "dp/runner.h"

namespace nfpark::dp {

namespace {
void map(JsonWriter& j, const char* key, const CounterMap& m) {
  j.begin_object(key);
  for (auto& [k, v] : m.values) j.value(k, v);
  j.end_object();
}
uint64_t not_split(const CounterMap& park) {
  uint64_t n = 0;
  for (auto& [k, v] : park.values)
    if (k.rfind("not_split", 0) == 0 || k.rfind("unsliced", 0) == 0) n += v;
  return n;
}
uint64_t merged(const CounterMap& park) {
  return park.get("merges") + park.get("released") + park.get("spliced");
}
uint64_t splits(const CounterMap& park) { return park.get("splits") + park.get("sliced"); }
}  // namespace

std::string RunResult::to_json() const {
  JsonWriter j;
  j.begin_object();
  j.value("mode", mode);
  j.value("packets_in", packets_in).value("bytes_in", bytes_in);
  j.value("packets_out", packets_out).value("bytes_out", bytes_out);
  j.value("packets_to_nf", packets_to_nf).value("bytes_to_nf", bytes_to_nf);
  j.value("packets_from_nf", packets_from_nf).value("bytes_from_nf", bytes_from_nf);
  j.value("split", splits(park)).value("not_split", not_split(park)).value("merged", merged(park));
  map(j, "drops", drops);
  j.value("nf_drops", nf_drops);
  j.value("duplicates", duplicates);
  j.value("balanced", balanced());
  j.value("held_at_exit", held_at_exit);
  j.value("pools_full", pools_full);
  j.value("seconds", seconds);
  j.value("mpps", seconds > 0 ? double(packets_in) / seconds / 1e6 : 0.0);
  map(j, "counters", park);
  map(j, "nf", nf);
  map(j, "faults", faults);
  map(j, "ports", ports);
  j.begin_array("warnings");
  for (const std::string& w : warnings) j.value("", w);
  j.end_array();
  if (reframe_on) {
    j.begin_object("reframe");
    j.value("slf_in", reframe_slf_in).value("slf_out", reframe_slf_out);
    j.value("held", reframe_held).value("useless_wait_us", reframe_useless_wait_us);
    for (auto& [k, v] : reframe.values) j.value(k, v);
    j.end_object();
  }
  j.end_object();
  return j.str();
}

std::string RunResult::to_text() const {
  std::string s;
  char b[256];
  auto line = [&](const char* k, uint64_t v) {
    std::snprintf(b, sizeof b, "  %-22s %llu\n", k, (unsigned long long)v);
    s += b;
  };
  std::snprintf(b, sizeof b, "nfpark run: mode %s, %.2f s\n", mode.c_str(), seconds);
  s += b;
  line("packets in", packets_in);
  line("packets out", packets_out);
  line("bytes to NF", bytes_to_nf);
  line("bytes from NF", bytes_from_nf);
  line("split", splits(park));
  line("not split", not_split(park));
  line("merged", merged(park));
  line("NF drops", nf_drops);
  for (auto& [k, v] : drops.values)
    if (v && k != "nf") line(("drop: " + k).c_str(), v);
  std::snprintf(b, sizeof b, "  %-22s %s\n", "in = out + drops", balanced() ? "yes" : "NO");
  s += b;
  std::snprintf(b, sizeof b, "  %-22s %s\n", "pools full at exit", pools_full ? "yes" : "NO");
  s += b;
  return s;
}

}  // namespace nfpark::dp
