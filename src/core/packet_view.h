// PacketView: what an NF sees of a packet — mutable bytes starting at L2, the parse of those
// bytes, and the packet's original length on the wire.
//
// For a whole packet, `len == wire_len`. For a header-only packet (payload parked elsewhere),
// `len` covers the headers (plus any unparked bytes) while `wire_len` is the length of the
// original frame, so rate limiters, meters and counters account real bytes. The bytes after
// `layout.payload_off` are not payload the NF may read: shallow NFs touch headers only.
#pragma once
#include <cstdint>

#include "core/parse.h"

namespace nfpark {

// What of a PacketView an NF reads (nf::Nf::reads()); a chain needs the most any of its NFs
// reads. Below kHeaders the engine gives the view without parsing the packet (park/nf_burst.h)
// and counts only those bytes as read (HostBoundary's nf_touched_bytes).
enum class ViewNeed : uint8_t {
  kLengths = 0,   // len and wire_len only, no byte of the packet (forward, busy)
  kEthernet = 1,  // also data[0, 14): the Ethernet header; `layout` is not set (macswap)
  kHeaders = 2,   // also `layout`, the parse of the L2-L4 headers (every other NF)
};
// Bytes at the frame's start an NF chain with `need` reads, without parsing: 0 (kLengths), the
// Ethernet header (kEthernet, at most `len`). kHeaders: the parse's payload_off (not here).
constexpr uint32_t unparsed_read_len(ViewNeed need, uint32_t len) {
  return need == ViewNeed::kLengths ? 0 : (len < 14 ? len : 14);
}

struct PacketView {
  uint8_t* data = nullptr;  // frame start (Ethernet header)
  uint32_t len = 0;         // bytes present at `data`
  uint32_t wire_len = 0;    // original frame length
  PacketLayout layout;      // parse of the headers
  uint32_t user = 0;        // engine-defined (index into the engine's own batch)
};

}  // namespace nfpark
