// Shard: which of N workers (lcores) a frame belongs to — the software stand-in for a NIC's RSS
// with a symmetric key, plus the steering rules an NF asks for (the NIC's flow-director rules).
//
//   worker = rule(frame) if a steering rule matches, else mix(symmetric_hash(flow)) mod N
//
// (mixed once more so that the worker is independent of the NF server a flow goes to: the
// server choice takes h mod M of the same hashes, and with N = M worker w would otherwise talk
// to server w only.)
//
// The flow is the 5-tuple of TCP/UDP (ICMP echo: its identifier as both ports) and the address
// pair + protocol of everything else IP, fragments included (only a first fragment carries
// ports: all fragments of a datagram go where its addresses send them, as a NIC's RSS does);
// non-IP frames (ARP, LLDP) go to worker 0. Symmetric: a packet and its reply land on one worker,
// so state that sees both directions (a firewall's connection table, a load balancer's flow
// table) lives in one worker's NF chain.
// Steering: a NAT rewrites the inside end of a flow, so its replies (to the external address)
// would hash elsewhere. Each worker's NAT allocates external ports only from its own partition
// (port - port_min ≡ worker mod N); the NAT declares a rule "IPv4 destination in {external}:
// worker = (dst port - port_min) mod N" (ICMP echo: the identifier), and replies find the worker
// that holds their mapping (what VPP's NAT44-ED does with per-thread port ranges and a handoff).
// Parameters: workers N (1..kMaxWorkers); steering rules (from the NF chain). Counters: none.
// Cost: one parse of the headers and one 40-byte hash per frame.
#pragma once
#include <cstdint>
#include <vector>

namespace nfpark {

constexpr uint32_t kMaxWorkers = 64;

// "Frames to these IPv4 destinations go to worker (L4 destination port - port_min) mod N."
struct SteerRule {
  std::vector<uint32_t> dst4;  // IPv4 addresses, host order
  uint16_t port_min = 0;
};

class Shard {
 public:
  explicit Shard(uint32_t workers = 1, std::vector<SteerRule> rules = {})
      : n_(workers ? workers : 1), rules_(std::move(rules)) {}
  uint32_t workers() const { return n_; }
  // The worker of the frame data[0, len) (any length; never reads past it).
  uint32_t of(const uint8_t* data, uint32_t len) const;

 private:
  uint32_t n_;
  std::vector<SteerRule> rules_;
};

}  // namespace nfpark
