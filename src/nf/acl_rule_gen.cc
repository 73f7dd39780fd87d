// Rule-set generators and the rule printer (declared in acl_rule.h).
#include <arpa/inet.h>

#include <cstring>

#include "core/parse.h"
#include "nf/acl_rule.h"

namespace nfpark::nf {

namespace {
struct Rng {
  uint64_t s;
  uint64_t next() { return mix64(s += 0x9E3779B97F4A7C15ULL); }
  uint32_t below(uint32_t n) { return uint32_t(next() % n); }
};

void set_v4(IpPrefix& p, uint32_t addr, int len) {
  p.family = 4;
  p.len = uint8_t(len);
  p.addr = {};
  p.addr[0] = uint8_t(addr >> 24), p.addr[1] = uint8_t(addr >> 16);
  p.addr[2] = uint8_t(addr >> 8), p.addr[3] = uint8_t(addr);
  mask_prefix(p.addr.data(), 4, len);
}

void random_ports(Rng& g, uint16_t& lo, uint16_t& hi) {
  switch (g.below(10)) {
    case 0:
    case 1:
    case 2:
    case 3:
      lo = 0, hi = 65535;
      break;  // any
    case 4:
    case 5:
      lo = hi = uint16_t(g.below(1024));
      break;  // well-known
    case 6:
      lo = 0, hi = 1023;
      break;
    case 7:
      lo = 1024, hi = 65535;
      break;
    default: {  // arbitrary range
      uint16_t a = uint16_t(g.below(65536)), b = uint16_t(g.below(65536));
      lo = a < b ? a : b, hi = a < b ? b : a;
    }
  }
}

void random_proto(Rng& g, AclRule& r) {
  uint32_t x = g.below(10);
  uint8_t p = x < 4 ? proto::kTcp : x < 7 ? proto::kUdp : x < 8 ? proto::kIcmp : 0;
  if (x >= 8)
    r.proto_lo = 0, r.proto_hi = 255;
  else
    r.proto_lo = r.proto_hi = p;
}
}  // namespace

std::vector<AclRule> generate_passing_rules(size_t n, uint64_t seed) {
  Rng g{seed};
  std::vector<AclRule> out(n);
  for (auto& r : out) {
    r.action = AclAction::kDeny;
    if (g.below(8) == 0) {  // IPv6: sources in 100::/64 (RFC 6666 discard-only)
      r.src.family = 6;
      r.src.len = uint8_t(64 + g.below(65));
      r.src.addr = {0x01, 0x00};
      for (int i = 8; i < 16; ++i) r.src.addr[size_t(i)] = uint8_t(g.next());
      mask_prefix(r.src.addr.data(), 16, r.src.len);
    } else {  // IPv4: sources in 240.0.0.0/4 (reserved, RFC 1112 §4)
      set_v4(r.src, 0xF0000000u | uint32_t(g.next() & 0x0FFFFFFF), 8 + int(g.below(25)));
      if (g.below(2)) set_v4(r.dst, uint32_t(g.next()), int(g.below(33)));
    }
    random_ports(g, r.sport_lo, r.sport_hi);
    random_ports(g, r.dport_lo, r.dport_hi);
    random_proto(g, r);
  }
  return out;
}

std::vector<AclRule> generate_random_rules(size_t n, uint64_t seed, bool ipv6) {
  Rng g{seed};
  static constexpr int kLens[] = {0, 8, 12, 16, 20, 24, 28, 32};
  std::vector<AclRule> out(n);
  for (auto& r : out) {
    r.action = g.below(2) ? AclAction::kDeny : AclAction::kAllow;
    for (IpPrefix* p : {&r.src, &r.dst}) {
      if (g.below(5) == 0) continue;  // any
      // Addresses from a small pool of /8s so that prefixes nest and overlap.
      uint32_t base = (10u + g.below(4)) << 24 | uint32_t(g.next() & 0x00FFFFFF);
      if (!ipv6) {
        set_v4(*p, base, kLens[g.below(8)]);
      } else {
        p->family = 6;
        p->len = uint8_t(kLens[g.below(8)] * 4);
        p->addr = {0x20, 0x01, 0x0d, 0xb8};
        std::memcpy(p->addr.data() + 4, &base, 4);
        uint64_t lo = g.next();
        std::memcpy(p->addr.data() + 8, &lo, 8);
        mask_prefix(p->addr.data(), 16, p->len);
      }
    }
    random_ports(g, r.sport_lo, r.sport_hi);
    random_ports(g, r.dport_lo, r.dport_hi);
    random_proto(g, r);
  }
  return out;
}

static std::string prefix_text(const IpPrefix& p) {
  if (p.family == 0) return "any";
  char buf[64];
  inet_ntop(p.family == 4 ? AF_INET : AF_INET6, p.addr.data(), buf, sizeof buf);
  return std::string(buf) + "/" + std::to_string(p.len);
}

static std::string ports_text(uint16_t lo, uint16_t hi) {
  if (lo == 0 && hi == 65535) return "any";
  return lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi);
}

std::string AclRule::to_string() const {
  std::string s(nf::to_string(action));
  s += " src " + prefix_text(src) + " dst " + prefix_text(dst);
  s += " sport " + ports_text(sport_lo, sport_hi) + " dport " + ports_text(dport_lo, dport_hi);
  s += " proto " +
       (proto_lo == 0 && proto_hi == 255 ? std::string("any") : std::to_string(proto_lo));
  return s;
}

}  // namespace nfpark::nf
