// Traffic-side frames for the mode fuzzer, decided by the input: well-formed TCP/UDP over
// IPv4/IPv6 with 0-2 VLAN tags and any payload size, and everything an adversary or an odd
// capture can send — raw bytes, frames cut short of their IP length (header-only captures),
// DSCP 63, payloads that start with something that looks like a tag or a token (a fresh nfpark
// magic, the escape token, or the bytes of a tag or token the switch issued earlier: a replay or
// a guess), ICMP, fragments, and mutated frames.
#pragma once
#include <cstdint>
#include <vector>

#include "core/bytes.h"
#include "core/packet_builder.h"
#include "core/parse.h"
#include "fuzz/input.h"
#include "park/slicer_token.h"

namespace nfpark::fuzz {

inline std::vector<uint8_t> built_frame(Input& in, uint32_t id) {
  PacketBuilder b;
  const uint8_t shape = in.u8();
  const uint8_t flow = in.u8() & 0x0F;  // few flows: per-flow order is exercised
  for (int v = 0; v < (shape >> 6); ++v) b.vlan(uint16_t(1 + v), v ? 0x8100 : 0x88A8);
  if (shape & 1) {
    std::array<uint8_t, 16> s{}, d{};
    s[0] = 0x20, s[15] = flow, d[0] = 0x20, d[15] = 0xFE;
    b.ipv6(s, d);
    if (shape & 8) b.ipv6_ext_hop_by_hop();
  } else {
    b.ipv4(0x0A000000u | flow, 0x0A0000FEu);
    if (shape & 8) b.ipv4_options(uint8_t(1 + (shape >> 4) % 3));
  }
  const uint16_t sport = uint16_t(1000 + flow), dport = 80;
  switch ((shape >> 1) & 3) {
    case 0:
      b.udp(sport, dport);
      break;
    case 1:
      b.tcp(sport, dport);
      break;
    case 2:
      b.icmp_echo(sport, uint16_t(id));
      break;
    default:
      b.tcp(sport, dport, 0x18, id, 0, uint8_t(in.u8() % 4));
      break;
  }
  if (shape & 0x10) b.dscp(63);
  const uint32_t sizes[] = {0, 1, 7, 8, 24, 100, 159, 160, 161, 352, 400, 1200, 1460, 1700};
  const uint32_t pay = (shape & 0x20) ? in.range(0, 1800) : sizes[in.u8() % 14];
  return b.payload_size(pay).packet_id(id).fill(uint8_t(id)).build();
}

// Bytes that look like a tag or a token: a fresh nfpark magic/version with any fields, the
// escape token, or a tag/token the switch issued earlier (`issued`, newest last).
inline std::vector<uint8_t> lookalike(Input& in, const std::vector<std::vector<uint8_t>>& issued) {
  const uint8_t k = in.u8() % 4;
  if (k == 0 && !issued.empty()) return issued[issued.size() - 1 - in.u8() % issued.size()];
  if (k == 1) {
    std::vector<uint8_t> t(8);
    store_be64(t.data(), park::kEscapeToken);
    return t;
  }
  std::vector<uint8_t> t = in.bytes(k == 2 ? 24 : 8);
  if (k == 2) t[0] = 0x4E, t[1] = uint8_t(0x10 | (t[1] & 0x0F)), t[3] = 0;
  return t;
}

// One traffic frame (id: its number in this input).
inline std::vector<uint8_t> traffic_frame(Input& in, uint32_t id,
                                          const std::vector<std::vector<uint8_t>>& issued) {
  const uint8_t kind = in.u8() % 8;
  if (kind == 0) return in.bytes(in.range(0, 200));  // anything at all
  std::vector<uint8_t> f = built_frame(in, id);
  const PacketLayout L = parse_packet(f.data(), uint32_t(f.size()));
  switch (kind) {
    case 1: {  // cut short of its IP length: a header-only capture, or a lying length field
      const uint32_t keep = L.ok() ? L.payload_off + in.range(0, 64) : in.range(0, 80);
      if (keep < f.size()) f.resize(keep);
      break;
    }
    case 2:  // the payload starts with something that looks like a tag or a token
      if (L.ok()) {
        std::vector<uint8_t> t = lookalike(in, issued);
        for (size_t i = 0; i < t.size() && L.payload_off + i < f.size(); ++i)
          f[L.payload_off + i] = t[i];
        if (in.flag()) {  // and cut short of its IP length (NFSlicer's "sliced" look)
          const size_t keep = L.payload_off + t.size() + in.range(0, 32);
          if (keep < f.size()) f.resize(keep);
        }
      }
      break;
    case 3:  // a fragment (IPv4: MF or an offset)
      if (L.ok() && L.ip_version == 4) f[L.l3_off + 6] |= uint8_t(in.flag() ? 0x20 : 0x01);
      break;
    case 4:  // a few bytes changed anywhere
      for (int n = in.range(1, 4); n > 0 && !f.empty(); --n) f[in.u16() % f.size()] = in.u8();
      break;
    case 5:  // an Ethernet trailer: bytes past the IP packet's end
      f.resize(f.size() + in.range(1, 40), 0xEE);
      break;
    default:
      break;  // as built
  }
  return f;
}

}  // namespace nfpark::fuzz
