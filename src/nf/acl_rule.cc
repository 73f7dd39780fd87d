#include "nf/acl_rule.h"

#include <charconv>
#include <fstream>
#include <sstream>

#include "core/parse.h"

namespace nfpark::nf {

std::string_view to_string(AclAction a) {
  return a == AclAction::kAllow ? "allow" : "deny";
}

FlowKey acl_key(const FlowKey& k) {
  FlowKey r = k;
  if (k.proto != proto::kTcp && k.proto != proto::kUdp) r.sport = r.dport = 0;
  return r;
}

static bool prefix_matches(const IpPrefix& p, const std::array<uint8_t, 16>& a, uint8_t version) {
  if (p.family == 0) return true;
  if (p.family != version) return false;
  const uint8_t* addr = version == 4 ? a.data() + 12 : a.data();  // FlowKey keeps v4 at the end
  int full = p.len / 8, rest = p.len % 8;
  for (int i = 0; i < full; ++i)
    if (addr[i] != p.addr[size_t(i)]) return false;
  return rest == 0 || ((addr[full] ^ p.addr[size_t(full)]) & uint8_t(0xFF << (8 - rest))) == 0;
}

bool rule_matches(const AclRule& r, const FlowKey& k) {
  return prefix_matches(r.src, k.src, k.ip_version) && prefix_matches(r.dst, k.dst, k.ip_version) &&
         k.sport >= r.sport_lo && k.sport <= r.sport_hi && k.dport >= r.dport_lo &&
         k.dport <= r.dport_hi && k.proto >= r.proto_lo && k.proto <= r.proto_hi;
}

size_t linear_classify(std::span<const AclRule> rules, const FlowKey& k) {
  for (size_t i = 0; i < rules.size(); ++i)
    if (rule_matches(rules[i], k)) return i;
  return rules.size();
}

static bool parse_uint(std::string_view s, uint32_t max, uint32_t& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && out <= max;
}

static bool parse_ports(std::string_view s, uint16_t& lo, uint16_t& hi, std::string& error) {
  if (s == "any" || s == "*") {
    lo = 0, hi = 65535;
    return true;
  }
  auto dash = s.find('-');
  uint32_t a, b;
  bool ok = dash == std::string_view::npos ? (parse_uint(s, 65535, a) && (b = a, true))
                                           : parse_uint(s.substr(0, dash), 65535, a) &&
                                                 parse_uint(s.substr(dash + 1), 65535, b);
  if (!ok || a > b) {
    error = "bad port range '" + std::string(s) +
            "' (expected any, N or N-M with 0 <= N <= M <= 65535)";
    return false;
  }
  lo = uint16_t(a), hi = uint16_t(b);
  return true;
}

static bool parse_proto(std::string_view s, AclRule& r, std::string& error) {
  uint32_t v = 0;
  if (s == "any" || s == "*") {
    r.proto_lo = 0, r.proto_hi = 255;
    return true;
  }
  if (s == "tcp")
    v = proto::kTcp;
  else if (s == "udp")
    v = proto::kUdp;
  else if (s == "icmp")
    v = proto::kIcmp;
  else if (s == "icmpv6")
    v = proto::kIcmpV6;
  else if (!parse_uint(s, 255, v)) {
    error =
        "bad protocol '" + std::string(s) + "' (expected any, tcp, udp, icmp, icmpv6 or 0..255)";
    return false;
  }
  r.proto_lo = r.proto_hi = uint8_t(v);
  return true;
}

bool parse_acl_line(std::string_view line, AclRule& r, bool& is_rule, std::string& error) {
  r = AclRule{};
  is_rule = false;
  if (auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
  std::vector<std::string_view> tok;
  for (size_t i = 0; i < line.size();) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
    if (j > i) tok.push_back(line.substr(i, j - i));
    i = j;
  }
  if (tok.empty()) return true;
  if (tok[0] == "allow")
    r.action = AclAction::kAllow;
  else if (tok[0] == "deny")
    r.action = AclAction::kDeny;
  else {
    error = "unknown action '" + std::string(tok[0]) + "' (expected allow or deny)";
    return false;
  }
  unsigned seen = 0;
  static constexpr std::string_view kKeys[] = {"src", "dst", "sport", "dport", "proto"};
  for (size_t i = 1; i < tok.size(); i += 2) {
    size_t k = 0;
    while (k < 5 && kKeys[k] != tok[i]) ++k;
    if (k == 5) {
      error =
          "unknown field '" + std::string(tok[i]) + "' (expected src, dst, sport, dport, proto)";
      return false;
    }
    if (seen & (1u << k)) {
      error = "field '" + std::string(tok[i]) + "' given twice";
      return false;
    }
    seen |= 1u << k;
    if (i + 1 >= tok.size()) {
      error = "field '" + std::string(tok[i]) + "' has no value";
      return false;
    }
    std::string_view v = tok[i + 1];
    bool ok = k == 0   ? parse_prefix(v, r.src, error)
              : k == 1 ? parse_prefix(v, r.dst, error)
              : k == 2 ? parse_ports(v, r.sport_lo, r.sport_hi, error)
              : k == 3 ? parse_ports(v, r.dport_lo, r.dport_hi, error)
                       : parse_proto(v, r, error);
    if (!ok) {
      error = std::string(kKeys[k]) + ": " + error;
      return false;
    }
  }
  if (r.src.family && r.dst.family && r.src.family != r.dst.family) {
    error = "src and dst mix IPv4 and IPv6";
    return false;
  }
  is_rule = true;
  return true;
}

bool parse_acl_text(std::string_view text, std::string_view source, std::vector<AclRule>& out,
                    std::string& error) {
  out.clear();
  uint32_t line_no = 0;
  for (size_t pos = 0; pos <= text.size();) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    ++line_no;
    AclRule r;
    bool is_rule;
    std::string e;
    if (!parse_acl_line(text.substr(pos, nl - pos), r, is_rule, e)) {
      error = std::string(source) + ":" + std::to_string(line_no) + ": " + e;
      return false;
    }
    if (is_rule) {
      r.line = line_no;
      out.push_back(r);
    }
    pos = nl + 1;
  }
  return true;
}

bool load_acl_file(const std::string& path, std::vector<AclRule>& out, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = path + ": cannot open the rule file";
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_acl_text(ss.str(), path, out, error);
}

}  // namespace nfpark::nf
