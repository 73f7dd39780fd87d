#include "dp/run_report.h"

namespace nfpark::dp {

void report_server(const NfServer& server, bool with_chain, RunResult& res) {
  res.nf_drops = server.nf_drops;
  if (const FaultCounters* f = server.faults()) {
    res.fault_drops = f->dropped;
    res.duplicates = f->duplicated;
    auto s = res.faults.sink();
    s("dropped", f->dropped);
    s("duplicated", f->duplicated);
    s("reordered", f->reordered);
    s("corrupted", f->corrupted);
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
    res.drops.values["reframe_coalesced"] = server.coalesced;
  }
}

void report_mode(const SwitchMode& mode, RunResult& res) {
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
}

}  // namespace nfpark::dp
