#include "trace/edge_gen.h"

#include <array>
#include <cstring>

#include "core/bytes.h"
#include "core/checksum.h"
#include "core/packet_builder.h"
#include "core/parse.h"
#include "trace/rng.h"

namespace nfpark::trace {

namespace {

using Bytes = std::vector<uint8_t>;

// NFSlicer's escape token (park::kEscapeToken; trace does not depend on park, a test checks).
constexpr uint64_t kEscapeLike = 0xFF4E465345534350ull;

constexpr std::array<uint8_t, 6> kDstMac = {0x02, 0, 0, 0, 0, 0x02},
                                 kSrcMac = {0x02, 0, 0, 0, 0, 0x01};

struct Packet {
  Bytes bytes;
  uint32_t wire = 0;  // 0: the frame's size (captured whole)
  EdgeKind kind;
};

std::array<uint8_t, 16> v6(uint16_t host) {
  std::array<uint8_t, 16> a{0xfd, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  store_be16(a.data() + 14, host);
  return a;
}

Bytes eth(uint16_t type) {
  Bytes b(kDstMac.begin(), kDstMac.end());
  b.insert(b.end(), kSrcMac.begin(), kSrcMac.end());
  b.push_back(uint8_t(type >> 8));
  b.push_back(uint8_t(type));
  return b;
}

// Payload bytes: the packet id (magic + be64) at the start when `id` is set, a pattern after.
Bytes payload(uint32_t n, uint64_t id, bool with_id = true) {
  Bytes p(n);
  for (uint32_t i = 0; i < n; ++i) p[i] = uint8_t(0x30 + i * 5);
  if (with_id && n >= kPacketIdBytes) {
    std::memcpy(p.data(), kPacketIdMagic.data(), 4);
    store_be64(p.data() + 4, id);
  }
  return p;
}

// The L4 checksum over `l4` with the pseudo-header of IPv4 (src/dst 4 bytes) or IPv6 (16 bytes).
uint16_t l4_sum(const uint8_t* src, const uint8_t* dst, uint32_t alen, uint8_t proto_nr,
                const Bytes& l4) {
  uint32_t s = proto_nr == proto::kIcmp ? 0 : csum_partial(src, alen) + csum_partial(dst, alen);
  if (proto_nr != proto::kIcmp)
    s += proto_nr + (uint32_t(l4.size()) & 0xFFFF) + uint32_t(l4.size() >> 16);
  uint16_t c = csum_finish(csum_partial(l4.data(), uint32_t(l4.size()), s));
  if (c == 0 && proto_nr == proto::kUdp) c = 0xFFFF;
  return c;
}

// An IPv4 header (no options) for `l4_len` bytes of L4, with its checksum.
Bytes ipv4_header(uint32_t src, uint32_t dst, uint8_t proto_nr, uint32_t l4_len, uint16_t ident,
                  uint16_t frag, uint32_t total = 0) {
  Bytes h(20, 0);
  h[0] = 0x45;
  store_be16(h.data() + 2, uint16_t(total ? total : 20 + l4_len));
  store_be16(h.data() + 4, ident);
  store_be16(h.data() + 6, frag);
  h[8] = 64;
  h[9] = proto_nr;
  store_be32(h.data() + 12, src);
  store_be32(h.data() + 16, dst);
  store_be16(h.data() + 10, ipv4_header_checksum(h.data(), 20));
  return h;
}

Bytes udp_segment(uint16_t sp, uint16_t dp, const Bytes& pay) {
  Bytes u(8, 0);
  store_be16(u.data(), sp);
  store_be16(u.data() + 2, dp);
  store_be16(u.data() + 4, uint16_t(8 + pay.size()));
  u.insert(u.end(), pay.begin(), pay.end());
  return u;
}

Bytes cat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// An IPv6 frame with extension headers `ext` (each: type, then its bytes, next-header byte
// filled in here) and an L4 segment of `proto_nr` (checksum filled in here).
Bytes ipv6_frame(uint16_t src, uint16_t dst, const std::vector<std::pair<uint8_t, Bytes>>& ext,
                 uint8_t proto_nr, Bytes l4) {
  const auto s = v6(src), d = v6(dst);
  const uint32_t csum_at = proto_nr == proto::kTcp ? 16 : proto_nr == proto::kUdp ? 6 : 2;
  store_be16(l4.data() + csum_at, 0);
  store_be16(l4.data() + csum_at, l4_sum(s.data(), d.data(), 16, proto_nr, l4));
  Bytes h(40, 0);
  h[0] = 0x60;
  uint32_t ext_len = 0;
  for (auto& e : ext) ext_len += uint32_t(e.second.size());
  store_be16(h.data() + 4, uint16_t(ext_len + l4.size()));
  h[6] = ext.empty() ? proto_nr : ext[0].first;
  h[7] = 64;
  std::memcpy(h.data() + 8, s.data(), 16);
  std::memcpy(h.data() + 24, d.data(), 16);
  Bytes f = cat(eth(0x86DD), h);
  for (size_t i = 0; i < ext.size(); ++i) {
    Bytes e = ext[i].second;
    e[0] = i + 1 < ext.size() ? ext[i + 1].first : proto_nr;
    f = cat(f, e);
  }
  return cat(f, l4);
}

class Builder {
 public:
  explicit Builder(const EdgeConfig& c) : c_(c), rng_(c.seed * 0x9E3779B97F4A7C15ull + 17) {}

  std::vector<Packet> build() {
    make_flows();
    std::vector<Packet> specials = make_specials();
    std::vector<Packet> out;
    size_t next_special = 0;
    const size_t per_round = (specials.size() + c_.packets_per_flow - 1) / c_.packets_per_flow;
    std::vector<uint32_t> order(c_.flows);
    for (uint32_t f = 0; f < c_.flows; ++f) order[f] = f;
    for (uint32_t r = 0; r < c_.packets_per_flow; ++r) {
      for (uint32_t i = c_.flows - 1; i > 0; --i) std::swap(order[i], order[rng_.below(i + 1)]);
      for (uint32_t f : order) {
        out.push_back(flow_packet(f, r));
        if (r == 0 && f == quoted_udp_) out.push_back(icmp_error_v4(3, 3, flow_first_[f]));
        if (r == 0 && f == quoted_tcp_) out.push_back(icmp_error_v4(11, 0, flow_first_[f]));
        if (r == 0 && f == quoted_v6_) out.push_back(icmp_error_v6(flow_first_[f]));
      }
      for (size_t k = 0; k < per_round && next_special < specials.size(); ++k)
        out.push_back(std::move(specials[next_special++]));
    }
    while (next_special < specials.size()) out.push_back(std::move(specials[next_special++]));
    return out;
  }

 private:
  struct Flow {
    bool tcp, v6;
    uint16_t sport, dport;
    uint32_t seq = 1;
    std::vector<uint32_t> sizes;
  };

  uint64_t id() { return next_id_++; }

  void make_flows() {
    static constexpr uint32_t kSizes[] = {64,  1514, 200, 600,  90,  1200,
                                          300, 1500, 128, 1000, 700, 80};
    for (uint32_t f = 0; f < c_.flows; ++f) {
      Flow fl;
      fl.tcp = f % 2 == 0;
      fl.v6 = f % 3 == 2;
      fl.sport = uint16_t(10000 + rng_.below(50000));
      fl.dport = fl.tcp ? 61002 : 61000;
      for (uint32_t r = 0; r < c_.packets_per_flow; ++r)
        fl.sizes.push_back(kSizes[(f * 5 + r) % (sizeof kSizes / sizeof kSizes[0])]);
      flows_.push_back(fl);
    }
    // Jumbo and GRO-size frames within TCP flows 0 (IPv4) and 2 (IPv6 when there is one).
    auto& f0 = flows_[0].sizes;
    const std::array<uint32_t, 4> big = {9014, 16398, 32768, 65549};
    for (size_t i = 0; i < big.size() && 1 + 2 * i < f0.size(); ++i) f0[1 + 2 * i] = big[i];
    for (uint32_t f = 0; f < c_.flows; ++f)
      if (flows_[f].tcp && flows_[f].v6) {
        flows_[f].sizes[1] = 65589;  // IPv6 payload length 65535
        flows_[f].sizes[2] = 9014;
        break;
      }
    flows_[1].sizes[0] = 300;  // a UDP flow whose first packet an ICMP error quotes
    quoted_udp_ = 1;
    quoted_tcp_ = 0;
    for (uint32_t f = 0; f < c_.flows; ++f)
      if (flows_[f].v6 && !flows_[f].tcp) quoted_v6_ = f;
    flow_first_.resize(c_.flows);
  }

  PacketBuilder flow_builder(uint32_t f) const {
    const Flow& fl = flows_[f];
    PacketBuilder b;
    if (fl.v6)
      b.ipv6(v6(uint16_t(0x100 + f)), v6(0x1));
    else
      b.ipv4(0x0A000001u + (f << 8), 0x0A640001u);
    return b;
  }

  Packet flow_packet(uint32_t f, uint32_t r) {
    Flow& fl = flows_[f];
    PacketBuilder b = flow_builder(f);
    const uint32_t size = fl.sizes[r];
    if (fl.tcp)
      b.tcp(fl.sport, fl.dport, 0x18, fl.seq);
    else
      b.udp(fl.sport, fl.dport);
    Bytes p = b.frame_size(size).packet_id(id()).build();
    fl.seq += uint32_t(p.size() - b.header_bytes());
    if (r == 0) flow_first_[f] = p;
    return {std::move(p), 0, EdgeKind::kFlow};
  }

  // ICMP error quoting the IP header and 8 bytes of `quoted` (an IPv4 frame), from the router
  // 10.255.0.1 to the quoted packet's source.
  Packet icmp_error_v4(uint8_t type, uint8_t code, const Bytes& quoted) {
    Bytes icmp(8, 0);
    icmp[0] = type;
    icmp[1] = code;
    icmp.insert(icmp.end(), quoted.begin() + 14, quoted.begin() + 14 + 20 + 8);
    store_be16(icmp.data() + 2, l4_sum(nullptr, nullptr, 0, proto::kIcmp, icmp));
    const uint32_t to = load_be32(quoted.data() + 14 + 12);
    Bytes f = cat(cat(eth(0x0800), ipv4_header(0x0AFF0001u, to, proto::kIcmp, uint32_t(icmp.size()),
                                               uint16_t(id()), 0)),
                  icmp);
    return {std::move(f), 0, EdgeKind::kIcmpError};
  }

  // ICMPv6 destination unreachable (port) quoting an IPv6 frame (as much as fits in 1280 B).
  Packet icmp_error_v6(const Bytes& quoted) {
    Bytes icmp(8, 0);
    icmp[0] = 1;
    icmp[1] = 4;
    const size_t q = std::min<size_t>(quoted.size() - 14, 1280 - 40 - 8);
    icmp.insert(icmp.end(), quoted.begin() + 14, quoted.begin() + 14 + long(q));
    return {ipv6_frame(0xff01, load_be16(quoted.data() + 14 + 8 + 14), {}, proto::kIcmpV6, icmp), 0,
            EdgeKind::kIcmpError};
  }

  std::vector<Packet> make_specials() {
    std::vector<Packet> s;
    // Truncated records: snaplen 64, 96, 80 and one cut inside the TCP header (IPv6, 64).
    {
      Bytes t = PacketBuilder()
                    .ipv4("10.9.0.1", "10.9.0.2")
                    .tcp(2001, 61001)
                    .frame_size(1514)
                    .packet_id(id())
                    .build();
      s.push_back({Bytes(t.begin(), t.begin() + 64), 1514, EdgeKind::kTruncated});
      Bytes u = PacketBuilder()
                    .ipv4("10.9.0.3", "10.9.0.4")
                    .udp(2002, 61000)
                    .frame_size(1000)
                    .packet_id(id())
                    .build();
      s.push_back({Bytes(u.begin(), u.begin() + 96), 1000, EdgeKind::kTruncated});
      Bytes w = PacketBuilder()
                    .ipv6(v6(0x901), v6(0x902))
                    .udp(2003, 61000)
                    .frame_size(1200)
                    .packet_id(id())
                    .build();
      s.push_back({Bytes(w.begin(), w.begin() + 80), 1200, EdgeKind::kTruncated});
      Bytes x = PacketBuilder()
                    .ipv6(v6(0x903), v6(0x904))
                    .tcp(2004, 61001)
                    .frame_size(9014)
                    .packet_id(id())
                    .build();
      s.push_back({Bytes(x.begin(), x.begin() + 64), 9014, EdgeKind::kTruncated});
    }
    // ICMP echo request and its reply.
    {
      Bytes req = PacketBuilder()
                      .ipv4("10.9.1.1", "10.9.1.2")
                      .icmp_echo(0x4242, 1)
                      .payload_size(56)
                      .packet_id(id())
                      .build();
      Bytes rep = PacketBuilder()
                      .ipv4("10.9.1.2", "10.9.1.1")
                      .icmp_echo(0x4242, 1)
                      .payload_size(56)
                      .packet_id(id())
                      .build();
      rep[14 + 20] = 0;  // echo reply
      store_be16(rep.data() + 14 + 20 + 2, 0);
      Bytes icmp(rep.begin() + 34, rep.end());
      store_be16(rep.data() + 14 + 20 + 2, l4_sum(nullptr, nullptr, 0, proto::kIcmp, icmp));
      s.push_back({std::move(req), 0, EdgeKind::kIcmpEcho});
      s.push_back({std::move(rep), 0, EdgeKind::kIcmpEcho});
    }
    // An IPv4 UDP datagram of 1208 bytes in two fragments: 1008 (UDP header + 1000) and 200.
    {
      const Bytes pay = payload(1200, id());
      Bytes u = udp_segment(61003, 61004, pay);
      const uint32_t src = 0x0A090201u, dst = 0x0A090202u;
      uint8_t s4[4], d4[4];
      store_be32(s4, src);
      store_be32(d4, dst);
      store_be16(u.data() + 6, l4_sum(s4, d4, 4, proto::kUdp, u));
      const uint16_t ident = uint16_t(0x7000 + rng_.below(0x1000));
      Bytes first(u.begin(), u.begin() + 1008), rest(u.begin() + 1008, u.end());
      s.push_back(
          {cat(cat(eth(0x0800), ipv4_header(src, dst, proto::kUdp, 1008, ident, 0x2000)), first), 0,
           EdgeKind::kFragment});
      s.push_back({cat(cat(eth(0x0800), ipv4_header(src, dst, proto::kUdp, uint32_t(rest.size()),
                                                    ident, 1008 / 8)),
                       rest),
                   0, EdgeKind::kFragment});
    }
    // IPv6 extension headers.
    {
      const Bytes hbh = {0, 0, 1, 4, 0, 0, 0, 0};      // PadN
      const Bytes dst_opt = {0, 0, 1, 4, 0, 0, 0, 0};  // PadN
      Bytes rh = {0, 2, 4, 0, 0, 0, 0, 0};             // SRH, segments left 0
      const auto d = v6(0x1);
      rh.insert(rh.end(), d.begin(), d.end());
      Bytes frag = {0, 0, 0, 0, 0, 0, 0x12, 0x34};  // atomic fragment (offset 0, M 0)
      auto udp6 = [&](uint32_t n) { return udp_segment(4000, 61000, payload(n, id())); };
      auto tcp6 = [&](uint32_t n) {
        Bytes t(20, 0);
        store_be16(t.data(), 4001);
        store_be16(t.data() + 2, 61001);
        store_be32(t.data() + 4, 1);
        t[12] = 0x50;
        t[13] = 0x18;
        store_be16(t.data() + 14, 65535);
        return cat(t, payload(n, id()));
      };
      s.push_back(
          {ipv6_frame(0x601, 0x1, {{0, hbh}}, proto::kUdp, udp6(400)), 0, EdgeKind::kIpv6Ext});
      s.push_back(
          {ipv6_frame(0x602, 0x1, {{43, rh}}, proto::kTcp, tcp6(700)), 0, EdgeKind::kIpv6Ext});
      s.push_back(
          {ipv6_frame(0x603, 0x1, {{60, dst_opt}}, proto::kUdp, udp6(200)), 0, EdgeKind::kIpv6Ext});
      s.push_back(
          {ipv6_frame(0x604, 0x1, {{44, frag}}, proto::kUdp, udp6(300)), 0, EdgeKind::kIpv6Ext});
      s.push_back({ipv6_frame(0x605, 0x1, {{0, hbh}, {43, rh}, {60, dst_opt}, {44, frag}},
                              proto::kUdp, udp6(600)),
                   0, EdgeKind::kIpv6Ext});
    }
    // QinQ and 802.1ad.
    s.push_back({PacketBuilder()
                     .vlan(100, 0x88A8)
                     .vlan(200, 0x8100)
                     .ipv4("10.9.3.1", "10.9.3.2")
                     .tcp(5000, 61001)
                     .frame_size(900)
                     .packet_id(id())
                     .build(),
                 0, EdgeKind::kVlan});
    s.push_back({PacketBuilder()
                     .vlan(300, 0x88A8)
                     .ipv4("10.9.3.3", "10.9.3.4")
                     .udp(5001, 61000)
                     .frame_size(700)
                     .packet_id(id())
                     .build(),
                 0, EdgeKind::kVlan});
    // MPLS: one label (100, bottom of stack, TTL 64) over IPv4/UDP.
    {
      Bytes ip = PacketBuilder()
                     .ipv4("10.9.4.1", "10.9.4.2")
                     .udp(6000, 61000)
                     .frame_size(600)
                     .packet_id(id())
                     .build();
      const Bytes label = {0x00, 0x06, 0x41, 0x40};
      s.push_back(
          {cat(cat(eth(0x8847), label), Bytes(ip.begin() + 14, ip.end())), 0, EdgeKind::kMpls});
    }
    // ARP request (who has 10.9.5.2? tell 10.9.5.1), padded to 60 bytes.
    {
      Bytes a = cat(eth(0x0806), {0, 1, 0x08, 0, 6, 4, 0, 1});
      a.insert(a.end(), kSrcMac.begin(), kSrcMac.end());
      a = cat(a, {10, 9, 5, 1, 0, 0, 0, 0, 0, 0, 10, 9, 5, 2});
      a.resize(60, 0);
      s.push_back({std::move(a), 0, EdgeKind::kArp});
    }
    s.push_back({cat(eth(0x88B5), payload(100, id())), 0, EdgeKind::kUnknown});
    // Whole packets that already carry DSCP 63.
    s.push_back({PacketBuilder()
                     .ipv4("10.9.6.1", "10.9.6.2")
                     .dscp(63)
                     .tcp(61005, 61001)
                     .frame_size(1000)
                     .packet_id(id())
                     .build(),
                 0, EdgeKind::kDscp63});
    s.push_back({PacketBuilder()
                     .ipv6(v6(0x961), v6(0x962))
                     .dscp(63)
                     .udp(7001, 61000)
                     .frame_size(800)
                     .packet_id(id())
                     .build(),
                 0, EdgeKind::kDscp63});
    // IPv4 length 1028 in a 200-byte frame, captured whole.
    {
      Bytes p = PacketBuilder()
                    .ipv4("10.9.7.1", "10.9.7.2")
                    .udp(8000, 61000)
                    .frame_size(1042)
                    .packet_id(id())
                    .build();
      p.resize(200);
      s.push_back({std::move(p), 0, EdgeKind::kShortIp});
    }
    // Payloads that look like an nfpark tag, NFSlicer's escape token, a ring token.
    auto lookalike = [&](Bytes head, uint32_t n, bool tcp, uint8_t dscp, uint16_t port) {
      PacketBuilder b;
      b.ipv4(0x0A090800u + port % 256, 0x0A0908FEu).dscp(dscp);
      if (tcp)
        b.tcp(port, 61001);
      else
        b.udp(port, 61000);
      Bytes p = b.payload_size(n).build();
      const uint32_t at = b.header_bytes();
      std::memcpy(p.data() + at, head.data(), head.size());
      const PacketLayout L = parse_packet(p.data(), uint32_t(p.size()));
      fill_checksums(p.data(), L);
      return Packet{std::move(p), 0, EdgeKind::kLookalike};
    };
    Bytes tag = {0x4E, 0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0,    0,    0,    1,
                 0x05, 0xDC, 0x00, 0xA0, 0xDE, 0xAD, 0xBE, 0xEF, 0xDE, 0xAD, 0xBE, 0xEF};
    Bytes esc(8), ring = {0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x03};
    store_be64(esc.data(), kEscapeLike);
    s.push_back(lookalike(tag, 300, false, 0, 9001));
    s.push_back(lookalike(tag, 600, true, 0, 9002));
    s.push_back(lookalike(esc, 700, true, 0, 9003));
    s.push_back(lookalike(ring, 900, false, 0, 9004));
    s.push_back(lookalike(esc, 800, false, 63, 9005));
    return s;
  }

  EdgeConfig c_;
  Rng rng_;
  uint64_t next_id_ = 0;
  std::vector<Flow> flows_;
  std::vector<Bytes> flow_first_;
  uint32_t quoted_udp_ = 0, quoted_tcp_ = 0, quoted_v6_ = UINT32_MAX;
};

}  // namespace

const char* to_string(EdgeKind k) {
  static constexpr const char* kNames[kEdgeKinds] = {
      "flow", "truncated", "icmp_echo", "icmp_error", "fragment", "ipv6_ext", "vlan",
      "mpls", "arp",       "unknown",   "dscp63",     "short_ip", "lookalike"};
  return kNames[int(k)];
}

std::string EdgeConfig::validate() const {
  if (flows < 6 || flows > 1000) return "--flows must be in 6..1000 for the edge trace";
  if (packets_per_flow < 8 || packets_per_flow > 1000)
    return "--packets-per-flow must be in 8..1000 for the edge trace";
  return "";
}

void generate_edge(const EdgeConfig& c, Trace& out, std::vector<EdgeKind>* kinds) {
  std::vector<Packet> pkts = Builder(c).build();
  Nanos t = c.start;
  for (auto& p : pkts) {
    out.add(t, p.bytes.data(), uint32_t(p.bytes.size()),
            p.wire ? p.wire : uint32_t(p.bytes.size()));
    if (kinds) kinds->push_back(p.kind);
    t += kMicro;
  }
}

bool generate_edge_pcap(const EdgeConfig& c, const std::string& path, Precision p,
                        std::string* error) {
  Trace t;
  generate_edge(c, t);
  return save_trace(path, t, p, error);
}

}  // namespace nfpark::trace
