#include "nf/lpm_prefix.h"

#include <arpa/inet.h>

#include <charconv>
#include <cstdio>
#include <cstring>

namespace nfpark::nf {

void mask_prefix(uint8_t* addr, int bytes, int len) {
  if (len < 0) len = 0;
  const int full = len / 8;  // bytes kept whole
  if (full >= bytes) return;
  addr[full] &= uint8_t(0xFF00 >> (len % 8));
  std::memset(addr + full + 1, 0, size_t(bytes - full - 1));
}

bool parse_prefix(std::string_view text, IpPrefix& out, std::string& error) {
  out = IpPrefix{};
  if (text == "any" || text == "*") return true;
  std::string_view addr = text, len_text;
  if (auto slash = text.find('/'); slash != std::string_view::npos) {
    addr = text.substr(0, slash);
    len_text = text.substr(slash + 1);
  }
  std::string a(addr);
  if (a.find(':') != std::string::npos) {
    if (inet_pton(AF_INET6, a.c_str(), out.addr.data()) != 1) {
      error = "bad IPv6 address '" + a + "'";
      return false;
    }
    out.family = 6;
  } else {
    if (inet_pton(AF_INET, a.c_str(), out.addr.data()) != 1) {
      error = "bad IPv4 address '" + a + "' (expected a.b.c.d[/len], an IPv6 prefix or any)";
      return false;
    }
    out.family = 4;
  }
  int max_len = out.family == 4 ? 32 : 128, len = max_len;
  if (!len_text.empty() || addr.size() != text.size()) {
    auto [p, ec] = std::from_chars(len_text.data(), len_text.data() + len_text.size(), len);
    if (ec != std::errc() || p != len_text.data() + len_text.size() || len < 0 || len > max_len) {
      error =
          "bad prefix length '" + std::string(len_text) + "' (0.." + std::to_string(max_len) + ")";
      return false;
    }
  }
  out.len = uint8_t(len);
  mask_prefix(out.addr.data(), out.family == 4 ? 4 : 16, len);
  return true;
}

bool parse_mac(std::string_view text, MacAddr& out, std::string& error) {
  unsigned b[6];
  char tail;
  std::string s(text);
  if (std::sscanf(s.c_str(), "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
                  &tail) != 6 ||
      s.size() != 17) {
    error = "bad MAC address '" + s + "' (expected six hex bytes like 02:00:00:00:00:0a)";
    return false;
  }
  for (int i = 0; i < 6; ++i) out[i] = uint8_t(b[i]);
  return true;
}

std::string format_mac(const MacAddr& m) {
  char buf[18];
  std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4],
                m[5]);
  return buf;
}

}  // namespace nfpark::nf
