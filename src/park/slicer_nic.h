// Element:  SlicerNic — NFSlicer as a NIC in front of an NF server: park::Slicer (slice on the
//           way to the host, splice on the way back) plus the host-boundary accounting of what
//           crosses PCIe, written once for every engine: the dataplane's shim
//           (dp/switch_mode.cc) and the simulator's NIC hook (sim/nic_program.*).
// Ports:    to_host(frame, core) -> host (the header packet + token, or the frame whole);
//           to_wire(host packet) -> wire (spliced, passed, or dropped and counted).
// Config:   park::SlicerConfig (slicer.h: thr 500 B, slice_bytes, entries, ttl, cores, key).
// Counters: the Slicer's (slicer_counters.h) and host_boundary.* (host_boundary.h, nfslicer:
//           the host packet's bytes cross, one descriptor each way; the sliced bytes are kept).
// Paper:    NFSlicer §III (Slice & Splice on the NIC; only the header packet crosses PCIe).
#pragma once
#include <cstdint>
#include <string>

#include "park/emitter.h"
#include "park/host_boundary.h"
#include "park/nic_split.h"
#include "park/slicer.h"

namespace nfpark::park {

template <BufferOps B>
class SlicerNic {
 public:
  using Handle = typename B::Handle;
  explicit SlicerNic(const SlicerConfig& c) : sl_(c), hb_(HostMode::kNfslicer) {}

  // A frame from the wire: what the host receives goes to `host` (nothing when the shim
  // dropped it, counted). Accounts the bytes that cross and the headers the NF reads.
  void to_host(Handle p, uint8_t core, Emitter<Handle>& host, Emitter<Handle>& wire) {
    const uint32_t wire_len = B::pkt_len(p);
    const size_t before = host.size();
    sl_.split(p, core, host, wire);
    if (host.size() > before) {
      Handle h = host[host.size() - 1];
      hb_.rx_nfslicer(wire_len, B::pkt_len(h));
      hb_.nf(nf_read_len(hb_.reads(), B::data(h), B::head_len(h)));
    }
  }
  // A packet the host sends: the frame that leaves goes to `wire` (nothing when dropped).
  void to_wire(Handle h, Emitter<Handle>& wire) {
    const uint32_t host_len = B::pkt_len(h);
    const size_t before = wire.size();
    sl_.merge(h, wire);
    if (wire.size() > before) hb_.tx_nfslicer(B::pkt_len(wire[wire.size() - 1]), host_len);
  }
  void drain() { sl_.drain(); }
  // What the NF chain reads (nf::Chain::reads()): the host boundary's touched bytes.
  void set_reads(ViewNeed r) { hb_.set_reads(r); }

  void report(const CounterSink& s) const {
    sl_.report(s);
    hb_.report([&](std::string_view k, uint64_t v) { s("host_boundary." + std::string(k), v); });
  }
  const Slicer<B>& slicer() const { return sl_; }
  const HostBoundary& boundary() const { return hb_; }

 private:
  Slicer<B> sl_;
  HostBoundary hb_;
};

}  // namespace nfpark::park
