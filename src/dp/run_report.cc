#include "dp/run_report.h"

#include <algorithm>

namespace nfpark::dp {

void report_server(const NfServer& server, bool with_chain, RunResult& res) {
  res.nf_drops = server.nf_drops();
  res.nf_drops_ended = res.nf_drops;  // the NF alone; report_mode counts the notices
  if (const FaultCounters* f = server.faults()) {
    res.fault_drops = f->dropped;
    res.duplicates = f->duplicated;
    auto s = res.faults.sink();
    s("dropped", f->dropped);
    s("duplicated", f->duplicated);
    s("reordered", f->reordered);
    s("corrupted", f->corrupted);
    s("forged", f->forged);
    s("delayed", f->delayed);
  }
  auto ds = res.drops.sink();
  ds("nf", res.nf_drops);
  ds("fault_injected", res.fault_drops);
  if (with_chain) {
    server.chain().counters(res.nf.sink());
    server.chain().warnings([&](std::string_view w) { res.warnings.emplace_back(w); });
  }
  const auto& ep = server.endpoint();
  auto es = res.nf.sink("server.");
  es("header_only", ep.header_only);
  es("whole", ep.whole);
  es("drop_notified", ep.drop_notified);
  es("drop_freed", ep.drop_freed);
  if (const auto* rf = server.reframer()) {
    const auto& st = rf->stats();
    res.reframe_on = true;
    res.reframe_slf_in = st.slf_in();
    res.reframe_slf_out = st.slf_out();
    res.reframe_held = st.held;
    res.reframe_useless_wait_us = double(st.useless_wait_ns) / 1000;
    rf->counters(res.reframe.sink());
    res.drops.values["reframe_coalesced"] = server.coalesced();
  }
}

void report_servers(const std::vector<std::unique_ptr<NfServer>>& servers, bool external,
                    RunResult& res) {
  const size_t m = std::max<size_t>(res.servers.size(), servers.size());
  res.servers.resize(m);
  if (servers.size() == 1) {
    report_server(*servers[0], !external, res);
    res.servers[0].nf_drops = res.nf_drops;
    return;
  }
  for (size_t k = 0; k < servers.size(); ++k) {
    RunResult t;
    report_server(*servers[k], true, t);
    res.servers[k].nf_drops = t.nf_drops;
    res.nf_drops += t.nf_drops;
    res.nf_drops_ended += t.nf_drops_ended;
    res.fault_drops += t.fault_drops;
    res.duplicates += t.duplicates;
    for (auto maps : {std::pair{&res.drops, &t.drops}, std::pair{&res.faults, &t.faults},
                      std::pair{&res.nf, &t.nf}, std::pair{&res.reframe, &t.reframe}})
      for (auto& [key, v] : maps.second->values) maps.first->values[key] += v;
    for (std::string& w : t.warnings)
      if (std::find(res.warnings.begin(), res.warnings.end(), w) == res.warnings.end())
        res.warnings.push_back(std::move(w));
    if (t.reframe_on) {  // SLF and waits: the first server's (each server has its own)
      if (!res.reframe_on) {
        res.reframe_slf_in = t.reframe_slf_in, res.reframe_slf_out = t.reframe_slf_out;
        res.reframe_useless_wait_us = t.reframe_useless_wait_us;
      }
      res.reframe_on = true;
      res.reframe_held += t.reframe_held;
    }
  }
}

void report_mode(const SwitchMode& mode, const std::vector<NfServer*>& servers, bool external,
                 RunResult& res) {
  uint64_t freed = 0;
  if (!external)
    for (const NfServer* s : servers) freed += s->endpoint().drop_freed;
  res.nf_drops_ended = freed + mode.nf_drops_returned();
  res.drops.values["nf"] = res.nf_drops_ended;
  mode.drop_reasons(res.drops.sink());
  mode.report(res.park.sink());
  res.held_at_exit = mode.held();
}

void report_port(const std::string& name, const Port& p, RunResult& res) {
  auto ps = res.ports.sink(name + ".");
  ps("rx_packets", p.rx_packets);
  ps("rx_bytes", p.rx_bytes);
  ps("tx_packets", p.tx_packets);
  ps("tx_bytes", p.tx_bytes);
  if (p.max_frame() != UINT32_MAX) ps("max_frame", p.max_frame());
  ps("tx_too_long", p.too_long);
  if (p.peer_gone) ps("tx_peer_gone", p.peer_gone);
}

}  // namespace nfpark::dp
