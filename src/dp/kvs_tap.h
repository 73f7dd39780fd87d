// KVS on a kernel TAP interface (DPDK's net_tap): the port spec that creates it, and the
// kernel side's IPv4 configuration, so that local programs reach the server over UDP.
#pragma once
#include <cstdint>
#include <string>

namespace nfpark::dp {

// "A.B.C.D/N" -> address (host order) and prefix length; false on anything else.
bool parse_ipv4_prefix(const std::string& s, uint32_t& addr, uint8_t& prefix);
bool parse_ipv4(const std::string& s, uint32_t& addr);
std::string ipv4_to_string(uint32_t addr);

// The port spec of a net_tap device whose kernel interface is `ifname`.
std::string tap_port_spec(const std::string& ifname);
// Gives the kernel interface `ifname` the address addr/prefix, brings it up and turns IPv6
// off on it (the server speaks IPv4 only; this spares it the kernel's IPv6 chatter).
// Needs CAP_NET_ADMIN. False with `err` naming the step that failed.
bool tap_configure(const std::string& ifname, uint32_t addr, uint8_t prefix, std::string& err);

}  // namespace nfpark::dp
