// PacketBuilder: builds valid frames (Ethernet, optional VLAN tags, IPv4/IPv6, TCP/UDP/ICMP,
// payload) with correct lengths and checksums — for the trace generator and for tests.
//
//   auto pkt = PacketBuilder().vlan(7).ipv4("10.0.0.1", "10.0.0.2").udp(1234, 80)
//                  .payload_size(200).packet_id(42).build();
//
// A packet id, when set, is written in the payload as the 4-byte magic "NFPK" followed by the
// id as a big-endian 64-bit number at offset 0, and again as 8 bytes at the payload's end (when
// the payload has room for both), so either half of a split payload identifies its packet.
// The IPv4 identification field (IPv6: flow label) carries the id's low bits, so a header can be
// tied to its payload.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace nfpark {

constexpr std::array<uint8_t, 4> kPacketIdMagic = {'N', 'F', 'P', 'K'};
constexpr uint32_t kPacketIdBytes = 12;  // magic + be64 id

// Reads the generator's packet id from an L4 payload; nullopt if absent.
std::optional<uint64_t> read_packet_id(const uint8_t* payload, uint32_t len);
// Reads the id copy at the payload's end (present when len >= 20).
std::optional<uint64_t> read_packet_id_tail(const uint8_t* payload, uint32_t len);

class PacketBuilder {
 public:
  PacketBuilder& eth(std::array<uint8_t, 6> dst, std::array<uint8_t, 6> src);
  PacketBuilder& vlan(uint16_t vid, uint16_t tpid = 0x8100);  // call up to twice (outer first)
  PacketBuilder& ipv4(std::string_view src, std::string_view dst, uint8_t ttl = 64);
  PacketBuilder& ipv4(uint32_t src, uint32_t dst, uint8_t ttl = 64);  // host order
  PacketBuilder& ipv6(std::string_view src, std::string_view dst, uint8_t hop_limit = 64);
  PacketBuilder& ipv6(const std::array<uint8_t, 16>& src, const std::array<uint8_t, 16>& dst,
                      uint8_t hop_limit = 64);
  PacketBuilder& ipv4_options(uint8_t words);  // adds `words`*4 bytes of NOP options
  PacketBuilder& ipv6_ext_hop_by_hop();        // adds an 8-byte hop-by-hop header
  PacketBuilder& udp(uint16_t sport, uint16_t dport);
  PacketBuilder& tcp(uint16_t sport, uint16_t dport, uint8_t flags = 0x18, uint32_t seq = 1,
                     uint32_t ack = 0, uint8_t option_words = 0);
  PacketBuilder& icmp_echo(uint16_t id, uint16_t seq);
  PacketBuilder& dscp(uint8_t v);
  PacketBuilder& payload_size(uint32_t n);       // L4 payload bytes (filled with a pattern)
  PacketBuilder& frame_size(uint32_t n);         // total frame bytes; payload derived
  PacketBuilder& packet_id(uint64_t id);
  PacketBuilder& fill(uint8_t seed);             // payload pattern seed

  std::vector<uint8_t> build() const;
  uint32_t header_bytes() const;                 // L2..L4 header length of what build() makes

 private:
  std::array<uint8_t, 6> dmac_ = {0x02, 0, 0, 0, 0, 0x02}, smac_ = {0x02, 0, 0, 0, 0, 0x01};
  std::array<uint16_t, 2> vid_{}, tpid_{};
  uint8_t vlans_ = 0;
  uint8_t ipv_ = 4, ttl_ = 64, dscp_ = 0, ipv4_opt_words_ = 0;
  bool v6_hbh_ = false;
  std::array<uint8_t, 16> src_{}, dst_{};
  uint8_t l4_ = 17;
  uint16_t sport_ = 1, dport_ = 2, icmp_id_ = 0, icmp_seq_ = 0;
  uint8_t tcp_flags_ = 0x18, tcp_opt_words_ = 0;
  uint32_t seq_ = 1, ack_ = 0;
  std::optional<uint32_t> payload_, frame_;
  std::optional<uint64_t> id_;
  uint8_t fill_ = 0;
};

}  // namespace nfpark
