// Ipv4Reassembler: puts fragmented IPv4 datagrams addressed to the server back together, so a
// request larger than the link's MTU (a SET of a few KB from a kernel socket over a 1500-byte
// TAP link) arrives whole.
// Config:   contexts (datagrams reassembled at once, default 8; each holds a 64 KiB buffer,
//           allocated at construction) · timeout (default 2 s; RFC 791 suggests 15 s, a cache
//           does better to forget sooner).
// Counters: reassembled, fragments, dropped_timeout, dropped_full (oldest context evicted),
//           dropped_overlap (overlapping or duplicate fragments: the datagram is dropped, as
//           RFC 5722 requires for IPv6), dropped_bad (a non-final fragment whose length is not a
//           multiple of 8, or a datagram over 65535 bytes).
// Time:     `now` passed in (Nanos).
#pragma once
#include <cstdint>
#include <vector>

#include "core/time.h"

namespace nfpark::kvs {

struct ReassemblyCounters {
  uint64_t reassembled = 0, fragments = 0, dropped_timeout = 0, dropped_full = 0,
           dropped_overlap = 0, dropped_bad = 0;
};

class Ipv4Reassembler {
 public:
  Ipv4Reassembler(uint32_t contexts, Nanos timeout);
  struct Packet {
    uint8_t* data = nullptr;  // an IPv4 packet (header first); valid until the next add()
    uint32_t len = 0;
  };
  // One fragment: the IPv4 packet at `ip`, `len` bytes (its total length, checked by the caller).
  Packet add(const uint8_t* ip, uint32_t len, Nanos now);
  uint32_t pending() const;
  const ReassemblyCounters& counters() const { return c_; }

 private:
  static constexpr uint32_t kMaxPayload = 65535 - 20;
  struct Ctx {
    bool used = false, have_first = false, have_last = false;
    uint32_t src = 0, dst = 0;
    uint16_t id = 0;
    uint8_t proto = 0, hlen = 0;
    uint32_t total = 0, got = 0;  // payload bytes: expected (once the last is in), received
    Nanos last = 0;
    std::vector<uint64_t> units;  // one bit per 8 payload bytes
    std::vector<uint8_t> buf;     // header (up to 60 bytes) then payload
  };
  void drop(Ctx& c) { c.used = false; }

  Nanos timeout_;
  std::vector<Ctx> ctx_;
  ReassemblyCounters c_;
};

}  // namespace nfpark::kvs
