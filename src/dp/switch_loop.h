// SwitchLoop: one `nfpark run` of the switch once everything is open — the run-to-completion
// loop, its three-step end, and what is left over when a run is cut short.
//
// Per iteration: the feeder plays the wire (replay), then traffic -> SwitchMode::to_nf -> NF
// link, the NF server's turn (inline poll, its own lcore, or another process), NF link ->
// SwitchMode::from_nf -> traffic, and the writer drains what left (replay). The run is over when
// the input is done and nothing has moved for a quiet period with no packet in a ring or in the
// server's hands; then the NF server releases what it holds, then the mode does, each after
// everything settled again. A live run ends at --idle-exit or its timeout.
//
// Bounded end: a signal (`stop`) or the timeout stops the intake at once — no more input read
// from the pcap or the traffic ports — and the same three steps run with a short quiet period
// (the NF server releases delayed packets at once), for at most kGrace. finish() then settles
// whatever is still in flight without waiting for anything: packets on their way to the NF are
// freed and counted as abandoned_at_exit; packets on their way back go through the mode as
// usual (a merge, an explicit drop, ...); the mode drains. Nothing reads a live port after the
// intake stopped, so ports that never go idle (net_null) cannot hold a run up.
//
// Back-pressure: a mode may take only part of a burst (SwitchMode::to_nf). The rest waits here,
// per traffic port, and is offered again before that port is read again; meanwhile packets wait
// in the port's ring. If nothing moves for a quiet period while packets wait so, and nothing is
// in a ring or in the NF server's hands, the loop (1) has the NF server release what it holds
// (a replay's trace time cannot advance while the input waits) and, if that moved nothing,
// (2) tells the mode the NF side is idle (SwitchMode::nf_idle): what it waits for will not come.
// The mode's timers run on the NF server's clock (SwitchMode::poll, every iteration, for a mode
// that has them: SwitchMode::polls).
//
// Several NF servers (--nf-servers M): one NF link per server (sw_nf[k]; in one process a ring
// pair to NfServer k, all served inline or by the one NF lcore; with --role switch, M ports to M
// NF processes). park::ServerChoice picks each packet's server (MbufMeta::server, which the mode
// reads as its slice) and, for servers in other processes, judges liveness: a server that
// answers nothing for dead_after while it has packets is down — the mode reclaims its memory
// (SwitchMode::server_down), its flows go to the others, what it still sends is dropped
// (counted late) until it is taken back on trial (server_choice.h). In-process servers never
// go down (the loop waits for them).
//
// Counting once. A traffic port's rx count measures a burst's bytes and longest frame
// (BurstLen); when the mode passes packets whole (SwitchMode::passes_whole: baseline) and took
// the whole burst, the direct hand-off counts the NF link with those lengths, and when the NF
// server hands the burst back whole (NfServer::handed_whole: nothing dropped — NFs never change
// a length) the way back, the mode's host-boundary count and the egress port's tx count use
// them too: one pass over the burst's lengths instead of six. Anything else is measured again.
// Such a burst is also moved by the loop itself (SwitchMode::to_nf_whole / from_nf_whole: the
// mode only counts): the array read is the array handed to the NF server, which hands the
// survivors back in place (NfServer::hand), and the array sent — no copy on the way; and on
// live ports (no cut-off bytes) its bytes are the chain's wire bytes (park::NfBurst::run).
//
// NF link, direct or ring. In one process with the NF server(s) inline (no --nf-lcore) the
// switch hands each burst the mode sends to the NF straight to NfServer::hand and what comes
// back straight to the mode (SwitchMode::from_nf): no ring enqueue and dequeue either way, no
// poll of an empty ring, the burst kept whole. What users see stays the same: the NF link's
// port counters (switch_nf*, nf_server*: the run's packets/bytes to and from the NF, the
// telemetry's to_nf / from_nf) are counted at the hand-off, once per burst each way; packets
// are handed in the order the ring would have carried them (FIFO per server), so per-flow order
// and the output are the ring path's; nothing waits in a ring at the end of a run. It is not
// valid where the server holds packets for a later poll or sends back what it did not get
// (fault injection, Reframer in-chain or in a box): those runs, --nf-lcore, another process
// (--role switch) and --nf-ring keep the ring path (direct() says which a run took).
#pragma once
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <atomic>
#include <string>
#include <vector>

#include "core/time.h"
#include "dp/nf_server.h"
#include "dp/nf_thread.h"
#include "dp/pcap_wire.h"
#include "dp/port.h"
#include "dp/reframe_box.h"
#include "dp/run_config.h"
#include "dp/switch_mode.h"
#include "dp/telemetry.h"
#include "dp/traffic_ports.h"
#include "park/server_choice.h"

namespace nfpark::dp {

class SwitchLoop {
 public:
  // NF server k runs inline (`servers[k]` on `nf_side[k]`), on the NF lcore (`nft`,
  // cfg.nf_lcore), or in another process (cfg.role == switch: `servers` and `nf_side` unused);
  // sw_nf[k] is the switch's end of its link.
  SwitchLoop(const RunConfig& cfg, SwitchMode& mode, std::vector<NfServer*> servers,
             TrafficPorts& traffic, std::vector<Port>& sw_nf, std::vector<Port>& nf_side,
             Feeder& feeder, Writer& out, NfThread& nft, const std::atomic<int>& stop);

  // Per NF server: what the switch dropped of what came back from it (late: while it was down;
  // refused: by the mode, e.g. a tag from another server's link), and its liveness record.
  struct ServerDrops {
    uint64_t late = 0, refused = 0;
  };
  const ServerDrops& server_drops(uint32_t k) const { return sdrops_[k]; }
  const park::ServerChoice& choice() const { return choice_; }

  static constexpr Nanos kGrace = 500 * kMilli;

  // Runs until the input is done and everything has settled, until --idle-exit or the timeout
  // (live), or until `stop` or the timeout cut it short (then at most kGrace more). Returns why
  // it ended; the signal number is the caller's.
  // Live runs: publish counters to `s` (telemetry, rate line) about once a second.
  void observe(LiveStats* s) { stats_ = s; }
  // One worker of several (dp/worker.h): the wire (feeder, writer) runs on another lcore, which
  // sets `input_done` once the input is all on this worker's ring; run() never touches the
  // feeder or the writer (finish(), on the wire's lcore once every worker stopped, may drain the
  // writer).
  void wire_elsewhere(const std::atomic<bool>* input_done) { input_done_ = input_done; }
  // Reframer runs in a box on its own lcore in front of the NF server(s) (dp/reframe_box.h):
  // the loop waits for it as for the NF lcore, and has it release what it holds first.
  void set_box(ReframeBox* box) { box_ = box; }
  run::End run();
  // The NF link of this run was the direct hand-off (decided when run() starts; see above).
  bool direct() const { return direct_; }
  // Seconds since run() started.
  double seconds() const { return double(clock_.now() - start_) / 1e9; }
  // After run() and after the NF lcore (if any) has stopped: settles what is still in flight
  // (see above), including the replay feeder's `wire_in` when given. Returns the packets
  // abandoned (freed uncounted elsewhere). Bounded: never waits for a port.
  uint64_t finish(rte_ring* wire_in);

 private:
  uint32_t to_nf(Nanos now);  // traffic -> NF; packets moved
  // direct: NF k and back; `len`: the lengths of pkts[0, n) when known (n <= kBurst), and
  // then `from`: the traffic port they all came in by (-1: not known)
  void hand_off(uint32_t k, rte_mbuf** pkts, size_t n, Nanos now, const BurstLen* len = nullptr,
                int from = -1);
  bool refused() const;             // packets refused by the mode wait to be offered again
  uint32_t poll_mode(Nanos now);    // the mode's timers; packets released
  void stall_step(Nanos now);       // back-pressure and nothing moves: see above
  uint32_t poll_server(Nanos now);  // the NF server's share of the work
  uint32_t from_nf();               // NF -> traffic; packets moved
  void end_step(int phase, Nanos now);
  // NF k -> mode -> traffic; `len`: the lengths of pkts[0, n) when known, `from`: the traffic
  // port they all came in by (-1: not known)
  void back_from_nf(rte_mbuf* const* pkts, uint16_t n, uint32_t k, const BurstLen* len = nullptr,
                    int from = -1);
  void liveness(Nanos now);    // servers in other processes: down / taken back
  bool nf_rx_pending() const;  // a packet waits in a ring from an NF server
  bool nf_backlogged() const;  // a packet waits in an NF link's TX backlog
  bool nf_flush();             // retries every NF link's backlog; true when all are empty

  const RunConfig& cfg_;
  SwitchMode& mode_;
  std::vector<NfServer*> servers_;
  TrafficPorts& traffic_;
  std::vector<Port>& sw_nf_;
  std::vector<Port>& nf_side_;
  Feeder& feeder_;
  Writer& out_;
  NfThread& nft_;
  const std::atomic<int>& stop_;
  const bool live_, external_nf_, trace_time_;
  bool direct_ = false;  // the direct hand-off (see "NF link")
  SteadyClock clock_;
  Nanos start_ = 0;
  bool seen_traffic_ = false;
  bool stopping_ = false;  // intake stopped: a signal or the timeout
  int end_phase_ = 0;      // end steps done (2: all)
  uint64_t seen_nf_activity_ = 0;
  int stall_phase_ = 0;
  ReframeBox* box_ = nullptr;
  uint64_t seen_box_activity_ = 0;
  LiveStats* stats_ = nullptr;  // live runs: counters for telemetry and the rate line
  const std::atomic<bool>* input_done_ = nullptr;  // set: the wire is another lcore's
  park::ServerChoice choice_;
  std::vector<ServerDrops> sdrops_;
  std::vector<rte_mbuf*> to_nf_, to_out_;
  std::vector<std::vector<rte_mbuf*>> per_server_;  // to_nf_ sorted by server
  rte_mbuf* b_[kBurst];
  rte_mbuf* in_nf_[kBurst];       // a burst from an NF link (back_from_nf may copy it to b_)
  rte_mbuf* in_[2][kBurst];       // per traffic port: the burst being offered to the mode
  uint16_t refused_[2] = {0, 0};  // packets of in_[t] the mode refused (its first ones)
};

}  // namespace nfpark::dp
