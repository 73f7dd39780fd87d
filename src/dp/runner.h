// Runner: `nfpark run` end to end in one process — the "embedded" deployment.
//
//   input pcap --feeder--> [traffic port] --switch: split--> [NF link] --> NF server (chain)
//   output pcap <--writer-- [traffic port] <--switch: merge-- [NF link] <--'
//
// The traffic port and the NF link are DPDK ring ports (rte_eth_from_rings), so the switch and
// the NF server use the ethdev API exactly as on memif or a NIC. The feeder plays the wire: it
// copies the input trace into mbufs and enqueues them on the traffic port's RX ring; the writer
// drains the traffic port's TX ring into the output pcap, stamping each packet with its input
// timestamp (carried in an mbuf dynamic field), so the output of two modes can be compared byte
// for byte. The NF server runs inline on the same lcore (default) or on a second lcore.
//
// The run ends when the input is exhausted and nothing has moved for a while; whatever a mode
// still holds is drained (counted), and every mempool must then be full again. SIGINT, SIGTERM
// and --timeout end any run within about a second (switch_loop.h); the result says how it
// ended. The output pcap is written to a temporary file and moved over --out only when the run
// has a result that broke no invariant (run/output_file.h).
//
// The config comes checked from run::Loader, and its memory from run::check_memory: this file
// only sizes the pools from run::plan_memory and opens what the config names.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>

#include "dp/run_config.h"
#include "run/budget.h"
#include "run/nf_assembly.h"

namespace nfpark::dp {

// SIGINT and SIGTERM end a run: the handlers (installed by catch_stop_signals(), before EAL
// starts) only record the signal here; the loops poll it.
extern std::atomic<int> g_stop_signal;
void catch_stop_signals();

// Runs the config. Returns 0 when the run has a result (its verdict is res.verdict()), 1 if it
// failed (with `err`), 2 on bad input (a trace or port that cannot be opened).
int run(const RunConfig& cfg, RunResult& res, std::string& err);
// The NF-server role alone (nf_role.cc): serves `cfg.port` until a signal or idle exit.
int run_nf_role(const RunConfig& cfg, RunResult& res, std::string& err);
// The NF-server role over cfg.workers > 1 lcores (nf_workers.cc), EAL up.
int run_nf_workers(const RunConfig& cfg, const run::Budget& budget, const run::NfServerSpec& spec,
                   RunResult& res, std::string& err);

}  // namespace nfpark::dp
