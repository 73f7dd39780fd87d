// IP prefixes and MAC addresses as text: the parsing helpers shared by Router and Firewall.
//
//   "10.0.0.0/8", "10.1.2.3" (= /32), "2001:db8::/32", "::/0", "any" (family 0, length 0)
//   "02:00:00:00:00:0a"
// Bits of the address beyond the prefix length are cleared. Errors say what is wrong.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace nfpark::nf {

using MacAddr = std::array<uint8_t, 6>;

struct IpPrefix {
  uint8_t family = 0;              // 4, 6, or 0 for "any" (matches both families)
  uint8_t len = 0;                 // prefix length in bits
  std::array<uint8_t, 16> addr{};  // IPv4 uses the first 4 bytes, network order
};

bool parse_prefix(std::string_view text, IpPrefix& out, std::string& error);
bool parse_mac(std::string_view text, MacAddr& out, std::string& error);
std::string format_mac(const MacAddr& mac);
// Clears the bits of `addr` (of `bytes` bytes) past `len`.
void mask_prefix(uint8_t* addr, int bytes, int len);

}  // namespace nfpark::nf
