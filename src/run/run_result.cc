#include "run/run_result.h"

#include <csignal>
#include <cstdio>
#include <cstring>

#include "core/json.h"

namespace nfpark::run {

std::string_view to_string(End e) {
  switch (e) {
    case End::kInputDone:
      return "input_done";
    case End::kIdleExit:
      return "idle_exit";
    case End::kTimeout:
      return "timeout";
    case End::kSignal:
      return "signal";
  }
  return "?";
}

namespace {
std::string signal_name(int sig) {
  if (sig == SIGINT) return "SIGINT";
  if (sig == SIGTERM) return "SIGTERM";
  return "signal " + std::to_string(sig);
}
}  // namespace

int RunResult::verdict(std::string& why) const {
  // A run that lost track of a packet, or leaked a buffer, has failed whatever else it did.
  if (!role_nf && !balanced()) {
    why = "packets in != out + drops (see the counters): a bug";
    return kExitBroken;
  }
  if (!pools_full) {
    why = "mempools not full at exit: a buffer leaked";
    return kExitBroken;
  }
  if (!completed()) {
    why = end == End::kSignal ? "interrupted by " + signal_name(signal)
                              : "cut short by --timeout (" + std::to_string(seconds) + " s)";
    if (drops.get("abandoned_at_exit"))
      why += "; " + std::to_string(drops.get("abandoned_at_exit")) +
             " packets in flight counted as abandoned_at_exit";
    return kExitInterrupted;
  }
  return kExitComplete;
}

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
uint64_t splits(const CounterMap& park) {
  return park.get("splits") + park.get("sliced");
}
}  // namespace

std::string RunResult::to_json() const {
  JsonWriter j;
  j.begin_object();
  j.value("mode", mode);
  j.value("status", completed() ? "complete" : "cut_short");
  j.value("end", std::string(to_string(end)));
  if (end == End::kSignal) j.value("signal", signal_name(signal));
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
  j.begin_array("servers");
  for (const ServerResult& r : servers) {
    j.begin_object("");
    j.value("packets_to", r.packets_to).value("bytes_to", r.bytes_to);
    j.value("packets_from", r.packets_from).value("bytes_from", r.bytes_from);
    j.value("nf_drops", r.nf_drops).value("drops", r.drops());
    j.value("unanswered", r.unanswered).value("late", r.late).value("refused", r.refused);
    j.value("too_long", r.too_long);
    j.value("live", r.live).value("downs", r.downs).value("takebacks", r.takebacks);
    j.end_object();
  }
  j.end_array();
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
  std::snprintf(b, sizeof b, "nfpark run: mode %s, %.2f s, %s (%s)\n", mode.c_str(), seconds,
                completed() ? "complete" : "cut short", std::string(to_string(end)).c_str());
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
  if (servers.size() > 1)
    for (size_t k = 0; k < servers.size(); ++k) {
      const ServerResult& r = servers[k];
      std::snprintf(b, sizeof b, "  NF server %-12zu %llu to, %llu from, %llu dropped%s\n", k,
                    (unsigned long long)r.packets_to, (unsigned long long)r.packets_from,
                    (unsigned long long)(r.drops() + r.nf_drops), r.live ? "" : " (down)");
      s += b;
    }
  std::snprintf(b, sizeof b, "  %-22s %s\n", "in = out + drops", balanced() ? "yes" : "NO");
  s += b;
  std::snprintf(b, sizeof b, "  %-22s %s\n", "pools full at exit", pools_full ? "yes" : "NO");
  s += b;
  return s;
}

}  // namespace nfpark::run
