// NoSplitFilter: traffic that must never be split (sent whole to the NF), as QUEUE-MEM's control
// plane offers: destination prefixes, L4 destination ports and protocols.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/parse.h"

namespace nfpark::park {

struct Prefix {
  uint8_t ip_version = 4;
  std::array<uint8_t, 16> addr{};  // IPv4 in the first 4 bytes
  uint8_t len = 0;
  bool contains(const uint8_t* a, uint8_t version) const;
};
// Parses "10.0.0.0/8" or "2001:db8::/32"; returns false with `error` set on bad input.
bool parse_prefix(std::string_view s, Prefix& p, std::string& error);

struct NoSplitFilter {
  std::vector<Prefix> dst_prefixes;
  std::vector<uint16_t> dst_ports;
  std::vector<uint8_t> protocols;
  bool empty() const { return dst_prefixes.empty() && dst_ports.empty() && protocols.empty(); }
  bool match(const uint8_t* pkt, const PacketLayout& L) const;
};

}  // namespace nfpark::park
