// RandomTrace: random bursts of frames for the run-equivalence property tests — flows of every
// kind the NFs key on (IPv4/IPv6, TCP with random flags, UDP, ICMP echo, VLAN-tagged), sent in
// runs of random length (the spatial locality factor, SLF), mixed with what must end a run
// early: IPv4 fragments (in order or later ones first), ICMP errors quoting a flow, non-IP and
// truncated frames, TTL-1 packets, replies to what the chain emitted (so a NAT sees inbound
// packets that hit its mappings) — random sizes, header-only views for some packets.
#pragma once
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "core/bytes.h"
#include "core/packet_builder.h"
#include "core/parse.h"
#include "nat_packets.h"
#include "nf/nf.h"
#include "nf_harness.h"

namespace nfpark::nf::testing {

struct TraceFrame {
  Frame bytes;
  uint32_t cut = 0;  // bytes the NF sees (header-only when < size)
};

class RandomTrace {
 public:
  RandomTrace(uint64_t seed, uint32_t flows, double slf) : rng_(seed), slf_(slf) {
    for (uint32_t f = 0; f < flows; ++f) flows_.push_back(random_flow());
  }

  // The next burst of 1..kBurst frames.
  std::vector<TraceFrame> burst() {
    std::vector<TraceFrame> out;
    const size_t n = 1 + pick(kBurst);
    while (out.size() < n) {
      const uint32_t kind = pick(100);
      if (kind < 4) {
        add(out, frags());
      } else if (kind < 7) {
        add(out, {icmp_error_frame()});
      } else if (kind < 9) {
        add(out, {odd_frame()});
      } else if (kind < 22 && !emitted_.empty()) {
        add(out, std::vector<Frame>(1 + pick(3), reply_to(emitted_[pick(emitted_.size())])));
      } else {
        const Flow& f = flows_[pick(flows_.size())];
        std::geometric_distribution<uint32_t> extra(1.0 / slf_);
        const uint32_t run = 1 + extra(rng_);
        std::vector<Frame> fs;
        for (uint32_t i = 0; i < run; ++i) fs.push_back(frame_of(f, pick(20) == 0 ? 1 : 64));
        add(out, fs);
      }
    }
    out.resize(n);
    return out;
  }

  // The mean run length from the next burst on (a trace whose locality changes).
  void set_slf(double slf) { slf_ = slf; }

  // What the chain let through: replies to some of it come later.
  void emitted(const Frame& f) {
    if (emitted_.size() < 256)
      emitted_.push_back(f);
    else
      emitted_[pick(emitted_.size())] = f;
  }

 private:
  struct Flow {
    int family;  // 4 or 6
    uint32_t src, dst;
    uint8_t proto;  // 6, 17 or 1 (ICMP echo)
    uint16_t sport, dport;
    bool vlan;
  };

  uint32_t pick(size_t n) { return uint32_t(rng_() % n); }

  Flow random_flow() {
    Flow f;
    f.family = pick(8) == 0 ? 6 : 4;
    f.src = ip4(10, 0, uint8_t(pick(4)), uint8_t(1 + pick(60)));
    f.dst = ip4(192, 0, 2, uint8_t(pick(256)));
    const uint32_t p = pick(10);
    f.proto = p < 5 ? 6 : p < 9 ? 17 : 1;
    f.sport = uint16_t(1024 + pick(200));
    f.dport = pick(3) == 0 ? uint16_t(7000 + pick(2000)) : uint16_t(80 + pick(3));
    f.vlan = pick(10) == 0;
    return f;
  }

  std::array<uint8_t, 16> v6(uint32_t a) {
    std::array<uint8_t, 16> x{0x20, 0x01, 0x0d, 0xb8};
    store_be32(x.data() + 12, a);
    return x;
  }

  Frame frame_of(const Flow& f, uint8_t ttl) {
    PacketBuilder b;
    if (f.vlan) b.vlan(7);
    if (f.family == 6)
      b.ipv6(v6(f.src), v6(f.dst), ttl);
    else
      b.ipv4(f.src, f.dst, ttl);
    if (f.proto == 6)
      b.tcp(f.sport, f.dport, uint8_t(pick(64)), uint32_t(rng_()), uint32_t(rng_()));
    else if (f.proto == 17)
      b.udp(f.sport, f.dport);
    else
      b.icmp_echo(f.sport, uint16_t(pick(65536)));
    return b.payload_size(pick(1400)).packet_id(++id_).build();
  }

  // The reverse of an emitted IPv4 TCP/UDP/ICMP-echo frame (a reply from the far end).
  Frame reply_to(const Frame& e) {
    const PacketLayout L = parse_packet(e.data(), uint32_t(e.size()));
    if (!L.ok() || L.ip_version != 4 || L.l4_off == 0) return odd_frame();
    const uint8_t* ip = e.data() + L.l3_off;
    const uint8_t* l4 = e.data() + L.l4_off;
    PacketBuilder b;
    b.ipv4(load_be32(ip + 16), load_be32(ip + 12));
    if (L.l4_proto == proto::kTcp)
      b.tcp(load_be16(l4 + 2), load_be16(l4), uint8_t(pick(64)));
    else if (L.l4_proto == proto::kUdp)
      b.udp(load_be16(l4 + 2), load_be16(l4));
    else
      b.icmp_echo(load_be16(l4 + 4), 1);
    return b.payload_size(pick(600)).packet_id(++id_).build();
  }

  // A UDP datagram's fragments: in order, or the later ones first.
  std::vector<Frame> frags() {
    const Flow& f = flows_[pick(flows_.size())];
    Frame whole = PacketBuilder()
                      .ipv4(f.src, f.dst)
                      .udp(f.sport, f.dport)
                      .payload_size(100 + pick(300))
                      .packet_id(++id_)
                      .build();
    std::vector<Frame> fs = fragments(whole, 64);
    if (pick(3) == 0) std::rotate(fs.begin(), fs.begin() + 1, fs.end());
    return fs;
  }

  // An ICMP error quoting an emitted frame (inbound, from a far router) or a flow's frame
  // (outbound, from an inside host).
  Frame icmp_error_frame() {
    if (!emitted_.empty() && pick(2) == 0) {
      const Frame& e = emitted_[pick(emitted_.size())];
      const PacketLayout L = parse_packet(e.data(), uint32_t(e.size()));
      if (L.ok() && L.ip_version == 4 && L.vlans == 0)
        return icmp_error(ip4(192, 0, 2, 250), load_be32(e.data() + L.l3_off + 12), 3, 1, e,
                          pick(2) ? 28 : 0);
    }
    Flow f = flows_[pick(flows_.size())];
    f.family = 4;
    f.vlan = false;
    Frame inner = frame_of(f, 64);
    return icmp_error(f.src, f.dst, 11, 0, inner, 48);
  }

  // A frame that has no flow key: non-IP (ARP), or IPv4 cut inside its header.
  Frame odd_frame() {
    Frame f = PacketBuilder().ipv4(ip4(10, 0, 0, 1), ip4(192, 0, 2, 1)).udp(1, 2).build();
    if (pick(2) == 0) {
      store_be16(f.data() + 12, 0x0806);
      return f;
    }
    f.resize(14 + 12);
    return f;
  }

  void add(std::vector<TraceFrame>& out, const std::vector<Frame>& fs) {
    for (const Frame& f : fs) {
      const PacketLayout L = parse_packet(f.data(), uint32_t(f.size()));
      const bool header_only = pick(2) == 0 && L.payload_off != 0;
      out.push_back({f, header_only ? uint32_t(L.payload_off) : uint32_t(f.size())});
    }
  }

  std::mt19937_64 rng_;
  double slf_;
  std::vector<Flow> flows_;
  std::vector<Frame> emitted_;
  uint64_t id_ = 0;
};

}  // namespace nfpark::nf::testing
