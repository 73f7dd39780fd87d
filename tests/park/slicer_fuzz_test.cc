// Slicer fuzz: header packets with random byte mutations, truncations and extensions come back
// from the "host". merge() must never read out of bounds (run under the sanitizer build), never
// leak, and anything it splices must carry the payload of the packet whose header it is.
#include <gtest/gtest.h>

#include <random>

#include "core/packet_builder.h"
#include "park/slicer.h"
#include "park/vec_buffer.h"

namespace nfpark::park {
namespace {

using testing::VecBuffer;
using testing::VecPkt;
using H = VecPkt*;

TEST(SlicerFuzz, MutatedHeaderPacketsNeverMisSplice) {
  const int64_t live0 = VecBuffer::live;
  SlicerConfig c;
  c.entries = 32;
  c.cores = 2;
  c.ttl = 2;  // lost headers (about 1 in 4 here) free their entries quickly
  Slicer<VecBuffer> s(c);
  Emitter<H> host, wire;
  std::mt19937_64 rng(1234);
  uint64_t spliced_ok = 0;
  for (uint64_t id = 0; id < 20000; ++id) {
    PacketBuilder b;
    if (id % 3 == 0)
      b.ipv6("2001:db8::1", "2001:db8::2");
    else
      b.ipv4("10.0.0.1", "10.0.0.2");
    if (id % 2)
      b.tcp(1, 2);
    else
      b.udp(3, 4);
    if (id % 5 == 0) b.vlan(9);
    b.dscp(id % 7 == 0 ? 63 : 0).frame_size(200 + uint32_t(rng() % 1300)).packet_id(id);
    s.split(VecBuffer::make(b.build(), id), uint8_t(id % 2), host, wire);
    ASSERT_EQ(host.size(), 1u);
    H h = host[0];
    host.clear();
    const uint64_t how = rng() % 4;
    switch (how) {
      case 0:
        break;  // untouched
      case 1:   // flip 1..3 random bytes anywhere in the first 80
        for (uint64_t k = 0, n = 1 + rng() % 3; k < n; ++k)
          h->bytes[rng() % std::min<size_t>(80, h->bytes.size())] ^= uint8_t(1 + rng() % 255);
        break;
      case 2:
        h->bytes.resize(rng() % h->bytes.size());
        break;  // truncated
      case 3:
        h->bytes.resize(h->bytes.size() + rng() % 16, 0xEE);
        break;  // padded
    }
    s.merge(h, wire);
    for (size_t k = 0; k < wire.size(); ++k) {
      H o = wire[k];
      EXPECT_EQ(o->id, id);  // whatever left is this header's own packet, never another's
      const PacketLayout L = parse_packet(o->bytes.data(), uint32_t(o->bytes.size()));
      if (L.ok() && o->bytes.size() > L.payload_off) {
        auto pid = read_packet_id(o->bytes.data() + L.payload_off,
                                  uint32_t(o->bytes.size() - L.payload_off));
        if (how == 0) {  // unmutated: its own payload, id and all (mutants may hit the id)
          EXPECT_EQ(pid, std::optional<uint64_t>(id));
        }
        spliced_ok += pid.has_value();
      }
      VecBuffer::free(o);
    }
    wire.clear();
  }
  s.drain();
  const auto& k = s.counters();
  EXPECT_EQ(k.returned, k.spliced + k.passed + k.unescaped + k.merge_drops());
  EXPECT_EQ(k.sliced, k.spliced + k.expired + k.stranded_at_exit + k.merge_no_headroom);
  EXPECT_GT(k.spliced, 3000u);
  EXPECT_GT(k.merge_drops(), 500u);
  EXPECT_GT(spliced_ok, 0u);
  EXPECT_EQ(VecBuffer::live, live0);
}

}  // namespace
}  // namespace nfpark::park
