#include "core/flow_key.h"

#include <algorithm>
#include <tuple>

#include "core/bytes.h"

namespace nfpark {

bool extract_flow_key(const uint8_t* pkt, const PacketLayout& L, FlowKey& k) {
  k = FlowKey{};
  if (L.status != ParseStatus::kOk || L.ip_version == 0) return false;
  const uint8_t* ip = pkt + L.l3_off;
  k.ip_version = L.ip_version;
  k.proto = L.l4_proto;
  if (L.ip_version == 4) {
    std::memcpy(k.src.data() + 12, ip + 12, 4);
    std::memcpy(k.dst.data() + 12, ip + 16, 4);
  } else {
    std::memcpy(k.src.data(), ip + 8, 16);
    std::memcpy(k.dst.data(), ip + 24, 16);
  }
  if (L.l4_off) {
    const uint8_t* l4 = pkt + L.l4_off;
    if (L.has_ports()) {
      k.sport = load_be16(l4);
      k.dport = load_be16(l4 + 2);
    } else if (L.l4_proto == proto::kIcmp || L.l4_proto == proto::kIcmpV6) {
      k.sport = k.dport = load_be16(l4 + 4);  // echo identifier
    }
  }
  return true;
}

FlowKey FlowKey::reversed() const {
  FlowKey r = *this;
  std::swap(r.src, r.dst);
  std::swap(r.sport, r.dport);
  return r;
}

uint64_t hash_bytes(const void* data, size_t len, uint64_t seed) {
  // One multiply-xor per 8-byte word and a single strong finaliser: a few ns for a FlowKey.
  const uint8_t* p = static_cast<const uint8_t*>(data);
  uint64_t h = seed ^ (0x9E3779B97F4A7C15ULL * (len + 1));
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdULL;
    h ^= h >> 29;
  }
  if (i < len) {
    uint64_t w = 0;
    std::memcpy(&w, p + i, len - i);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
  }
  return mix64(h);
}

uint64_t FlowKey::hash() const { return hash_bytes(this, sizeof *this); }

uint64_t FlowKey::symmetric_hash() const {
  // Order the two endpoints canonically, then hash: a key and its reverse give the same input.
  bool swap = std::tie(src, sport) > std::tie(dst, dport);
  return swap ? reversed().hash() : hash();
}

}  // namespace nfpark
