// Shared helpers for the KVS unit tests: a sink that turns reply datagrams into bytes (and
// either returns stable-buffer references at once or holds them, like packets still in a NIC's
// queue), and a one-call way to run a request through a Server.
#pragma once
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "kvs/server.h"

namespace nfpark::kvs::testing {

struct Datagram {
  uint16_t id = 0, seq = 0, total = 0;
  std::string body;
  bool operator==(const Datagram&) const = default;
};
inline std::ostream& operator<<(std::ostream& o, const Datagram& d) {
  return o << "{id " << d.id << " seq " << d.seq << "/" << d.total << " \"" << d.body << "\"}";
}

class ByteSink final : public DatagramSink {
 public:
  explicit ByteSink(RefReleaser* releaser, bool hold = false) : releaser_(releaser), hold_(hold) {}
  ~ByteSink() override { release_all(); }
  void datagram(const uint8_t (&frame)[kUdpFrameHeader], const Slice* s, uint32_t n,
                uint32_t bytes) override {
    Datagram d{load_be16(frame), load_be16(frame + 2), load_be16(frame + 4), {}};
    EXPECT_EQ(load_be16(frame + 6), 0);
    for (uint32_t i = 0; i < n; ++i) {
      d.body.append(reinterpret_cast<const char*>(s[i].data), s[i].len);
      (s[i].kind == Slice::kHot ? zero_copy_bytes : copied_bytes) += s[i].len;
    }
    EXPECT_EQ(d.body.size(), bytes);
    EXPECT_LE(d.body.size(), kUdpData);
    got.push_back(std::move(d));
  }
  void take_ref(HotRef ref) override {
    if (hold_)
      held.push_back(ref);
    else
      releaser_->release(ref);
  }
  void release_all() {
    for (HotRef r : held) releaser_->release(r);
    held.clear();
  }
  std::vector<Datagram> got;
  std::vector<HotRef> held;
  uint64_t zero_copy_bytes = 0, copied_bytes = 0;

 private:
  RefReleaser* releaser_;
  bool hold_;
};

inline std::vector<uint8_t> frame(uint16_t id, std::string_view body, uint16_t seq = 0,
                                  uint16_t total = 1) {
  std::vector<uint8_t> v(8 + body.size());
  store_be16(v.data(), id);
  store_be16(v.data() + 2, seq);
  store_be16(v.data() + 4, total);
  std::memcpy(v.data() + 8, body.data(), body.size());
  return v;
}

// A server with a small log and a region, memcached's version string, nothing hot unless
// the test asks for it.
struct ServerBox {
  explicit ServerBox(ServerConfig cfg = defaults(), uint64_t region_bytes = 1 << 20)
      : region(region_bytes), server(cfg, region.data(), region.size()) {}
  static ServerConfig defaults() {
    ServerConfig c;
    c.cache.log_bytes = 8 << 20;
    c.cache.auto_hot = false;
    c.protocol.version = "1.6.18";
    return c;
  }
  // Runs one single-datagram request; returns its reply datagrams (references released).
  std::vector<Datagram> run(std::string_view req, bool zero_copy = true, uint16_t id = 7,
                            Nanos now = 1'700'000'000 * kSecond) {
    ByteSink sink(&server.cache());
    std::vector<uint8_t> f = frame(id, req);
    server.datagram(f.data(), uint32_t(f.size()), 1, now, zero_copy, sink);
    for (const Datagram& d : sink.got) EXPECT_EQ(d.id, id);
    return sink.got;
  }
  std::vector<uint8_t> region;
  Server server;
};

// Shorthand for an expected datagram of request id 7.
inline Datagram D(std::string body, uint16_t seq = 0, uint16_t total = 1) {
  return Datagram{7, seq, total, std::move(body)};
}

}  // namespace nfpark::kvs::testing
