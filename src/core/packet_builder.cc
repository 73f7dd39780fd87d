#include "core/packet_builder.h"

#include <arpa/inet.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "core/bytes.h"
#include "core/checksum.h"
#include "core/parse.h"

namespace nfpark {

std::optional<uint64_t> read_packet_id(const uint8_t* p, uint32_t len) {
  if (len < kPacketIdBytes || std::memcmp(p, kPacketIdMagic.data(), 4) != 0) return std::nullopt;
  return load_be64(p + 4);
}

std::optional<uint64_t> read_packet_id_tail(const uint8_t* p, uint32_t len) {
  if (len < kPacketIdBytes + 8 || std::memcmp(p, kPacketIdMagic.data(), 4) != 0) return std::nullopt;
  return load_be64(p + len - 8);
}

PacketBuilder& PacketBuilder::eth(std::array<uint8_t, 6> d, std::array<uint8_t, 6> s) {
  dmac_ = d;
  smac_ = s;
  return *this;
}
PacketBuilder& PacketBuilder::vlan(uint16_t vid, uint16_t tpid) {
  if (vlans_ < 2) {
    vid_[vlans_] = vid;
    tpid_[vlans_] = tpid;
    ++vlans_;
  }
  return *this;
}
PacketBuilder& PacketBuilder::ipv4(uint32_t s, uint32_t d, uint8_t ttl) {
  ipv_ = 4;
  ttl_ = ttl;
  src_ = {};
  dst_ = {};
  store_be32(src_.data() + 12, s);
  store_be32(dst_.data() + 12, d);
  return *this;
}
PacketBuilder& PacketBuilder::ipv4(std::string_view s, std::string_view d, uint8_t ttl) {
  in_addr a{}, b{};
  if (inet_pton(AF_INET, std::string(s).c_str(), &a) != 1 ||
      inet_pton(AF_INET, std::string(d).c_str(), &b) != 1)
    throw std::invalid_argument("PacketBuilder: bad IPv4 address");
  return ipv4(ntohl(a.s_addr), ntohl(b.s_addr), ttl);
}
PacketBuilder& PacketBuilder::ipv6(const std::array<uint8_t, 16>& s,
                                   const std::array<uint8_t, 16>& d, uint8_t hl) {
  ipv_ = 6;
  ttl_ = hl;
  src_ = s;
  dst_ = d;
  return *this;
}
PacketBuilder& PacketBuilder::ipv6(std::string_view s, std::string_view d, uint8_t hl) {
  std::array<uint8_t, 16> a{}, b{};
  if (inet_pton(AF_INET6, std::string(s).c_str(), a.data()) != 1 ||
      inet_pton(AF_INET6, std::string(d).c_str(), b.data()) != 1)
    throw std::invalid_argument("PacketBuilder: bad IPv6 address");
  return ipv6(a, b, hl);
}
PacketBuilder& PacketBuilder::ipv4_options(uint8_t w) {
  ipv4_opt_words_ = w > 10 ? 10 : w;
  return *this;
}
PacketBuilder& PacketBuilder::ipv6_ext_hop_by_hop() {
  v6_hbh_ = true;
  return *this;
}
PacketBuilder& PacketBuilder::udp(uint16_t s, uint16_t d) {
  l4_ = proto::kUdp;
  sport_ = s;
  dport_ = d;
  return *this;
}
PacketBuilder& PacketBuilder::tcp(uint16_t s, uint16_t d, uint8_t flags, uint32_t seq,
                                  uint32_t ack, uint8_t opt_words) {
  l4_ = proto::kTcp;
  sport_ = s;
  dport_ = d;
  tcp_flags_ = flags;
  seq_ = seq;
  ack_ = ack;
  tcp_opt_words_ = opt_words > 10 ? 10 : opt_words;
  return *this;
}
PacketBuilder& PacketBuilder::icmp_echo(uint16_t id, uint16_t seq) {
  l4_ = 0;  // resolved at build time from the IP version
  icmp_id_ = id;
  icmp_seq_ = seq;
  return *this;
}
PacketBuilder& PacketBuilder::dscp(uint8_t v) {
  dscp_ = v & 0x3F;
  return *this;
}
PacketBuilder& PacketBuilder::payload_size(uint32_t n) {
  payload_ = n;
  frame_.reset();
  return *this;
}
PacketBuilder& PacketBuilder::frame_size(uint32_t n) {
  frame_ = n;
  payload_.reset();
  return *this;
}
PacketBuilder& PacketBuilder::packet_id(uint64_t id) {
  id_ = id;
  return *this;
}
PacketBuilder& PacketBuilder::fill(uint8_t seed) {
  fill_ = seed;
  return *this;
}

uint32_t PacketBuilder::header_bytes() const {
  uint32_t n = proto::kEthHeader + proto::kVlanTag * vlans_;
  n += ipv_ == 4 ? proto::kIpv4Header + 4u * ipv4_opt_words_
                 : proto::kIpv6Header + (v6_hbh_ ? 8u : 0u);
  if (l4_ == proto::kTcp) n += proto::kTcpHeader + 4u * tcp_opt_words_;
  else if (l4_ == proto::kUdp) n += proto::kUdpHeader;
  else n += proto::kIcmpHeader;
  return n;
}

std::vector<uint8_t> PacketBuilder::build() const {
  const uint32_t hdr = header_bytes();
  uint32_t pay = payload_ ? *payload_ : (frame_ && *frame_ > hdr ? *frame_ - hdr : 0);
  std::vector<uint8_t> f(hdr + pay, 0);
  uint8_t* p = f.data();
  std::memcpy(p, dmac_.data(), 6);
  std::memcpy(p + 6, smac_.data(), 6);
  uint32_t off = 12;
  for (uint8_t i = 0; i < vlans_; ++i) {
    store_be16(p + off, tpid_[i]);
    store_be16(p + off + 2, vid_[i] & 0x0FFF);
    off += 4;
  }
  store_be16(p + off, ipv_ == 4 ? proto::kEthIpv4 : proto::kEthIpv6);
  off += 2;
  const uint32_t l3 = off;
  const uint8_t l4p = l4_ ? l4_ : (ipv_ == 4 ? proto::kIcmp : proto::kIcmpV6);
  uint32_t l4;
  if (ipv_ == 4) {
    uint32_t ihl = proto::kIpv4Header + 4u * ipv4_opt_words_;
    p[l3] = uint8_t(0x40 | (ihl / 4));
    p[l3 + 1] = uint8_t(dscp_ << 2);
    store_be16(p + l3 + 2, uint16_t(f.size() - l3));
    store_be16(p + l3 + 4, uint16_t(id_ ? *id_ : 0));
    store_be16(p + l3 + 6, 0x4000);  // DF
    p[l3 + 8] = ttl_;
    p[l3 + 9] = l4p;
    std::memcpy(p + l3 + 12, src_.data() + 12, 4);
    std::memcpy(p + l3 + 16, dst_.data() + 12, 4);
    for (uint32_t i = proto::kIpv4Header; i < ihl; ++i) p[l3 + i] = 1;  // NOP options
    l4 = l3 + ihl;
  } else {
    uint32_t flow = id_ ? uint32_t(*id_ & 0xFFFFF) : 0;
    store_be32(p + l3, 0x60000000u | uint32_t(dscp_) << 22 | flow);
    uint32_t ext = v6_hbh_ ? 8 : 0;
    store_be16(p + l3 + 4, uint16_t(f.size() - l3 - proto::kIpv6Header));
    p[l3 + 6] = v6_hbh_ ? 0 : l4p;
    p[l3 + 7] = ttl_;
    std::memcpy(p + l3 + 8, src_.data(), 16);
    std::memcpy(p + l3 + 24, dst_.data(), 16);
    if (v6_hbh_) {
      uint8_t* h = p + l3 + proto::kIpv6Header;
      h[0] = l4p;
      h[1] = 0;
      h[2] = 1;  // PadN option covering the remaining 4 bytes
      h[3] = 4;
    }
    l4 = l3 + proto::kIpv6Header + ext;
  }
  uint32_t pay_off;
  if (l4p == proto::kUdp) {
    store_be16(p + l4, sport_);
    store_be16(p + l4 + 2, dport_);
    store_be16(p + l4 + 4, uint16_t(f.size() - l4));
    pay_off = l4 + proto::kUdpHeader;
  } else if (l4p == proto::kTcp) {
    store_be16(p + l4, sport_);
    store_be16(p + l4 + 2, dport_);
    store_be32(p + l4 + 4, seq_);
    store_be32(p + l4 + 8, ack_);
    uint32_t doff = proto::kTcpHeader + 4u * tcp_opt_words_;
    p[l4 + 12] = uint8_t((doff / 4) << 4);
    p[l4 + 13] = tcp_flags_;
    store_be16(p + l4 + 14, 65535);
    for (uint32_t i = proto::kTcpHeader; i < doff; ++i) p[l4 + i] = 1;  // NOP options
    pay_off = l4 + doff;
  } else {
    p[l4] = l4p == proto::kIcmp ? 8 : 128;  // echo request
    store_be16(p + l4 + 4, icmp_id_);
    store_be16(p + l4 + 6, icmp_seq_);
    pay_off = l4 + proto::kIcmpHeader;
  }
  for (uint32_t i = 0; i < pay; ++i) p[pay_off + i] = uint8_t(fill_ + i * 7);
  if (id_ && pay >= kPacketIdBytes) {
    std::memcpy(p + pay_off, kPacketIdMagic.data(), 4);
    store_be64(p + pay_off + 4, *id_);
    if (pay >= kPacketIdBytes + 8) store_be64(p + pay_off + pay - 8, *id_);
  }
  PacketLayout L = parse_packet(p, uint32_t(f.size()));
  fill_checksums(p, L);
  return f;
}

}  // namespace nfpark
