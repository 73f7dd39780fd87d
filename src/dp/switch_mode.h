// SwitchMode: how the switch treats traffic on its way to the NF server and back. One
// implementation per parking mode; each is a thin adapter from bursts of mbufs to the
// engine-neutral logic in src/park (PayloadPark, QUEUE-MEM, NFSlicer), which does the work.
#pragma once
#include <rte_mbuf.h>

#include <memory>
#include <vector>

#include "core/counters.h"
#include "core/packet_view.h"
#include "core/time.h"
#include "dp/port.h"
#include "dp/run_config.h"

namespace nfpark::dp {

class SwitchMode {
 public:
  virtual ~SwitchMode() = default;
  // Traffic port -> NF: append what goes to the NF server to `to_nf`, what leaves directly to
  // `to_out`. Packets dropped here are counted by the mode. Returns how many of pkts[0, n) it
  // took (a prefix): the rest is refused for now (back-pressure) and stays the caller's, to be
  // offered again, first, on a later call. Only QUEUE-MEM ever refuses. Each packet's NF server
  // (MbufMeta::server, set by the caller) is its PayloadPark slice / QUEUE-MEM port; what goes
  // to the NF keeps it (header packets copy the metadata).
  virtual uint16_t to_nf(rte_mbuf** pkts, uint16_t n, std::vector<rte_mbuf*>& to_nf,
                         std::vector<rte_mbuf*>& to_out) = 0;
  // NF -> traffic port: packets that came back from NF server `server`.
  virtual void from_nf(rte_mbuf** pkts, uint16_t n, uint8_t server,
                       std::vector<rte_mbuf*>& to_out) = 0;
  // A mode that passes packets whole (baseline) says so: to_nf() takes every packet and sends
  // it to the NF as it is and in order (nothing to to_out), from_nf() sends every packet back
  // as it came and in order. The loop then measures a burst's lengths once (BurstLen), carries
  // them through both ways and the ports instead of each stage reading every packet again, and
  // moves the burst itself: it calls to_nf_whole() / from_nf_whole() instead.
  virtual bool passes_whole() const { return false; }
  // A mode that passes whole: counts what to_nf() / from_nf() count of a burst (`len`: its
  // lengths, Port::measure), without appending it anywhere (the caller sends it on as it is).
  virtual void to_nf_whole(rte_mbuf* const* pkts, uint16_t n, const BurstLen& len) {
    (void)pkts;
    (void)n;
    (void)len;
  }
  virtual void from_nf_whole(uint16_t n, const BurstLen& len) {
    (void)n;
    (void)len;
  }
  // NF server `server` went down (park/server_choice.h): reclaim what waits for it.
  virtual void server_down(uint8_t server, std::vector<rte_mbuf*>& to_out) {
    (void)server;
    (void)to_out;
  }
  // Time-driven work, every loop iteration; may release packets. `now`: the NF server's clock
  // (trace time when replaying, INT64_MIN before it has one); `settled`: every packet the NF
  // side has sent back so far has been through from_nf().
  virtual void poll(Nanos now, bool settled, std::vector<rte_mbuf*>& to_out) {
    (void)now;
    (void)settled;
    (void)to_out;
  }
  // False when poll() does nothing (every mode but QUEUE-MEM): the loop then skips it.
  virtual bool polls() const { return false; }
  // The engine knows that nothing is on its way to or from the NF server and that the server
  // holds nothing: whatever the mode still waits for from the NF will not come.
  virtual void nf_idle(std::vector<rte_mbuf*>& to_out) { (void)to_out; }
  // End of run: release or free whatever is still held (counted).
  virtual void drain(std::vector<rte_mbuf*>& to_out) = 0;
  virtual void report(const CounterSink& sink) const = 0;
  // Packets this mode dropped (each once), and packets it holds right now.
  virtual uint64_t drops() const = 0;
  virtual uint64_t held() const = 0;
  // Per-reason drop counts for the run's "drops" object.
  virtual void drop_reasons(const CounterSink& sink) const = 0;
  // NF drops that came back as drop notices and found what they named (the NF counts only the
  // drops it frees; a notice that finds nothing is one of drops()).
  virtual uint64_t nf_drops_returned() const { return 0; }
  // What the NF chain reads of a packet (nf::Chain::reads()): the host-boundary modes count
  // those bytes as touched, and parse a packet for it only when the chain reads the parse.
  virtual void set_reads(ViewNeed r) { (void)r; }
};

// `nic_pool`: the NIC-memory pool (nicmem mode), or nullptr.
std::unique_ptr<SwitchMode> make_switch_mode(const RunConfig& cfg, rte_mempool* nic_pool,
                                             std::string& err);

}  // namespace nfpark::dp
