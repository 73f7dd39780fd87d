// Nat and IPv4 fragments: a first fragment leaves a note, later fragments follow it
// (nat_frag.h holds the table and the theory).
#include <algorithm>
#include <memory>

#include "core/bytes.h"
#include "nf/nat.h"
#include "nf/rewrite.h"

namespace nfpark::nf {

void Nat::remember_first(const PacketView& p, uint32_t src, uint32_t dst, bool passed, Nanos now) {
  const uint8_t* ip = p.data + p.layout.l3_off;
  const NatFragments::Key key{src, dst, load_be16(ip + 4), p.layout.l4_proto};
  const uint32_t nsrc = load_be32(ip + 12), ndst = load_be32(ip + 16);
  using A = NatFragments::Action;
  const A a = !passed ? A::kDrop : nsrc != src ? A::kSrc : ndst != dst ? A::kDst : A::kKeep;
  frags_.record(key, a, a == A::kSrc ? nsrc : ndst, now);
}

// A later fragment (no ports) does what its first fragment did, found by (src, dst, proto, id).
bool Nat::follow_first(PacketView& p, Nanos now) {
  const uint8_t* ip = p.data + p.layout.l3_off;
  const uint32_t src = load_be32(ip + 12), dst = load_be32(ip + 16);
  const uint8_t pr = p.layout.l4_proto;
  int ext;
  if (direction(src, dst, ext) == Dir::kPass) {
    ++passthrough_;
    return true;
  }
  if (pr != proto::kTcp && pr != proto::kUdp && pr != proto::kIcmp) return other(p);
  const NatFragments::Key key{src, dst, load_be16(ip + 4), pr};
  NatFragments::Action a;
  uint32_t addr = 0;
  switch (frags_.find(key, now, a, addr)) {
    case NatFragments::Found::kMissing:
      ++drop_frag_no_first_;
      return false;
    case NatFragments::Found::kExpired:
      ++drop_frag_expired_;
      return false;
    case NatFragments::Found::kLive:
      break;
  }
  if (!(load_be16(ip + 6) & 0x2000)) frags_.finish(key);  // the last fragment (MF = 0)
  switch (a) {
    case NatFragments::Action::kSrc:
      set_ipv4_src(p, addr);
      break;
    case NatFragments::Action::kDst:
      set_ipv4_dst(p, addr);
      break;
    case NatFragments::Action::kDrop:
      ++drop_frag_first_dropped_;
      return false;
    default:
      break;
  }
  ++frag_followed_;
  return true;
}

}  // namespace nfpark::nf
