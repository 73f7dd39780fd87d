// FrameAssembler: requests that span several UDP datagrams (memcached's frame header has a
// sequence number and a datagram count; stock memcached drops such requests, nfpark
// assembles them so that a value up to 1 MiB can be SET over UDP — an extension).
// Config:   contexts (requests assembled at once, default 4) · max_bytes (per request,
//           default 1 MiB + 4 KiB) · max_datagrams (per request, default 1024) · timeout
//           (default 2 s: an incomplete request is dropped after that).
// State:    per context: client, request id, count, received bitmap, each datagram's place in
//           the context's buffer; all buffers allocated at construction.
// Counters: assembled, dropped_timeout, dropped_full (oldest context evicted for a new one),
//           dropped_too_large, dropped_inconsistent (count changed or sequence out of range),
//           duplicates (ignored).
// Time:     `now` passed in (Nanos).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "core/time.h"

namespace nfpark::kvs {

struct AssemblerCounters {
  uint64_t assembled = 0, dropped_timeout = 0, dropped_full = 0, dropped_too_large = 0,
           dropped_inconsistent = 0, duplicates = 0;
};

class FrameAssembler {
 public:
  FrameAssembler(uint32_t contexts, uint32_t max_bytes, uint32_t max_datagrams, Nanos timeout);
  struct Request {
    char* data = nullptr;  // valid until the next add()
    uint32_t len = 0;
  };
  // One datagram (payload after the frame header) of a request of `total` >= 2 datagrams.
  // Returns the whole request once every datagram is in, else an empty Request.
  Request add(uint64_t client, uint16_t id, uint16_t seq, uint16_t total, const uint8_t* data,
              uint32_t len, Nanos now);
  uint32_t pending() const;
  const AssemblerCounters& counters() const { return c_; }

 private:
  struct Ctx {
    bool used = false;
    uint64_t client = 0;
    uint16_t id = 0, total = 0, got = 0;
    uint32_t bytes = 0;
    Nanos last = 0;
    std::vector<uint8_t> have;       // per sequence number
    std::vector<uint32_t> off, len;  // per sequence number, in `buf`
    std::unique_ptr<char[]> buf;     // not zeroed: touched only when used
  };
  void expire(Nanos now);

  uint32_t max_bytes_, max_datagrams_;
  Nanos timeout_;
  std::vector<Ctx> ctx_;
  std::unique_ptr<char[]> out_;
  AssemblerCounters c_;
};

}  // namespace nfpark::kvs
