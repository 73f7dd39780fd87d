// Element:  NicProgram — the NF server's NIC hook, in front of its PCIe channel: what a frame
//           from the wire becomes before it crosses to host memory, what the host's packet
//           becomes before it leaves on the wire, and what each costs on PCIe. The decisions
//           are the shared layer's, the same code `nfpark run` runs:
//   HostNic     (baseline) whole frames both ways, one descriptor (park::HostBoundary::rx_host).
//   SlicerNic   (nfslicer) park::SlicerNic: the real park::Slicer slices on RX (the payload
//               waits in the NIC's ring, the header packet + token crosses), splices on TX;
//               a full ring sends the frame whole (store full => send whole).
//   NicSplitNic (nicmem, split) park::NicSplit: the cut (max(header_segment, L2-L4)), the
//               payload in NIC memory (nicmem: park::NicMemory, host memory when it is full)
//               or host memory (split); PCIe carries the header segment (+ the payload when it
//               is in host memory) and two descriptors a packet.
// Config:   NicConfig below ([nfslicer] and [nicmem] of a scenario, `nfpark run`'s keys).
// Counters: the mode's (park.*): the Slicer's or NicSplit's, host_boundary.*, nic_memory_*.
// Cost:     PCIe bytes = bytes that cross + pcie_overhead_bytes (nf_server.h) + desc_bytes (16)
//           for every descriptor past the first.
// Refs:     NFSlicer §III, nicmem §4.2; docs/sim.md §8.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "core/counters.h"
#include "park/host_boundary.h"
#include "park/slicer.h"
#include "sim/sim_buffer.h"

namespace nfpark::sim {

struct NicConfig {
  park::SlicerConfig slicer;     // [nfslicer]
  uint32_t header_segment = 64;  // [nicmem] header_segment (bytes)
  uint32_t nicmem_pool = 8192;   // [nicmem] pool: payload buffers in NIC memory
};

// What one packet costs on PCIe, one direction.
struct PcieCost {
  uint32_t bytes = 0;        // packet bytes that cross
  uint16_t descriptors = 1;  // buffers (scatter-gather elements)
};

class NicProgram {
 public:
  virtual ~NicProgram() = default;
  // A frame from the wire on its way to host memory (core: the RSS core). Returns what crosses
  // PCIe (nullptr: the NIC dropped it, counted) and sets its cost.
  virtual Packet* rx(Packet* p, uint16_t core, PcieCost& cost) = 0;
  // A packet the host transmits: sets what the NIC reads over PCIe; returns the frame that
  // leaves on the wire (nullptr: dropped, counted).
  virtual Packet* tx(Packet* p, PcieCost& cost) = 0;
  // True when the NIC keeps a buffer for `p` until it leaves or the host frees it (its payload
  // is in NIC memory: the host reads only its header, so it costs a header's service time).
  virtual bool nic_holds(Packet* p) const {
    (void)p;
    return false;
  }
  // The host freed `n` packets for which nic_holds() was true (ring full, the chain's drops,
  // a fault): their NIC buffers come back.
  virtual void host_freed(uint32_t n) { (void)n; }
  virtual void drain() {}
  virtual uint64_t drops() const { return 0; }  // packets the NIC dropped, each once
  virtual uint64_t held() const { return 0; }   // packets whose payload the NIC holds now
  virtual void drop_reasons(const CounterSink& s) const { (void)s; }
  virtual void report(const CounterSink& s) const = 0;
  virtual bool all_back() const { return true; }  // NIC memory returned ("pools full")
  virtual const park::HostBoundary& boundary() const = 0;
  // What the NF server's chain reads (nf::Chain::reads()): the touched bytes counted.
  virtual void set_reads(ViewNeed r) = 0;
};

// The NIC of `mode` ("baseline", "nfslicer", "nicmem", "split"); nullptr with `err` set
// otherwise.
std::unique_ptr<NicProgram> make_nic_program(park::HostMode mode, const NicConfig& c,
                                             std::string& err);

}  // namespace nfpark::sim
