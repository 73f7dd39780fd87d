// Server: the engine-neutral KVS — a datagram in (after UDP), replies out through a sink.
// Config:   ServerConfig below: the cache (log, index, hot set, policy, pinned keys), the
//           protocol (largest value, version string) and multi-datagram assembly.
// Counters: (kvs.) datagrams, short_datagrams (<= 8 bytes: dropped, as memcached does),
//           bad_frames (datagram count 0), multi_datagram (parts of assembled requests), then
//           the protocol's, the cache's, the hot set's, the store's and the assembler's — all
//           listed by counters(); `malformed` sums every request answered with an error or
//           dropped as malformed.
// Time:     `now` (unix time, Nanos) per datagram.
#pragma once
#include <cstdint>
#include <string>

#include "core/counters.h"
#include "core/time.h"
#include "kvs/cache.h"
#include "kvs/frame_assembler.h"
#include "kvs/protocol.h"

namespace nfpark::kvs {

struct ServerConfig {
  CacheConfig cache;
  ProtocolConfig protocol;
  uint32_t assembly_contexts = 4;  // 0: multi-datagram requests are dropped, as memcached does
  uint32_t assembly_max_datagrams = 1024;
  Nanos assembly_timeout = 2 * kSecond;
  // "" when usable, else what to change (names the option).
  std::string check() const;
  uint32_t max_request() const { return protocol.max_value + 4096; }
};

struct ServerCounters {
  uint64_t datagrams = 0, short_datagrams = 0, bad_frames = 0, multi_datagram = 0;
};

class Server {
 public:
  Server(const ServerConfig& cfg, uint8_t* region, uint64_t region_bytes);
  // One UDP payload (frame header + request) from `client` (an opaque id, e.g. Peer::id()).
  // `payload` may be modified. `zero_copy`: the engine can send stable buffers as they are.
  void datagram(uint8_t* payload, uint32_t len, uint64_t client, Nanos now, bool zero_copy,
                DatagramSink& sink);
  void counters(const CounterSink& sink) const;
  uint64_t malformed() const;

  Cache& cache() { return cache_; }
  const Cache& cache() const { return cache_; }
  const Protocol& protocol() const { return protocol_; }
  const FrameAssembler& assembler() const { return assembler_; }

 private:
  Cache cache_;
  Protocol protocol_;
  FrameAssembler assembler_;
  ServerCounters c_;
};

}  // namespace nfpark::kvs
