// AclRule: one 5-tuple firewall rule (src/dst prefix, src/dst port range, protocol, action), the
// rule-file parser, a reference linear-scan classifier and a generator of rule sets.
//
// Rule file, one rule per line, '#' starts a comment, blank lines ignored:
//   ACTION [src PREFIX|any] [dst PREFIX|any] [sport any|N|N-M] [dport any|N|N-M]
//          [proto any|tcp|udp|icmp|icmpv6|N]
//   deny  src 10.0.0.0/8  dst any  sport any  dport 80-443  proto tcp
// ACTION is allow or deny. Omitted fields are "any". src and dst must not mix IPv4 and IPv6; a
// rule with an IPv4 (IPv6) prefix applies to IPv4 (IPv6) packets only, one with neither to both.
// Packets that are neither TCP nor UDP have ports 0 for matching (ICMP ids are not ports).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/flow_key.h"
#include "nf/lpm_prefix.h"

namespace nfpark::nf {

enum class AclAction : uint8_t { kAllow = 0, kDeny = 1 };
std::string_view to_string(AclAction a);

struct AclRule {
  AclAction action = AclAction::kAllow;
  IpPrefix src, dst;  // family 0 = any
  uint16_t sport_lo = 0, sport_hi = 65535;
  uint16_t dport_lo = 0, dport_hi = 65535;
  uint8_t proto_lo = 0, proto_hi = 255;  // any, or lo == hi
  uint32_t line = 0;                     // source line (0 when generated)

  uint8_t family() const { return src.family ? src.family : dst.family; }  // 0 = both
  std::string to_string() const;                                           // in rule-file syntax
};

// The key a packet is classified by: FlowKey with ports zeroed unless TCP/UDP.
FlowKey acl_key(const FlowKey& k);
// True when rule `r` matches key `k` (an acl_key). The reference semantics.
bool rule_matches(const AclRule& r, const FlowKey& k);
// First-match linear scan: index of the first matching rule, or rules.size().
size_t linear_classify(std::span<const AclRule> rules, const FlowKey& k);

// Parses one line; returns false with `error` (no file/line prefix). Empty/comment lines give
// ok == true and is_rule == false.
bool parse_acl_line(std::string_view line, AclRule& out, bool& is_rule, std::string& error);
// Parses a whole file; errors are "FILE:LINE: what is wrong".
bool load_acl_file(const std::string& path, std::vector<AclRule>& out, std::string& error);
bool parse_acl_text(std::string_view text, std::string_view source_name, std::vector<AclRule>& out,
                    std::string& error);

// `n` deny rules whose sources lie in space that generated and real traffic do not use
// (IPv4 240.0.0.0/4, "reserved"; IPv6 100::/64, RFC 6666 discard-only), with varied
// destinations, ports and protocols, so a firewall with default allow passes generated traffic.
std::vector<AclRule> generate_passing_rules(size_t n, uint64_t seed);
// `n` random rules over the whole space (overlapping ranges, mixed actions): for tests/benches.
std::vector<AclRule> generate_random_rules(size_t n, uint64_t seed, bool ipv6 = false);

}  // namespace nfpark::nf
