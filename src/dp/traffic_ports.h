// TrafficPorts: where `nfpark run`'s traffic enters and leaves the switch.
//
//   replay (--in FILE.pcap): one in-process ring port; the pcap feeder enqueues frames on its RX
//                            ring and the writer drains its TX ring — a packet leaves where it
//                            came in.
//   live (--traffic A,B):    two DPDK ports (af_packet on veths, a NIC, ...); a packet that came
//                            in on one leaves on the other (a bump in the wire). With workers,
//                            one RX and one TX queue per worker on each port (af_packet: qpairs=N
//                            is added to a spec that does not say), and each worker's view reads
//                            through its Steer (dp/steer.h): the frames the shard gives it.
#pragma once
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <string>
#include <vector>

#include "core/mac_sides.h"
#include "dp/port.h"
#include "dp/runner.h"
#include "dp/steer.h"

namespace nfpark::dp {

class TrafficPorts {
 public:
  // Replay: one ring port, its RX ring (`wire_in`, the feeder's) and TX ring (`wire_out`, the
  // writer's).
  bool open_replay(rte_mempool* pool, uint32_t ring_size, rte_ring*& wire_in, rte_ring*& wire_out,
                   std::string& err);
  // The same with one queue per worker: wire_in[q] and wire_out[q] are queue q's rings.
  bool open_replay(rte_mempool* pool, uint32_t ring_size, uint16_t queues,
                   std::vector<rte_ring*>& wire_in, std::vector<rte_ring*>& wire_out,
                   std::string& err);
  // Queue `q` of every port, for the worker that owns it (Port::queue).
  TrafficPorts queue(uint16_t q) const {
    TrafficPorts t;
    t.n_ = n_;
    t.sides_ = sides_;
    for (int i = 0; i < n_; ++i) t.ports_[i] = ports_[i].queue(q);
    return t;
  }
  // Live: ports A and B from their specs; `split` asks them for a hardware header/data split;
  // `queues` RX and TX queues each (one per worker).
  bool open_live(const std::string& a, const std::string& b, rte_mempool* pool,
                 const BufferSplit* split, std::string& err, uint16_t queues = 1);
  // The spec of a live port with `queues` queues: an af_packet vdev that does not say gets
  // qpairs=queues (its sockets in one PACKET_FANOUT group); others are what they offer.
  static std::string with_queues(const std::string& spec, uint16_t queues);
  // A worker's view of live ports reads through `s` (the frames the shard gives the worker).
  void steer_by(Steer* s) { steer_ = s; }
  // Up to `n` frames from port `t` (through the Steer, when there is one).
  uint16_t rx(int t, rte_mbuf** b, uint16_t n) {
    return steer_ ? steer_->rx(t, ports_[t], b, n) : ports_[t].rx(b, n);
  }

  // Live ports: rx() leaves metadata as it is (Port::skip_meta_reset; pools start reset).
  void skip_meta_reset() {
    for (int i = 0; i < n_; ++i) ports_[i].skip_meta_reset();
  }
  bool live() const { return n_ == 2; }
  int size() const { return n_; }
  Port& operator[](int i) { return ports_[i]; }

  // Sends every packet in `v` to where it leaves (in order per port; never drops).
  void send(const std::vector<rte_mbuf*>& v) { send(v, nullptr); }
  // The same with v's lengths known (`len`: Port::measure of all of v; nullptr: unknown): a
  // burst that leaves by one port is counted from it, with no pass over its packets.
  // `from` >= 0: every frame of v came in by traffic port `from` (the caller read them there
  // and nothing since changed their port), so they all leave by the other one, unchecked.
  void send(const std::vector<rte_mbuf*>& v, const BurstLen* len, int from = -1) {
    send(v.data(), v.size(), len, from);
  }
  // The same for the `n` packets at `v`.
  void send(rte_mbuf* const* v, size_t n, const BurstLen* len, int from = -1);
  // Retries every port's TX backlog; true when all are empty.
  bool flushed() {
    bool all = true;
    for (int i = 0; i < n_; ++i) all = ports_[i].flush() && all;
    return all;
  }
  bool backlogged() const;
  // Packets waiting on an in-process RX ring (0 for live ports).
  unsigned rx_pending() const;
  // Frees what still waits in the ports' transmit backlogs (end of a run cut short: a port that
  // does not take it), no longer counted as sent. Returns how many.
  uint64_t drop_backlog();

  // Live runs: packets and bytes in and out, from the ports' own counters (after a last flush).
  void count_live(RunResult& res);
  // Live ports: remembers which side the `n` frames just read on port `t` came from, so a frame
  // that comes back from an NF server in another process (its ingress port lost) leaves on the
  // other side (core/mac_sides.h).
  void learn(int t, rte_mbuf* const* b, uint16_t n) {
    if (live())
      for (uint16_t i = 0; i < n; ++i)
        if (b[i]->data_len >= 12) sides_.learn(rte_pktmbuf_mtod(b[i], const uint8_t*), t);
  }
  // Per-port counters into res.ports.
  void report(RunResult& res) const;
  void stop();

 private:
  Port& egress(const rte_mbuf* m) {
    if (!live()) return ports_[0];
    if (m->port == ports_[0].id()) return ports_[1];
    if (m->port == ports_[1].id()) return ports_[0];
    // Came from another process: by address. A frame neither side's hosts sent nor receive
    // goes to side B, as a frame of side A would.
    const int side =
        m->data_len >= 12 ? sides_.egress(rte_pktmbuf_mtod(m, const uint8_t*)) : MacSides::kUnknown;
    return side == 0 ? ports_[0] : ports_[1];
  }
  static constexpr size_t kMaxTx = 8192;  // packets per Port::tx call from send()
  Port ports_[2];
  std::vector<rte_mbuf*> by_port_[2];  // send(): each port's share of a live burst, in order
  MacSides sides_;
  int n_ = 0;
  Steer* steer_ = nullptr;
};

}  // namespace nfpark::dp
