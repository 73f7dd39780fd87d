// RunReport: once a run's loop is over, gathers what its parts counted into its RunResult — the
// NF server (its chain, endpoint, faults and Reframer), the switch mode, and each port. The
// embedded / switch run (runner.cc) and the NF-server role (nf_role.cc) report through these, so
// a counter is named in one place. Totals (packets in/out, seconds, pools) stay with the caller.
#pragma once
#include <memory>
#include <vector>

#include "dp/nf_server.h"
#include "dp/port.h"
#include "dp/runner.h"
#include "dp/switch_mode.h"

namespace nfpark::dp {

// nf_drops, fault_drops, duplicates, drops{nf, fault_injected, reframe_coalesced}, faults,
// nf (the chain's counters, when `with_chain`, and server.*), and Reframer's results.
void report_server(const NfServer& server, bool with_chain, RunResult& res);
// report_server for the NF servers of one switch, summed (counters) and per server
// (res.servers[k].nf_drops); res.servers gets one entry per server. `external`: the servers are
// other processes (`servers` holds one, unused, whose chain is not reported).
void report_servers(const std::vector<std::unique_ptr<NfServer>>& servers, bool external,
                    RunResult& res);
// The mode's drop reasons, its counters (park) and what it still held at exit; `servers`: the
// in-process NF servers (none in role switch).
void report_mode(const SwitchMode& mode, const std::vector<NfServer*>& servers, bool external,
                 RunResult& res);
// "<name>.rx_packets", "<name>.rx_bytes", "<name>.tx_packets", "<name>.tx_bytes".
void report_port(const std::string& name, const Port& p, RunResult& res);

}  // namespace nfpark::dp
