#include "run/result_sum.h"

#include <algorithm>

namespace nfpark::run {

namespace {

void add_map(CounterMap& to, const CounterMap& from) {
  for (const auto& [k, v] : from.values) to.values[k] += v;
}

}  // namespace

void add_part(RunResult& t, const RunResult& p) {
  t.packets_in += p.packets_in;
  t.bytes_in += p.bytes_in;
  t.packets_out += p.packets_out;
  t.bytes_out += p.bytes_out;
  t.packets_to_nf += p.packets_to_nf;
  t.bytes_to_nf += p.bytes_to_nf;
  t.packets_from_nf += p.packets_from_nf;
  t.bytes_from_nf += p.bytes_from_nf;
  t.nf_drops += p.nf_drops;
  t.fault_drops += p.fault_drops;
  t.duplicates += p.duplicates;
  t.switch_drops += p.switch_drops;
  t.nf_drops_ended += p.nf_drops_ended;
  if (t.servers.size() < p.servers.size()) t.servers.resize(p.servers.size());
  for (size_t k = 0; k < p.servers.size(); ++k) {
    ServerResult &a = t.servers[k], b = p.servers[k];
    a.packets_to += b.packets_to, a.bytes_to += b.bytes_to;
    a.packets_from += b.packets_from, a.bytes_from += b.bytes_from;
    a.nf_drops += b.nf_drops, a.unanswered += b.unanswered, a.late += b.late;
    a.refused += b.refused, a.too_long += b.too_long;
    a.downs += b.downs, a.takebacks += b.takebacks;
    a.live = a.live && b.live;
  }
  add_map(t.drops, p.drops);
  add_map(t.park, p.park);
  add_map(t.nf, p.nf);
  add_map(t.faults, p.faults);
  add_map(t.ports, p.ports);
  add_map(t.reframe, p.reframe);
  for (const std::string& w : p.warnings)
    if (std::find(t.warnings.begin(), t.warnings.end(), w) == t.warnings.end())
      t.warnings.push_back(w);
  if (p.reframe_on) {
    // SLF is a per-packet average: weight each worker's by the packets its Reframer saw.
    // (packets_to_nf: a switch's worker; packets_in: an NF role's worker; `t` already has p's)
    const double b = double(p.packets_to_nf + p.packets_in);
    const double a = double(t.packets_to_nf + t.packets_in) - b;
    if (a + b > 0) {
      t.reframe_slf_in = (t.reframe_slf_in * a + p.reframe_slf_in * b) / (a + b);
      t.reframe_slf_out = (t.reframe_slf_out * a + p.reframe_slf_out * b) / (a + b);
    }
    t.reframe_on = true;
  }
  t.reframe_useless_wait_us += p.reframe_useless_wait_us;
  t.reframe_held += p.reframe_held;
  t.held_at_exit += p.held_at_exit;
}

}  // namespace nfpark::run
