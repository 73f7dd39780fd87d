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

// The per-flow header templates of a synthetic run (shared by its ports).
struct FlowTemplates {
  std::vector<uint8_t> bytes;  // kMax bytes per flow
  std::vector<uint16_t> hdr;   // header bytes per flow (L2..L4)
  std::vector<uint16_t> l3, l4;
  std::vector<uint8_t> ip_version, l4_proto;
  // each flow's parse (its ip_end is the frame's length: the generator writes no padding), left
  // in the record for the switch's first stage (sim/packet.h)
  std::vector<CarriedLayout> layout;
  // each flow's FlowKey::hash() (0: none), left beside the parse (QUEUE-MEM's split takes it)
  std::vector<uint64_t> key_hash;
  static constexpr uint32_t kMax = 128;
  // One template per flow of `ports` * cfg.flows flows, from the generator (cfg's proto, ipv6,
  // vlan, seed). Empty with `err` set when the generator rejects the config.
  static std::shared_ptr<const FlowTemplates> build(const trace::GenConfig& cfg, uint16_t ports,
                                                    std::string& err);
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
