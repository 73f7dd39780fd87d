// Test helpers for the simulator: a switch program made of lambdas, a peer that records what
// reaches it and when, and frames from the packet builder.
#pragma once
#include <functional>
#include <vector>

#include "core/packet_builder.h"
#include "sim/packet.h"
#include "sim/switch.h"

namespace nfpark::sim::testing {

struct LambdaProgram final : SwitchProgram {
  std::function<void(Pass&, Packet*)> in;
  std::function<bool(Pass&, Packet*)> out;
  void ingress(Pass& pass, Packet* p) override { in(pass, p); }
  bool egress(Pass& pass, Packet* p) override { return out ? out(pass, p) : true; }
};

struct Arrival {
  uint64_t seq;
  Picos at;
  uint16_t link;
  uint32_t len;
};

// Records every packet that reaches it (then frees it).
struct RecordingPeer final : PortPeer {
  std::vector<Arrival> got;
  void arrive(Packet* p, Picos at, uint16_t link) override {
    got.push_back({p->seq, at, link, p->len});
    p->pool()->free(p);
  }
};

inline std::vector<uint8_t> udp_frame(uint32_t frame_len, uint16_t sport = 1000, uint64_t id = 0) {
  return PacketBuilder()
      .ipv4("10.0.0.1", "10.0.0.2")
      .udp(sport, 80)
      .frame_size(frame_len)
      .packet_id(id)
      .build();
}

// A record of `len` bytes with sequence number `seq` (bytes from a UDP frame of that length).
inline Packet* make_packet(PacketPool& pool, uint32_t len, uint64_t seq) {
  auto f = udp_frame(len, uint16_t(1000 + seq % 1000), seq);
  Packet* p = pool.make(f.data(), uint32_t(f.size()), uint32_t(f.size()));
  p->seq = seq;
  p->flow = 1 + seq % 7;
  return p;
}

}  // namespace nfpark::sim::testing
