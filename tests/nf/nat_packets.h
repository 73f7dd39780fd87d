// Frames the NAT tests need beyond PacketBuilder: ICMP errors quoting a datagram, IPv4
// fragments of a datagram, packets of other protocols — and checks that verify every checksum
// of a translated frame from scratch (outer IPv4, ICMP over the whole message, the quoted IPv4
// header, the quoted transport checksum when the whole quoted datagram is there, and a
// fragmented datagram's transport checksum over its reassembled payload).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "core/bytes.h"
#include "core/checksum.h"
#include "core/packet_builder.h"
#include "core/parse.h"

namespace nfpark::nf::testing {

using Frame = std::vector<uint8_t>;
constexpr uint32_t kL3 = 14;  // IPv4 header offset in an untagged frame

inline uint32_t ihl_of(const Frame& f) {
  return uint32_t(f[kL3] & 0x0F) * 4;
}
inline void fix_ipv4_checksum(Frame& f, uint32_t l3 = kL3) {
  store_be16(f.data() + l3 + 10, 0);
  store_be16(f.data() + l3 + 10, ipv4_header_checksum(f.data() + l3, uint32_t(f[l3] & 0xF) * 4));
}

// An ICMPv4 error (type, code) from `src` to `dst` (host order) quoting the first `quote` bytes
// of `inner`'s IPv4 packet (all of it when quote == 0), with valid checksums.
inline Frame icmp_error(uint32_t src, uint32_t dst, uint8_t type, uint8_t code, const Frame& inner,
                        uint32_t quote = 0) {
  const uint32_t inner_len = load_be16(inner.data() + kL3 + 2);
  const uint32_t q = quote ? std::min(quote, inner_len) : inner_len;
  Frame f = PacketBuilder().ipv4(src, dst).icmp_echo(0, 0).payload_size(q).build();
  uint8_t* icmp = f.data() + kL3 + 20;
  icmp[0] = type;
  icmp[1] = code;
  store_be32(icmp + 4, 0);  // unused (type 3 code 4 would carry the next-hop MTU here)
  std::copy_n(inner.begin() + kL3, q, icmp + 8);
  store_be16(icmp + 2, 0);
  store_be16(icmp + 2, csum_finish(csum_partial(icmp, 8 + q)));
  fix_ipv4_checksum(f);
  return f;
}

// The IPv4 fragments of `whole` (an untagged IPv4 frame): its IP payload cut into pieces of
// `chunk` bytes (a multiple of 8), each behind a copy of the IP header with MF/offset set.
inline std::vector<Frame> fragments(const Frame& whole, uint32_t chunk) {
  const uint32_t ihl = ihl_of(whole), total = load_be16(whole.data() + kL3 + 2);
  std::vector<Frame> out;
  for (uint32_t at = 0; at < total - ihl; at += chunk) {
    const uint32_t n = std::min(chunk, total - ihl - at);
    Frame f(whole.begin(), whole.begin() + kL3 + ihl);
    f.insert(f.end(), whole.begin() + kL3 + ihl + at, whole.begin() + kL3 + ihl + at + n);
    store_be16(f.data() + kL3 + 2, uint16_t(ihl + n));
    const bool more = at + n < total - ihl;
    store_be16(f.data() + kL3 + 6, uint16_t((more ? 0x2000 : 0) | (at / 8)));
    fix_ipv4_checksum(f);
    out.push_back(std::move(f));
  }
  return out;
}

// A frame of IP protocol `proto` (GRE 47, ESP 50, ...) with `payload` bytes after the header.
inline Frame other_proto(const char* src, const char* dst, uint8_t proto, uint32_t payload = 40) {
  Frame f = PacketBuilder().ipv4(src, dst).udp(1, 2).payload_size(payload - 8).build();
  f[kL3 + 9] = proto;
  fix_ipv4_checksum(f);
  return f;
}

// The whole-message ICMP checksum, the quoted IPv4 header's checksum and — when the quote
// holds the whole quoted datagram — its transport checksum, all recomputed from scratch.
inline ::testing::AssertionResult icmp_error_checksums_ok(const Frame& f) {
  const PacketLayout L = parse_packet(f.data(), uint32_t(f.size()));
  if (!L.ok() || L.l4_proto != proto::kIcmp) return ::testing::AssertionFailure() << "not ICMP";
  if (ipv4_header_checksum(f.data() + L.l3_off, ihl_of(f)) != load_be16(f.data() + L.l3_off + 10))
    return ::testing::AssertionFailure() << "outer IPv4 checksum";
  if (csum_fold(csum_partial(f.data() + L.l4_off, L.ip_end - L.l4_off)) != 0xFFFF)
    return ::testing::AssertionFailure() << "ICMP checksum";
  const uint32_t q = L.l4_off + 8, qihl = uint32_t(f[q] & 0xF) * 4;
  if (ipv4_header_checksum(f.data() + q, qihl) != load_be16(f.data() + q + 10))
    return ::testing::AssertionFailure() << "quoted IPv4 header checksum";
  if (q + load_be16(f.data() + q + 2) <= L.ip_end) {  // the whole datagram is quoted
    Frame inner(kL3, 0);
    store_be16(inner.data() + 12, proto::kEthIpv4);
    inner.insert(inner.end(), f.begin() + q, f.begin() + q + load_be16(f.data() + q + 2));
    const PacketLayout IL = parse_packet(inner.data(), uint32_t(inner.size()));
    if (!IL.ok() || !verify_checksums(inner.data(), IL))
      return ::testing::AssertionFailure() << "quoted transport checksum";
  }
  return ::testing::AssertionSuccess();
}

// Reassembles fragments (any order) into one frame and verifies its checksums from scratch.
inline ::testing::AssertionResult reassembled_checksums_ok(const std::vector<Frame>& frags) {
  std::vector<const Frame*> order;
  for (const Frame& f : frags) order.push_back(&f);
  std::sort(order.begin(), order.end(), [](const Frame* a, const Frame* b) {
    return (load_be16(a->data() + kL3 + 6) & 0x1FFF) < (load_be16(b->data() + kL3 + 6) & 0x1FFF);
  });
  Frame whole(order[0]->begin(), order[0]->begin() + kL3 + ihl_of(*order[0]));
  for (const Frame* f : order) {
    if (ipv4_header_checksum(f->data() + kL3, ihl_of(*f)) != load_be16(f->data() + kL3 + 10))
      return ::testing::AssertionFailure() << "fragment IPv4 checksum";
    if (f->size() < kL3 + 20 ||
        load_be32(f->data() + kL3 + 12) != load_be32(whole.data() + kL3 + 12) ||
        load_be32(f->data() + kL3 + 16) != load_be32(whole.data() + kL3 + 16))
      return ::testing::AssertionFailure() << "fragments disagree on the addresses";
    whole.insert(whole.end(), f->begin() + kL3 + ihl_of(*f), f->end());
  }
  store_be16(whole.data() + kL3 + 2, uint16_t(whole.size() - kL3));
  store_be16(whole.data() + kL3 + 6, 0);
  fix_ipv4_checksum(whole);
  const PacketLayout L = parse_packet(whole.data(), uint32_t(whole.size()));
  if (!L.ok() || !verify_checksums(whole.data(), L))
    return ::testing::AssertionFailure() << "reassembled transport checksum";
  return ::testing::AssertionSuccess();
}

}  // namespace nfpark::nf::testing
