// RunResult: what one `nfpark run` did — totals, drops by reason, the mode's, the chain's and
// the ports' counters, how it ended — and the verdict that becomes its exit code. No DPDK: the
// dataplane fills it (src/dp/run_report.h) and the simulator can fill the same.
//
// Exit codes (documented in `nfpark run --help` and docs/run.md):
//   0 complete     the run ended as planned and every invariant held
//   1 broken       an invariant broke (in != out + drops, a leaked mbuf) or the run failed
//   2 bad input    a bad flag, config, trace or port; nothing ran (no output written)
//   3 interrupted  SIGINT, SIGTERM or --timeout cut the run short; packets still in flight were
//                  counted (drops.abandoned_at_exit) and the invariants still checked
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/counters.h"
#include "run/run_config.h"

namespace nfpark::run {

enum ExitCode : int { kExitComplete = 0, kExitBroken = 1, kExitBadInput = 2, kExitInterrupted = 3 };

// Why a run ended.
enum class End : uint8_t {
  kInputDone,  // replay: the input was played and everything settled
  kIdleExit,   // live / role nf: --idle-exit after traffic stopped
  kTimeout,    // --timeout (the planned end of a live run; a replay cut short)
  kSignal,     // SIGINT or SIGTERM
};
std::string_view to_string(End e);

// One NF server of the switch (JSON "servers"): packets and bytes to and from it, what its
// chain dropped, what the switch dropped of its packets — never answered (another process),
// sent while it was down (late), refused at the merge (e.g. a tag from another server's link),
// too long for its link — and its liveness record (server_choice.h).
struct ServerResult {
  uint64_t packets_to = 0, bytes_to = 0, packets_from = 0, bytes_from = 0;
  uint64_t nf_drops = 0, unanswered = 0, late = 0, refused = 0, too_long = 0;
  uint64_t downs = 0, takebacks = 0;
  bool live = true;
  uint64_t drops() const { return unanswered + late + refused + too_long; }
};

struct RunResult {
  std::string mode;
  std::vector<ServerResult> servers;  // per NF server (one entry with one server)
  uint64_t packets_in = 0, bytes_in = 0, packets_out = 0, bytes_out = 0;
  uint64_t packets_to_nf = 0, bytes_to_nf = 0, packets_from_nf = 0, bytes_from_nf = 0;
  uint64_t nf_drops = 0, fault_drops = 0, duplicates = 0, switch_drops = 0;
  // NF drops as they ended: freed by the NF server, or sent back as notices that found their
  // payload at the switch (a notice that found nothing is a switch drop). Equals nf_drops when
  // nothing happens on the way back; the balance counts these ("nf" in drops).
  uint64_t nf_drops_ended = 0;
  CounterMap drops;  // reason -> count (NF drops as they ended included as "nf")
  CounterMap park;   // the mode's counters
  CounterMap nf;     // the chain's counters
  CounterMap faults;
  CounterMap ports;                   // per-port packets/bytes: "<port>.rx_packets", ...
  CounterMap reframe;                 // Reframer's counters, when it ran
  std::vector<std::string> warnings;  // the NFs' end-of-run warnings, "<nf>: <what and fix>"
  bool reframe_on = false;
  double reframe_slf_in = 0, reframe_slf_out = 0, reframe_useless_wait_us = 0;
  uint64_t reframe_held = 0;
  uint64_t held_at_exit = 0;
  bool pools_full = false;
  bool ran = false;  // the dataplane started (false: nothing to report)
  double seconds = 0;
  End end = End::kInputDone;
  int signal = 0;        // the signal that ended the run (End::kSignal)
  bool live = false;     // live ports: a timeout is the planned end, not a cut
  bool role_nf = false;  // the NF-server role: it balances nothing on its own

  // The run did what it set out to do: not cut short by a signal, nor a replay by its timeout.
  bool completed() const { return end != End::kSignal && !(end == End::kTimeout && !live); }
  bool balanced() const {
    return packets_in + duplicates == packets_out + nf_drops_ended + fault_drops + switch_drops;
  }
  // The exit code (ExitCode) and, unless complete, one line saying why.
  int verdict(std::string& why) const;
  std::string to_json() const;
  std::string to_text() const;
};

}  // namespace nfpark::run
