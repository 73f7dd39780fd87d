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

struct PacketView {
  uint8_t* data = nullptr;  // frame start (Ethernet header)
  uint32_t len = 0;         // bytes present at `data`
  uint32_t wire_len = 0;    // original frame length
  PacketLayout layout;      // parse of the headers
  uint32_t user = 0;        // engine-defined (index into the engine's own batch)
};

}  // namespace nfpark
