#include "park/no_split.h"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#include "core/bytes.h"

namespace nfpark::park {

bool Prefix::contains(const uint8_t* a, uint8_t version) const {
  if (version != ip_version) return false;
  uint32_t full = len / 8, rest = len % 8;
  if (std::memcmp(a, addr.data(), full) != 0) return false;
  if (!rest) return true;
  uint8_t mask = uint8_t(0xFF << (8 - rest));
  return (a[full] & mask) == (addr[full] & mask);
}

bool parse_prefix(std::string_view s, Prefix& p, std::string& error) {
  p = Prefix{};
  auto slash = s.find('/');
  std::string addr(s.substr(0, slash));
  bool v6 = addr.find(':') != std::string::npos;
  p.ip_version = v6 ? 6 : 4;
  if (inet_pton(v6 ? AF_INET6 : AF_INET, addr.c_str(), p.addr.data()) != 1) {
    error = "'" + std::string(s) + "' is not an IPv4/IPv6 prefix (expected e.g. 10.0.0.0/8)";
    return false;
  }
  unsigned max = v6 ? 128 : 32, len = max;
  if (slash != std::string_view::npos) {
    auto t = s.substr(slash + 1);
    auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), len);
    if (ec != std::errc() || ptr != t.data() + t.size() || len > max) {
      error = "'" + std::string(s) + "': prefix length must be 0.." + std::to_string(max);
      return false;
    }
  }
  p.len = uint8_t(len);
  return true;
}

bool NoSplitFilter::match(const uint8_t* pkt, const PacketLayout& L) const {
  if (!protocols.empty() &&
      std::find(protocols.begin(), protocols.end(), L.l4_proto) != protocols.end())
    return true;
  if (!dst_ports.empty() && L.has_ports() &&
      std::find(dst_ports.begin(), dst_ports.end(), load_be16(pkt + L.l4_off + 2)) !=
          dst_ports.end())
    return true;
  const uint8_t* dst = pkt + L.l3_off + (L.ip_version == 4 ? 16 : 24);
  for (const auto& p : dst_prefixes)
    if (p.contains(dst, L.ip_version)) return true;
  return false;
}

}  // namespace nfpark::park
