// Protocol: memcached's text protocol over one UDP request, as memcached 1.6 runs it.
//
// Commands: get, gets, bget (multi-key), set, add, replace, cas, delete, version, quit. Every
// other command gets "ERROR" (memcached would run it; docs/kvs.md lists them). Replies are
// memcached's, byte for byte, including its errors and its odd corners (checked against stock
// memcached by tests/e2e/test_kvs_conformance.py):
//  - a line ends at '\n' (one preceding '\r' stripped); a command is cut at a NUL byte;
//  - numbers parse as memcached parses them (kvs/tokenizer.h); keys longer than 250 bytes are
//    a CLIENT_ERROR; `noreply` suppresses the reply of set/add/replace/cas/delete;
//  - after a malformed storage command line its data block is parsed as a command (so it gets
//    its own "ERROR"), as in memcached; a data block not ending in "\r\n" is "CLIENT_ERROR bad
//    data chunk" and parsing resumes right after the declared length;
//  - responses are written out (flushed) after each successful get, after every 21 commands and
//    at the end of the request; a get with an over-long key culls every response not yet
//    written and answers only its CLIENT_ERROR; an "HTTP/" line, or more than 2048 bytes with
//    no newline that do not start a get, cull them and end the request silently.
// Where memcached would wait for the next datagram (a data block or a too-large value that the
// request does not hold), nfpark answers at once — "CLIENT_ERROR bad data chunk", or
// "SERVER_ERROR object too large for cache" — and drops the rest of the request: a request is
// one datagram (or one multi-datagram message), never a stream, so no buffer ever waits.
// Reads never leave [buf, buf + len): fuzzed by tests/kvs/protocol_fuzz_test.cc.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "core/time.h"
#include "kvs/cache.h"
#include "kvs/reply.h"
#include "kvs/tokenizer.h"

namespace nfpark::kvs {

struct ProtocolConfig {
  uint32_t max_value = 1u << 20;          // larger values: SERVER_ERROR object too large for cache
  std::string version = "1.6.18-nfpark";  // the `version` reply
};

struct ProtocolCounters {
  uint64_t requests = 0, commands = 0;
  uint64_t errors = 0;         // "ERROR": unknown or malformed commands
  uint64_t client_errors = 0;  // "CLIENT_ERROR ..."
  uint64_t server_errors = 0;  // "SERVER_ERROR object too large for cache"
  uint64_t ignored = 0;        // incomplete trailing lines and culled requests (no reply)
  uint64_t malformed() const { return errors + client_errors + server_errors + ignored; }
};

// The first key of a single-datagram `get`/`gets` (frame header included in `udp`), or an
// empty view: what an engine prefetches for before it runs a burst of requests.
std::string_view first_get_key(const uint8_t* udp, uint32_t len);

class Protocol {
 public:
  Protocol(Cache& cache, const ProtocolConfig& cfg);
  // Runs the request buf[0, len) (modified in place) from a client, replies to `sink`.
  void run(char* buf, size_t len, uint16_t request_id, Nanos now, bool zero_copy,
           DatagramSink& sink);
  const ProtocolCounters& counters() const { return c_; }
  const ProtocolConfig& config() const { return cfg_; }

 private:
  enum class Next : uint8_t { kContinue, kFlush, kQuit, kClose, kDrop };
  struct Step {
    Next next = Next::kContinue;
    size_t data = 0;  // bytes consumed after the command line (a storage command's data)
  };
  Step command(char* line, char* rest, size_t avail);
  Step get(size_t ntokens, bool return_cas);
  Step update(size_t ntokens, Cache::Mode mode, char* rest, size_t avail);
  Step remove(size_t ntokens);
  void out(const char* s);  // memcached's out_string (honours and clears noreply)
  bool set_noreply_maybe(size_t ntokens);
  int64_t expiry(int32_t exptime) const;

  Cache& cache_;
  ProtocolConfig cfg_;
  ResponseWindow window_;
  Token tokens_[kMaxTokens];
  bool noreply_ = false, zero_copy_ = false;
  Nanos now_ = 0;
  ProtocolCounters c_;
};

}  // namespace nfpark::kvs
