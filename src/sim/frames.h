// FrameSource: the frames one traffic port sends, written straight into packet records.
//
//   SyntheticFrames  flows from the trace generator's population (trace/generator.h builds one
//                    frame per flow once: its headers are the flow's template), sizes from
//                    trace/size_dist.h, flow order from FlowPicker (SLF bursts, uniform or
//                    Zipf). Per packet: the template's headers with the IP/UDP lengths of the
//                    drawn size and a fresh IPv4 header checksum, and their parse (the
//                    template's, with the IP end moved to the frame's end: the record carries
//                    it, so the first stage need not parse) and the flow key's hash (the
//                    template's: lengths are not in the key); in full-bytes runs also the
//                    payload (a pattern and the packet id, as the generator writes it) and a
//                    valid L4 checksum. Flows of port p are the generator's flows
//                    [p * flows, (p + 1) * flows): no two ports share a 5-tuple.
//   PcapFrames       a capture in memory, in order, looped; its records' wire lengths are the
//                    frame lengths (a header-only capture such as CAIDA's still offers its real
//                    load); optionally the same capture on several ports (QUEUE-MEM's multicast
//                    testbed), flows told apart by port.
// A record holds the frame's first PacketPool::bytes() bytes (all of it in full-bytes runs).
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/carried_layout.h"
#include "sim/flow_picker.h"
#include "sim/packet.h"
#include "trace/generator.h"
#include "trace/trace.h"

namespace nfpark::sim {

class FrameSource {
 public:
  virtual ~FrameSource() = default;
  // Fills p (bytes, head, len, flow). `trace_gap`: time from the previous frame in the source's
  // own timing (pcap), or -1 when it has none. False when the source has no more frames.
  virtual bool next(Packet* p, Picos& trace_gap) = 0;
};

// The per-flow header templates of a synthetic run (shared by its ports). One 192 B record a
// flow, its fields first and its header bytes after them: a frame reads one flow's record (two
// cache lines for headers up to 96 B), not one entry of each of seven arrays; or, for the usual
// headers, one 64 B record a flow (Small): 14,000 flows in 0.9 MB instead of 2.7.
struct FlowTemplates {
  static constexpr uint32_t kMax = 128;  // header bytes a template holds
  static constexpr uint32_t kSmallBytes = 50;
  struct alignas(64) Flow {
    // the flow's parse (its ip_end is the frame's length: the generator writes no padding), left
    // in the record for the switch's first stage (sim/packet.h)
    CarriedLayout layout;
    // the flow's FlowKey::hash() (0: none), left beside the parse (QUEUE-MEM's split takes it)
    uint64_t key_hash = 0;
    uint16_t hdr = 0;  // header bytes (L2..L4)
    uint16_t l3 = 0, l4 = 0;
    uint8_t ip_version = 0, l4_proto = 0;
    uint8_t bytes[kMax + 24] = {};  // the headers (kMax), then padding to the 192 B record
  };
  static_assert(sizeof(Flow) == 192 && offsetof(Flow, bytes) == 32);
  // The same in one cache line, when every flow's fits (its parse carried, headers <= 62 B, the
  // first 12 bytes — the MAC addresses — the same for all flows: the generator's case for IPv4
  // and IPv6 UDP and IPv4 TCP): the parse in 6 bytes, the headers after the MACs.
  struct alignas(64) Small {
    uint64_t key_hash = 0;
    uint8_t vlans = 0, ip_version = 0, l4_proto = 0, l3 = 0, l4 = 0, hdr = 0;
    uint8_t bytes[kSmallBytes] = {};  // the headers' bytes [12, hdr), zeros after
  };
  static constexpr uint32_t kMacs = 12;
  static_assert(sizeof(Small) == 64 && offsetof(Small, bytes) == 64 - kSmallBytes);
  std::vector<Flow> flows;   // one a flow, unless `small` holds them
  std::vector<Small> small;  // one a flow when every flow fits (then `flows` is empty)
  uint8_t macs[kMacs] = {};  // the flows' first bytes, with `small`
  // One template per flow of `ports` * cfg.flows flows, from the generator (cfg's proto, ipv6,
  // vlan, seed). Empty with `err` set when the generator rejects the config. `compact`: one
  // line a flow (Small) when every flow fits (false: always the 192 B form; for tests).
  static std::shared_ptr<const FlowTemplates> build(const trace::GenConfig& cfg, uint16_t ports,
                                                    std::string& err, bool compact = true);
};

class SyntheticFrames final : public FrameSource {
 public:
  SyntheticFrames(std::shared_ptr<const FlowTemplates> t, const trace::GenConfig& cfg,
                  uint16_t port, bool full_bytes);
  bool next(Packet* p, Picos& trace_gap) override;

 private:
  std::shared_ptr<const FlowTemplates> t_;
  trace::SizeSpec size_;
  FlowPicker picker_;
  trace::Rng rng_;
  uint32_t first_flow_, next_flow_ = 0;
  uint16_t port_;
  bool full_;
  uint64_t count_ = 0;
};

// A capture's frames and flow ids, loaded once and shared by the ports that replay it.
struct LoadedTrace {
  trace::Trace trace;
  std::vector<uint64_t> flow;  // flow hash per packet
  static std::shared_ptr<const LoadedTrace> load(const std::string& path, std::string& err);
};

// The gap between two records of a capture as the source paces them: -1 when `ts` is before
// `prev`, kNever when it is longer than simulated time can hold (106 days).
Picos capture_gap(Nanos prev, Nanos ts);

class PcapFrames final : public FrameSource {
 public:
  // loops: times through the capture (0 = endless, until the run's duration).
  PcapFrames(std::shared_ptr<const LoadedTrace> t, uint16_t port, uint64_t loops);
  bool next(Packet* p, Picos& trace_gap) override;

 private:
  std::shared_ptr<const LoadedTrace> t_;
  uint16_t port_;
  uint64_t loops_, loop_ = 0;
  size_t i_ = 0;
};

}  // namespace nfpark::sim
