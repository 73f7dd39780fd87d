// Element:  NicSplit — nicmem's and split's decisions (nicmem §4.2, §6): where a frame is cut
//           into a header segment (host memory, what the NF reads) and a payload segment (NIC
//           memory in nicmem, host memory in split), and what crosses the NIC <-> host boundary
//           each way. Engines supply only the mechanics: the dataplane chains an mbuf from the
//           header pool in front of the frame (src/dp/switch_mode.cc), the simulator charges its
//           PCIe model with the header segment and two descriptors.
//           NicMemory — the NIC-memory pool's capacity for an engine without a mempool: a
//           payload lands there while it has room, in host memory otherwise.
// Config:   mode (kNicmem | kSplit), header_segment (bytes, default 64: [nicmem] header_segment;
//           the cut is max(header_segment, L2-L4 headers), never past the first segment nor
//           kMaxHeaderSegment: a frame whose L2-L4 headers are longer — IPv6 extension headers
//           may reach kilobytes — goes as one segment, so the NF still reads all of them),
//           NicMemory slots ([nicmem] pool, 4096 B buffers in the dataplane).
// Counters: host_boundary.* (park/host_boundary.h: rx/tx packets, data and descriptor bytes,
//           kept bytes, nicmem_fallbacks, nf_touched: what the chain reads, set_reads()),
//           not_split_one_segment (a frame no longer
//           than its header segment, or no header buffer: it goes as one segment).
// Paper:    nicmem (header/data split on receive, payloads stay in NIC memory; primary ring in
//           NIC memory, secondary in host memory when it runs out). Differs: the dataplane cuts
//           in software when the NIC cannot (replayed traces), with the same result.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>

#include "core/counters.h"
#include "core/parse.h"
#include "park/buffer_ops.h"
#include "park/host_boundary.h"

namespace nfpark::park {

// The most a header segment holds: the data room of the dataplane's header buffers (its header
// mbufs, src/dp/pools.h) and [nicmem] header_segment's maximum.
inline constexpr uint32_t kMaxHeaderSegment = 256;

// L2-L4 header bytes of a frame whose first `len` bytes are at `d` (the payload offset; the
// first 64 bytes when it does not parse). What the NF chain reads.
inline uint32_t l4_header_len(const uint8_t* d, uint32_t len) {
  const PacketLayout L = parse_packet(d, len);
  return L.ok() ? L.payload_off : std::min<uint32_t>(len, 64);
}
// Header bytes at `d` (`len` present) an NF chain that reads `need` reads: l4_header_len when it
// reads the parse, else the bytes it reads without one (core/packet_view.h), with no parse.
inline uint32_t nf_read_len(ViewNeed need, const uint8_t* d, uint32_t len) {
  return need == ViewNeed::kHeaders ? l4_header_len(d, len) : unparsed_read_len(need, len);
}

template <BufferOps B>
class NicSplit {
 public:
  using Handle = typename B::Handle;
  NicSplit(HostMode m, uint32_t header_segment) : hb_(m), hdr_bytes_(header_segment) {}
  HostMode mode() const { return hb_.mode(); }

  // Where to cut `h` (one segment): max(header_segment, L2-L4), at most its first segment; 0
  // when nothing would be left for the payload segment, or the headers do not fit a header
  // segment (kMaxHeaderSegment).
  uint32_t cut_at(Handle h) const {
    const uint32_t head = B::head_len(h);
    uint32_t hdr = std::max(hdr_bytes_, l4_header_len(B::data(h), head));
    hdr = std::min(hdr, head);
    return hdr < B::pkt_len(h) && hdr <= kMaxHeaderSegment ? hdr : 0;
  }

  // A frame on its way to the NF server. `in_nic`: its buffer is NIC memory. `split(h, hdr)`
  // (the engine's mechanics) returns the header segment chained in front of the payload, or
  // B::null() (no header buffer): then the frame goes as one segment. Returns what goes to
  // the NF server.
  template <class Split>
  Handle to_nf(Handle h, bool in_nic, Split&& split) {
    uint32_t hdr = cut_at(h);
    Handle out = hdr ? split(h, hdr) : B::null();
    if (out == B::null()) {
      ++unsplit_;
      out = h;
      hdr = B::pkt_len(h);
    }
    rx(hdr, B::pkt_len(out) - hdr, in_nic, touched(out));
    return out;
  }
  // The header bytes the NF chain reads of `h` as it reaches the NF server (set_reads()).
  uint32_t touched(Handle h) const { return nf_read_len(hb_.reads(), B::data(h), B::head_len(h)); }
  void set_reads(ViewNeed r) { hb_.set_reads(r); }
  // A frame the NIC has already cut (hdr + data bytes; `data_in_nic`: where the payload
  // landed); `touched`: the header bytes the NF reads (touched()).
  void rx(uint32_t hdr, uint32_t data, bool data_in_nic, uint32_t touched) {
    if (hb_.mode() == HostMode::kNicmem)
      hb_.rx_nicmem(hdr, data, data_in_nic);
    else
      hb_.rx_split(hdr, data);
    hb_.nf(touched);
  }
  // A frame back from the NF server: hdr bytes in its header segment, data in its payload.
  void from_nf(uint32_t hdr, uint32_t data, bool data_in_nic) {
    if (hb_.mode() == HostMode::kNicmem)
      hb_.tx_nicmem(hdr, data, data_in_nic);
    else
      hb_.tx_split(hdr, data);
  }

  void report(const CounterSink& s) const {
    hb_.report([&](std::string_view k, uint64_t v) { s("host_boundary." + std::string(k), v); });
    s("not_split_one_segment", unsplit_);
  }
  const HostBoundary& boundary() const { return hb_; }
  uint64_t unsplit() const { return unsplit_; }

 private:
  HostBoundary hb_;
  uint32_t hdr_bytes_;
  uint64_t unsplit_ = 0;
};

// The NIC-memory pool for an engine that has no mempool to run out of (the simulator): `slots`
// payload buffers; take() says where the next payload lands (true: NIC memory), give() returns
// one when its packet leaves. The dataplane's mempool does the same by itself.
class NicMemory {
 public:
  explicit NicMemory(uint32_t slots) : slots_(slots) {}
  bool take() {
    if (used_ >= slots_) {
      ++fallbacks_;
      return false;
    }
    ++used_;
    return true;
  }
  void give() { --used_; }
  uint32_t used() const { return used_; }
  uint32_t slots() const { return slots_; }
  uint64_t fallbacks() const { return fallbacks_; }
  bool all_back() const { return used_ == 0; }  // every buffer returned ("pools full")

 private:
  uint32_t slots_, used_ = 0;
  uint64_t fallbacks_ = 0;
};

}  // namespace nfpark::park
