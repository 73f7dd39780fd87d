// Steer: live traffic over `--workers N` — each worker reads its own receive queue of a traffic
// port and keeps the frames core/shard.h gives it; a frame of another worker's flow is passed
// over to that worker on an rte_ring (one per traffic port and ordered worker pair: single
// producer, single consumer, bursts, no lock and no atomic beyond the ring's own).
//
//   port t, queue q ──rx──> worker q: shard(frame) == q ──> its SwitchMode
//                                     shard(frame) == r ──> ring(t, q -> r) ──> worker r
//
// Why re-steer at all: a port's own spread is not the shard. af_packet with qpairs=N joins its N
// sockets in one PACKET_FANOUT group (DPDK 22.11 rte_eth_af_packet.c: PACKET_FANOUT_HASH |
// FLAG_DEFRAG | FLAG_ROLLOVER); the kernel's fanout hash is symmetric (__skb_get_hash_symmetric)
// but it is not core/shard.h's, a NAT's replies must reach the worker that owns their external
// port (a steering rule no kernel hash knows), and ROLLOVER moves frames to another socket when
// one's ring is full. A NIC's RSS with a symmetric key is likewise a different function. So the
// port's spread decides only which worker parses a frame first; the shard decides which owns it.
// Why not one receive dispatcher: it would put every frame of the run through one lcore (and a
// second ring hop); here each worker parses what its queue brought and a frame crosses at most
// one ring.
// Order: frames of one flow that arrive on one queue keep their order (one FIFO ring per pair);
// the kernel keeps a flow on one socket unless ROLLOVER moves it (a full ring: then order across
// sockets is the kernel's, as with any fanout reader).
// Back-pressure: what a full ring does not take waits in this worker's staging area and the
// worker reads its queue again only once that is empty (nothing is dropped; the ring's reader
// never waits on its own outgoing rings, so two workers cannot wait on each other).
// Parameters: workers N, ring size (kSteerRing frames). Counters: frames passed over (per
// worker, into the report's ports.worker<q>.steered), frames read from the port (published for
// the main lcore's idle detection and live stats).
#pragma once
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/shard.h"
#include "dp/port.h"

namespace nfpark::dp {

constexpr unsigned kSteerRing = 1024;

// The rings of a run: ring(t, from, to) carries port t's frames from worker `from` to `to`.
class SteerRings {
 public:
  SteerRings() = default;
  SteerRings(const SteerRings&) = delete;
  SteerRings& operator=(const SteerRings&) = delete;
  ~SteerRings();
  bool create(uint16_t workers, int ports, std::string& err);
  rte_ring* ring(int t, uint16_t from, uint16_t to) const {
    return rings_[(size_t(t) * n_ + from) * n_ + to];
  }
  uint16_t workers() const { return n_; }
  int ports() const { return ports_; }

 private:
  uint16_t n_ = 0;
  int ports_ = 0;
  std::vector<rte_ring*> rings_;
};

// One worker's end of the rings.
class Steer {
 public:
  Steer(const Shard& shard, SteerRings& rings, uint16_t self);
  Steer(const Steer&) = delete;
  Steer& operator=(const Steer&) = delete;
  // Up to `n` frames of traffic port `t` this worker owns: first what the others passed over,
  // then, when nothing waits to be passed over, its own share of what `port` (its queue of port
  // t) brings. The caller counts them (Port::count_rx).
  uint16_t rx(int t, Port& port, rte_mbuf** b, uint16_t n);
  // Frames waiting to be passed over (back-pressure).
  bool staged() const;
  // After the run (every worker stopped): hands what still waits here and on the rings into this
  // worker to `fn(t, frames, n)` (the caller counts and frees them).
  void take_rest(const std::function<void(int, rte_mbuf* const*, uint16_t)>& fn);

  uint64_t steered = 0;  // frames passed over to another worker
  // Frames read from the port so far (relaxed stores once per burst; read by the main lcore).
  alignas(64) std::atomic<uint64_t> read{0};

 private:
  bool pass_over(int t);  // true when nothing of port t waits to be passed over
  Shard shard_;
  SteerRings& rings_;
  uint16_t self_, n_;
  uint64_t read_ = 0;
  uint16_t next_from_ = 0;
  // Staged per (port, destination): frames a full ring did not take yet.
  std::vector<std::array<rte_mbuf*, kBurst>> stage_;
  std::vector<uint16_t> staged_;
};

}  // namespace nfpark::dp
