// Generator: synthetic traces, deterministic by seed (same config + seed => same bytes).
//
// Theory of operation.
//   Population. Flow f in [0, flows) has a fixed 5-tuple: IPv4 source 10.0.0.0 + f + 1 (IPv6:
//   fd00::f+1), so 5-tuples never collide; destination one of 254 servers; source port, address
//   family (IPv6 with probability `ipv6`), transport (udp, tcp, or 50/50 per flow for mix) and
//   VLAN id are drawn from a hash of (seed, f).
//   Bursts. The trace is a sequence of bursts of `slf` back-to-back packets of one flow; the
//   next burst never picks the same flow, so SLF == slf exactly (bar the last burst and, with
//   --active, flows whose remaining packets are fewer than slf).
//   Popularity. Without --active every burst picks a flow from the whole population: uniform
//   = round-robin over a fresh random permutation each round (every flow gets the same share,
//   as Click's RoundRobinMultiSched does in Reframer's generator); zipf S = rank r drawn with
//   probability ∝ 1/(r+1)^S, rank r being flow r.
//   Temporal locality (--active A). A flows are live; each burst picks one live flow at random
//   (never the previous burst's). When a live flow has sent its packets its slot takes the next
//   flow. Uniform: the flows go live once each, in a random permutation, flow j sending its exact
//   share (packets/flows, +1 for the first packets%flows), so at most A 5-tuples are ever live
//   at once and the slots close one by one at the end. Zipf: the next flow is drawn by popularity
//   and sends ceil(packets/flows) packets; a popular 5-tuple goes live again later (a new
//   "flowlet"). Either way a flow's packets fall within about A * packets/flows packets of trace,
//   however large the population.
//   Packets. Built by PacketBuilder with packet_id(i), i = 0..packets-1 in trace order, valid
//   checksums; TCP sequence numbers advance by the payload length per flow. A frame too small for
//   its headers plus the 12-byte id is raised to that minimum (e.g. 66 B for IPv4/TCP).
//   Heavy tails (--flow-sizes pareto:A | lognormal:S, with --active). A flow that goes live draws
//   its packet count from the distribution (mean ceil(packets/flows)) instead of its exact share.
//   Pacing (--pace, with --active). Each live flow spreads its packets over a lifetime of
//   L = active * mean size * U(0.5, 1.5) packet slots: it sends a train (1 + geometric, mean
//   --train packets) every L / size * train slots, the first at a random phase within one gap.
//   The next train is the live flow whose send time is earliest (a heap), so a flow's packets
//   are spread across the trace at its own rate: elephants (large size, same lifetime) send
//   often, mice rarely; consecutive trains of one flow (SLF > train) happen only for flows whose
//   gap is below one slot. SLF ~ train for many live flows; at most `active` flows are live.
//   Copies (--copies N, --copy-shift T): N copies of the trace, copy k with flow ids f + k *
//   flows (its own 5-tuples) and timestamps shifted by k * T, merged by time (ties: lower copy
//   first) — the paper's way of raising load and flow count (Reframer, NSDI'22 §5.1). The merge
//   takes a train (burst) of one copy whole, so the copies' SLF survives; timestamps are kept
//   non-decreasing (a packet behind another copy's train takes that train's last time). Packet
//   ids are the merged order. Copy k makes the same draws as copy 0.
//   Time. Packet i+1 starts (size_i + 24) * 8 / rate_gbps ns after packet i (24 B = preamble,
//   FCS and inter-frame gap), i.e. back-to-back at line rate from `start`.
// Cost: ~1 µs per packet (PacketBuilder allocates one vector per packet; not a data path).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/packet_builder.h"
#include "core/time.h"
#include "trace/flow_size.h"
#include "trace/pcap_writer.h"
#include "trace/rng.h"
#include "trace/size_dist.h"
#include "trace/trace.h"

namespace nfpark::trace {

enum class GenProto : uint8_t { kUdp, kTcp, kMix };

struct GenConfig {
  uint64_t packets = 1000;  // total packets (ids 0..packets-1)
  uint64_t flows = 100;     // flow population, 1..16,000,000
  SizeSpec size;            // frame bytes without FCS: fixed 64..9000 or dc/imix/caida
  uint32_t slf = 1;         // back-to-back packets per burst, >= 1
  GenProto proto = GenProto::kUdp;
  uint64_t seed = 1;
  uint64_t active = 0;      // live flows at any moment; 0 = the whole population
  double zipf = 0;          // popularity exponent; 0 = uniform
  double rate_gbps = 10;    // line rate the timestamps follow
  double ipv6 = 0;          // share of flows that are IPv6, 0..1
  bool vlan = false;        // one 802.1Q tag per packet
  Nanos start = 0;          // timestamp of the first packet
  FlowSizeSpec flow_sizes;  // packets per flow (with active > 0): even share or heavy-tailed
  bool pace = false;        // (with active > 0) flows send trains at their own pace
  double train = 1;         // paced: mean packets per train, >= 1
  uint32_t copies = 1;      // time-shifted copies with rewritten flow ids, 1..64
  Nanos copy_shift = 0;     // shift between consecutive copies

  std::string validate() const;  // empty when valid, else one line naming the bad option
};

const char* to_string(GenProto p);

// One copy of the trace (copies are ignored here: see CopyMerger / make_source).
class Generator {
 public:
  // Copy `copy`: flow ids shifted by copy * flows, timestamps by copy * copy_shift.
  explicit Generator(const GenConfig& c, uint32_t copy = 0);
  // Builds the next packet; false after `packets` packets. `frame` is valid until the next call.
  // `flow` is the generator's flow id (copy offset included).
  bool next(Nanos& ts, const std::vector<uint8_t>*& frame, uint32_t& flow) {
    return next(ts, frame, flow, i_);
  }
  // The same with the packet id to write (a merge of copies numbers the merged order).
  bool next(Nanos& ts, const std::vector<uint8_t>*& frame, uint32_t& flow, uint64_t id);
  // Timestamp of the next packet (valid while !done()).
  Nanos peek() const;
  bool done() const { return i_ == c_.packets; }
  // The next packet continues the current train (burst) of the same flow.
  bool in_train() const { return burst_left_ > 0; }
  uint64_t produced() const { return i_; }

 private:
  uint32_t draw_flow();        // from the population, by popularity
  uint32_t pick_burst_flow();  // next burst's flow (and its burst length in burst_left_)
  uint32_t pick_paced_flow();  // --pace: the live flow due first
  struct Slot;
  bool next_flowlet(Slot& s);  // --active: the next flow to go live; false when none is left
  void pace_start(Slot& s, double now);
  void build(uint32_t f, uint64_t id);

  GenConfig c_;
  Rng rng_;
  uint64_t i_ = 0;
  double t_ns_ = 0;
  std::vector<uint32_t> perm_;  // uniform popularity: current round's order
  size_t perm_pos_ = 0;
  std::vector<double> zipf_cdf_;
  std::vector<uint32_t> tcp_seq_;  // per flow
  struct Slot {
    uint32_t flow;
    uint64_t left;
    double due = 0, gap = 0;  // --pace: next send (slots), slots between packets
  };
  std::vector<Slot> slots_;                        // --active
  std::vector<std::pair<double, uint32_t>> heap_;  // --pace: (due, slot), min-heap
  double mean_size_ = 1;
  uint32_t flow_base_ = 0;  // copy * flows
  uint64_t flow_len_ = 0, started_ = 0;
  int64_t prev_slot_ = -1;
  int64_t prev_flow_ = -1;
  uint32_t cur_flow_ = 0, burst_left_ = 0;
  std::vector<uint8_t> frame_;
};

// N copies merged by time (GenConfig::copies); with one copy, the Generator itself.
class CopyMerger {
 public:
  explicit CopyMerger(const GenConfig& c);
  bool next(Nanos& ts, const std::vector<uint8_t>*& frame, uint32_t& flow);
  uint64_t produced() const { return id_; }

 private:
  std::vector<Generator> gens_;
  Generator* cur_ = nullptr;  // the copy whose train is being emitted
  uint64_t id_ = 0;
  Nanos last_ts_ = INT64_MIN;
};

// Generates straight into a pcap file (constant memory). False with `*error` set on failure.
bool generate_pcap(const GenConfig& c, const std::string& path, Precision p, std::string* error);
// Generates into memory.
void generate_trace(const GenConfig& c, Trace& out);

}  // namespace nfpark::trace
