// FlowKey: the 5-tuple (IPv4 or IPv6 addresses, L4 ports or ICMP id, protocol) of a packet,
// with a fast hash and a symmetric variant (both directions of a connection hash alike).
// IPv4 addresses sit in the last four bytes of the 16-byte fields, the rest zero, so one
// key type serves both families. ICMP echo uses its identifier as both ports.
#pragma once
#include <array>
#include <cstdint>
#include <cstring>
#include <functional>

#include "core/parse.h"

namespace nfpark {

struct FlowKey {
  std::array<uint8_t, 16> src{};
  std::array<uint8_t, 16> dst{};
  uint16_t sport = 0;  // host order
  uint16_t dport = 0;  // host order
  uint8_t proto = 0;
  uint8_t ip_version = 0;
  uint16_t pad_ = 0;  // keeps the key 40 bytes with no indeterminate padding

  bool operator==(const FlowKey& o) const { return std::memcmp(this, &o, sizeof *this) == 0; }
  FlowKey reversed() const;
  uint64_t hash() const;            // direction-sensitive
  uint64_t symmetric_hash() const;  // same value for the key and its reverse
};
static_assert(sizeof(FlowKey) == 40);

// Extracts the key of a parsed packet. Returns false when the packet has no usable L3 header.
// Packets without ports (non-first fragments, other protocols) get ports 0.
bool extract_flow_key(const uint8_t* pkt, const PacketLayout& L, FlowKey& key);

// 64-bit mixing of arbitrary bytes (fast, not cryptographic).
uint64_t hash_bytes(const void* data, size_t len, uint64_t seed = 0);
inline uint64_t mix64(uint64_t x) {  // splitmix64 finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

struct FlowKeyHash {
  size_t operator()(const FlowKey& k) const { return size_t(k.hash()); }
};

// The flow tables' hash of a FlowKey (NF flow tables, Reframer's flow id). IPv4 keys (the
// common case) pack into two words hashed with one mix64 (~9 ns instead of ~37 ns for
// FlowKey::hash over 40 bytes, measured by nf_bench); IPv6 keys use FlowKey::hash. Not keyed: an
// attacker who knows it can aim flows at one bucket pair (insert_failed counts the result);
// seed it per process if that matters.
struct FlowKeyHash64 {
  // An IPv4 key's hash from its fields: addresses as loaded from the packet (network byte order
  // in memory), ports in host order. For callers that never build the FlowKey (Reframer's
  // classify()); equal to operator() on the key.
  static uint64_t v4(uint32_t src_raw, uint32_t dst_raw, uint16_t sport, uint16_t dport,
                     uint8_t proto) {
    const uint64_t w0 = uint64_t(src_raw) << 32 | dst_raw;
    const uint64_t w1 = uint64_t(sport) << 32 | uint64_t(dport) << 16 | proto;
    return mix64(w0 ^ (w1 * 0x9E3779B97F4A7C15ULL) ^ 0x5851F42D4C957F2DULL);
  }
  uint64_t operator()(const FlowKey& k) const {
    if (k.ip_version != 4) return k.hash();
    uint32_t s, d;
    std::memcpy(&s, k.src.data() + 12, 4);
    std::memcpy(&d, k.dst.data() + 12, 4);
    return v4(s, d, k.sport, k.dport, k.proto);
  }
};

}  // namespace nfpark
