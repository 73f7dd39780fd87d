// HostBoundary — what crosses the NIC <-> host-memory boundary (what PCIe would carry), per mode.
//
// Engine-neutral accounting: the engine calls one rx_* per packet delivered to the NF server's
// host memory, one tx_* per packet the host hands back to the NIC, and nf() per packet the NF
// chain processes. Nothing here moves packets. Modes (nicmem §4.2/§6, NFSlicer §III):
//   host      whole frame in one host buffer, both ways.
//   split     header segment + payload segment, both in host memory: every byte crosses; two
//             descriptors per packet (nicmem's "split" baseline).
//   nicmem    header segment in host memory, payload segment in NIC memory: only the header
//             crosses; the payload stays on the NIC and TX gathers it there. When the NIC-memory
//             pool is empty the payload goes to host memory for that packet (the paper's
//             primary/secondary rings), counted in nicmem_fallbacks, and then it crosses.
//   nfslicer  header packet + 8-byte token cross; the sliced payload stays in the NIC's table.
//             Unsliced packets cross whole (escaped ones 8 bytes longer).
//
// Byte model (see docs/nfslicer_nicmem.md §4): data bytes = frame bytes DMA'd across, per
// direction — the quantity behind NFSlicer's "up to 24x" (1518 B -> 64 B) and nicmem's "payloads
// do not cross PCIe". Descriptors are counted separately (one per buffer/scatter-gather element)
// and priced at desc_bytes each (default 16 B: an Intel RX/TX descriptor, an mlx5 data segment);
// completions, TLP headers and doorbells are not modelled. kept_bytes = frame bytes that never
// crossed (payload never copied to host memory). touched = header bytes the NF chain reads: the
// L2-L4 headers (the parse's payload_off; the first 64 bytes of a frame that does not parse) when
// some NF of the chain reads the parse, the Ethernet header when the chain reads only that
// (macswap), 0 when it reads only lengths (forward) — set_reads(), the chain's nf::Chain::reads();
// default: the headers (park/nic_split.h: nf_read_len).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/counters.h"
#include "core/packet_view.h"

namespace nfpark::park {

enum class HostMode : uint8_t { kHost, kSplit, kNicmem, kNfslicer };
std::optional<HostMode> parse_host_mode(std::string_view s);
std::string_view to_string(HostMode m);

struct BoundaryDir {
  uint64_t packets = 0;
  uint64_t wire_bytes = 0;   // frame bytes these packets have on the wire
  uint64_t data_bytes = 0;   // packet bytes that crossed the boundary
  uint64_t descriptors = 0;  // buffers (scatter-gather elements) the NIC used
  uint64_t kept_bytes = 0;   // frame bytes that stayed in NIC memory
};

class HostBoundary {
 public:
  explicit HostBoundary(HostMode m, uint32_t desc_bytes = 16) : mode_(m), desc_bytes_(desc_bytes) {}
  HostMode mode() const { return mode_; }

  // Generic form: `wire` frame bytes, of which `crossed` were DMA'd, using `descriptors` buffers.
  void add_rx(uint32_t wire, uint32_t crossed, uint32_t descriptors) {
    add(rx_, wire, crossed, descriptors);
  }
  void add_tx(uint32_t wire, uint32_t crossed, uint32_t descriptors) {
    add(tx_, wire, crossed, descriptors);
  }

  // Per mode. hdr/data: segment lengths (data may be 0 for a frame no longer than the split
  // offset). RX always uses two buffers when splitting: the ring posts both per packet.
  void rx_host(uint32_t frame) { add_rx(frame, frame, 1); }
  void tx_host(uint32_t frame) { add_tx(frame, frame, 1); }
  // The same for `packets` whole frames of `bytes` in all, at once (a burst's sums).
  void rx_host_burst(uint32_t packets, uint64_t bytes) { add_n(rx_, packets, bytes); }
  void tx_host_burst(uint32_t packets, uint64_t bytes) { add_n(tx_, packets, bytes); }
  void rx_split(uint32_t hdr, uint32_t data) { add_rx(hdr + data, hdr + data, 2); }
  void tx_split(uint32_t hdr, uint32_t data) { add_tx(hdr + data, hdr + data, data ? 2 : 1); }
  void rx_nicmem(uint32_t hdr, uint32_t data, bool data_in_nicmem);
  void tx_nicmem(uint32_t hdr, uint32_t data, bool data_in_nicmem);
  // host_len: what the host receives/sends (header packet with token, or the whole frame).
  // wire: the frame on the wire (tx: the spliced frame; 0 when the splice dropped it).
  void rx_nfslicer(uint32_t wire, uint32_t host_len) { add_rx(wire, host_len, 1); }
  void tx_nfslicer(uint32_t wire, uint32_t host_len) { add_tx(wire, host_len, 1); }

  // What the NF chain reads of a packet (its nf::Chain::reads()): how touched bytes are counted.
  void set_reads(ViewNeed r) { reads_ = r; }
  ViewNeed reads() const { return reads_; }

  // The NF chain processed one packet and read `touched` header bytes (nf_read_len).
  void nf(uint32_t touched) {
    ++nf_packets_;
    nf_touched_ += touched;
  }
  // `packets` processed, `touched` header bytes in all.
  void nf_burst(uint32_t packets, uint64_t touched) {
    nf_packets_ += packets;
    nf_touched_ += touched;
  }

  const BoundaryDir& rx() const { return rx_; }
  const BoundaryDir& tx() const { return tx_; }
  uint64_t nicmem_fallbacks() const { return nicmem_fallbacks_; }
  uint64_t nf_packets() const { return nf_packets_; }
  uint64_t nf_touched() const { return nf_touched_; }
  uint32_t desc_bytes() const { return desc_bytes_; }
  // data + descriptor bytes of one direction.
  uint64_t total_bytes(const BoundaryDir& d) const {
    return d.data_bytes + d.descriptors * desc_bytes_;
  }

  // Names: rx_packets rx_wire_bytes rx_data_bytes rx_descriptors rx_desc_bytes rx_kept_bytes,
  // the same with tx_, nf_packets nf_touched_bytes nicmem_fallbacks.
  void report(const CounterSink& s) const;
  void merge_from(const HostBoundary& o);  // sums per-core instances

 private:
  static void add(BoundaryDir& d, uint32_t wire, uint32_t crossed, uint32_t descriptors) {
    ++d.packets;
    d.wire_bytes += wire;
    d.data_bytes += crossed;
    d.descriptors += descriptors;
    d.kept_bytes += wire > crossed ? wire - crossed : 0;
  }
  // `packets` whole frames, one buffer each, every byte crossed.
  static void add_n(BoundaryDir& d, uint32_t packets, uint64_t bytes) {
    d.packets += packets;
    d.wire_bytes += bytes;
    d.data_bytes += bytes;
    d.descriptors += packets;
  }
  HostMode mode_;
  uint32_t desc_bytes_;
  ViewNeed reads_ = ViewNeed::kHeaders;
  BoundaryDir rx_, tx_;
  uint64_t nicmem_fallbacks_ = 0, nf_packets_ = 0, nf_touched_ = 0;
};

}  // namespace nfpark::park
