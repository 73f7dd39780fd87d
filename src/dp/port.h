// Port: one DPDK ethdev the engine reads and writes, with a transmit backlog so that a full TX
// queue never drops a packet (the stage that feeds a backlogged port stops reading until the
// backlog drains: back-pressure instead of loss).
//
// Ports come from a spec string:
//   ring:NAME        an in-process ring pair port (created with rte_eth_from_rings); two ring
//                    ports created with ring_pair() see each other's TX as RX (a virtual cable)
//   vdev:DEVARGS     any virtual device, e.g. vdev:net_memif0,role=server,socket=/tmp/m.sock
//                    or vdev:net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap
//                    or vdev:net_af_packet0,iface=veth0
//   pci:ADDR / N     a probed device by PCI address or port id (real NICs)
//
// Frame limits. A frame longer than its output port can carry is dropped at tx() and counted
// (too_long; in the run's balance as drops.frame_too_long), never handed to a driver that would
// drop it silently or cut it:
//   in-process rings (the replay traffic port, the embedded NF link)  none: mbufs pass by pointer
//   memif        kMemifMaxFrame (256 KiB, the pcap snaplen): chained across memif buffers
//   af_packet    min(framesz - 32, interface MTU + 18): the PMD's TX frame (devarg framesz,
//                default 2048) and what the kernel accepts (MTU + Ethernet header + one VLAN tag)
//   pcap         65535 (the PMD's buffer for a multi-segment frame)
//   others       the device's max_rx_pktlen (a NIC's jumbo limit), none when it reports none
// Peers that come and go. A memif port's driver maps and unmaps the memory it shares with its
// peer on DPDK's interrupt thread, when the peer connects or goes away. rx(), tx() and flush()
// of such a port hold the ControlGate (control_gate.h): that thread does this work between two
// bursts, never during one, so a peer that dies or disconnects at any moment costs what was in
// flight, never a crash. While the peer is away (the link was up and is down) rx() returns 0
// and tx() frees what it is given and what waited in the backlog, counted in peer_gone (still
// in tx_packets) so that none of it reaches the next peer; a peer that connects is served. One
// thread (the data path) calls them; stop() lets the interrupt thread go. af_packet ports have
// no such thread (read in DPDK 22.11's rte_eth_af_packet.c, not exercised by a test here):
// their rings stay mapped while the socket is open; after the interface goes away the kernel
// refuses to send, the PMD still reports the frames sent, and a full TX ring makes tx() wait
// in poll() until a signal interrupts it.
// Metadata. A port that is not an in-process ring receives frames from another process or the
// wire: their mbuf metadata (MbufMeta: input sequence, time, cut-off bytes) is reset on rx(),
// unless the run says no mbuf of its pools ever holds other values (skip_meta_reset).
#pragma once
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "dp/control_gate.h"

namespace nfpark::dp {

constexpr uint16_t kBurst = 32;
constexpr uint32_t kMemifMaxFrame = 256 * 1024;

// A burst's lengths, measured once (Port::measure, Port::count_rx) and carried to the stages
// after it while nothing between can change a length (dp/switch_loop.h, "Counting once").
struct BurstLen {
  uint64_t bytes = 0;    // sum of pkt_len
  uint32_t longest = 0;  // largest pkt_len
};

// Header/data split on receive (nicmem): the first `hdr_len` bytes land in a buffer from
// `hdr_pool`, the rest in one from `data_pool`, in hardware, where the port offers
// RTE_ETH_RX_OFFLOAD_BUFFER_SPLIT. Where it does not, frames land whole in `data_pool` and the
// nicmem mode splits them in software (same result).
struct BufferSplit {
  rte_mempool* hdr_pool = nullptr;
  rte_mempool* data_pool = nullptr;
  uint16_t hdr_len = 64;
};

class Port {
 public:
  // Creates or finds the ethdev named by `spec`, configures `queues` RX and TX queues (one per
  // worker: queue() views them), starts it.
  static bool open(const std::string& spec, rte_mempool* rx_pool, Port& out, std::string& err,
                   const BufferSplit* split = nullptr, uint16_t queues = 1);
  // True when the port splits headers from data in hardware (see BufferSplit).
  bool hw_split() const { return hw_split_; }
  // Two ring ports wired back to back (A's TX is B's RX and vice versa), `queues` rings each way.
  static bool ring_pair(const std::string& name, rte_mempool* pool, Port& a, Port& b,
                        std::string& err, unsigned ring_size = 4096, uint16_t queues = 1);
  // A ring port whose RX ring and TX ring are exposed, for feeding and draining from the host.
  static bool ring_ends(const std::string& name, rte_mempool* pool, Port& p, rte_ring*& rx,
                        rte_ring*& tx, std::string& err, unsigned ring_size = 4096);
  // The same with `queues` RX and TX rings (one per worker; rx[q] and tx[q] are queue q's).
  static bool ring_ends(const std::string& name, rte_mempool* pool, Port& p,
                        std::vector<rte_ring*>& rx, std::vector<rte_ring*>& tx, std::string& err,
                        unsigned ring_size, uint16_t queues);
  // Queue `q` of this port as a port of its own, for the worker that owns it: its own counters
  // and transmit backlog; the port itself stays this object's (stop() on a view does nothing).
  // A view never holds the ControlGate (one thread may): the owner holds it for the whole run
  // once the peer is connected (wait_peer), so a peer that goes away mid-run is not noticed by
  // the views (no peer_gone): its memory stays mapped until the run ends.
  Port queue(uint16_t q) const;
  // Gated ports (memif) with workers: waits until the peer is connected (the link is up), then
  // holds the gate until stop(). False when `stop` was set or `timeout_s` passed first.
  bool wait_peer(const std::atomic<int>& stop, double timeout_s);
  uint16_t queues() const { return queues_; }
  // A live run: no replay feeder writes metadata and the pools start reset (pools.h), so every
  // mbuf this port hands out already has reset metadata; rx() skips the per-packet reset. Call
  // before queue() views are made.
  void skip_meta_reset() { foreign_ = false; }

  uint16_t rx(rte_mbuf** pkts, uint16_t n) {
    if (gate_) gate_->hold();
    const uint16_t got = rte_eth_rx_burst(id_, queue_, pkts, n);
    if (foreign_) reset_meta(pkts, got);
    return got;
  }
  // Sends all `n` packets now or later, in order; never drops one it can carry (frames above
  // max_frame() are freed and counted in too_long).
  void tx(rte_mbuf* const* pkts, uint16_t n) { tx(pkts, n, measure(pkts, n)); }
  // The same with the burst's lengths known (`len` must be measure(pkts, n)): no pass over it.
  void tx(rte_mbuf* const* pkts, uint16_t n, const BurstLen& len);
  // The bytes and the longest frame of pkts[0, n), in one pass.
  static BurstLen measure(rte_mbuf* const* pkts, uint16_t n) {
    uint64_t bytes = 0;
    uint32_t longest = 0;
    uint16_t i = 0;
    for (; i + 4 <= n; i += 4) {  // four at a time: the loop's own steps once per four
      const uint32_t a = pkts[i]->pkt_len, b = pkts[i + 1]->pkt_len;
      const uint32_t c = pkts[i + 2]->pkt_len, d = pkts[i + 3]->pkt_len;
      bytes += uint64_t(a) + b + c + d;
      longest = std::max(longest, std::max(std::max(a, b), std::max(c, d)));
    }
    for (; i < n; ++i) {
      bytes += pkts[i]->pkt_len;
      longest = std::max(longest, pkts[i]->pkt_len);
    }
    return {bytes, longest};
  }
  // The longest frame this port carries (UINT32_MAX: no limit).
  uint32_t max_frame() const { return max_frame_; }
  void set_max_frame(uint32_t n) { max_frame_ = n; }
  // The limit of a port opened from `spec` (device `id`): see "Frame limits" above.
  static uint32_t limit_for(const std::string& spec, uint16_t id);
  // Retries the backlog; true when it is empty.
  bool flush() { return backlog_.empty() || flush_backlog(); }
  bool backlogged() const { return !backlog_.empty(); }
  // Takes back what waits in the transmit backlog (end of a run cut short), no longer counted
  // as sent; the caller frees or forwards it.
  std::vector<rte_mbuf*> take_backlog();
  // Packets waiting to be received, for in-process ring ports (0 for other ports).
  unsigned rx_pending() const { return rx_ring_ ? rte_ring_count(rx_ring_) : 0; }
  void stop();

  // False while a gated port (memif) has never had its peer: what it is sent waits for one, so
  // silence is no sign that the peer stopped answering (park/server_choice.h).
  bool peer_seen() const { return !gate_ || was_up_; }
  uint16_t id() const { return id_; }
  const std::string& name() const { return name_; }
  uint64_t tx_packets = 0, tx_bytes = 0, rx_packets = 0, rx_bytes = 0;
  uint64_t too_long = 0;  // frames above max_frame() dropped at tx()
  // Frames a gated port took after its peer went away (freed, still counted in tx_packets: the
  // peer never got them; they never reach the peer that connects next).
  uint64_t peer_gone = 0;
  // Counts a burst received; returns its lengths, for the stages after (BurstLen).
  BurstLen count_rx(rte_mbuf* const* pkts, uint16_t n) {
    const BurstLen l = measure(pkts, n);
    rx_packets += n;
    rx_bytes += l.bytes;
    return l;
  }

 private:
  static bool setup(uint16_t id, rte_mempool* pool, std::string& err,
                    const BufferSplit* split = nullptr, bool* hw_split = nullptr,
                    uint16_t queues = 1);
  static void reset_meta(rte_mbuf** pkts, uint16_t n);
  void drop_too_long(rte_mbuf* const* pkts, uint16_t n);
  bool flush_backlog();  // flush() of a port with a backlog
  bool gone();           // a gated port whose link was up and is down: its peer went away
  uint16_t id_ = 0;
  uint16_t queue_ = 0;               // the queue this object reads and writes
  uint16_t queues_ = 1;              // queues the port has (the owner's)
  bool view_ = false;                // a queue() view: the port is another object's
  std::vector<rte_ring*> rx_rings_;  // in-process ring ports: each queue's RX ring
  uint32_t max_frame_ = UINT32_MAX;
  bool foreign_ = false;        // not an in-process ring: metadata does not travel
  std::vector<rte_mbuf*> fit_;  // tx(): the frames that fit, when some do not
  std::string name_;
  std::vector<rte_mbuf*> backlog_;
  rte_ring* rx_ring_ = nullptr;
  bool started_ = false;
  bool hw_split_ = false;
  ControlGate* gate_ = nullptr;  // the driver's control runs on the interrupt thread (memif)
  bool was_up_ = false;          // gated ports: the link has been up (a peer connected)
};

}  // namespace nfpark::dp
