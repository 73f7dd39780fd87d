#include "dp/kvs_tap.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace nfpark::dp {

bool parse_ipv4(const std::string& s, uint32_t& addr) {
  in_addr a{};
  if (inet_pton(AF_INET, s.c_str(), &a) != 1) return false;
  addr = ntohl(a.s_addr);
  return true;
}

bool parse_ipv4_prefix(const std::string& s, uint32_t& addr, uint8_t& prefix) {
  const size_t slash = s.find('/');
  if (slash == std::string::npos || !parse_ipv4(s.substr(0, slash), addr)) return false;
  const std::string p = s.substr(slash + 1);
  if (p.empty() || p.size() > 2 || p.find_first_not_of("0123456789") != std::string::npos)
    return false;
  const int n = std::stoi(p);
  if (n < 1 || n > 30) return false;  // room for the kernel side and the server
  prefix = uint8_t(n);
  return true;
}

std::string ipv4_to_string(uint32_t addr) {
  char b[INET_ADDRSTRLEN];
  in_addr a{htonl(addr)};
  inet_ntop(AF_INET, &a, b, sizeof b);
  return b;
}

std::string tap_port_spec(const std::string& ifname) {
  return "vdev:net_tap_" + ifname + ",iface=" + ifname;
}

bool tap_configure(const std::string& ifname, uint32_t addr, uint8_t prefix, std::string& err) {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) return (err = std::string("socket: ") + std::strerror(errno)), false;
  ifreq r{};
  std::snprintf(r.ifr_name, IFNAMSIZ, "%s", ifname.c_str());
  auto set_addr = [&](unsigned long req, uint32_t v, const char* what) {
    auto* sin = reinterpret_cast<sockaddr_in*>(&r.ifr_addr);
    std::memset(sin, 0, sizeof *sin);
    sin->sin_family = AF_INET;
    sin->sin_addr.s_addr = htonl(v);
    if (ioctl(fd, req, &r) == 0) return true;
    err = "tap " + ifname + ": cannot set the " + what + " (" + std::strerror(errno) +
          "; needs root or CAP_NET_ADMIN)";
    return false;
  };
  const uint32_t mask = prefix ? ~uint32_t(0) << (32 - prefix) : 0;
  bool ok = set_addr(SIOCSIFADDR, addr, "address") && set_addr(SIOCSIFNETMASK, mask, "netmask");
  if (ok && ioctl(fd, SIOCGIFFLAGS, &r) == 0) {
    r.ifr_flags = short(r.ifr_flags | IFF_UP);
    if (ioctl(fd, SIOCSIFFLAGS, &r) != 0) {
      err = "tap " + ifname + ": cannot bring the link up (" + std::strerror(errno) + ")";
      ok = false;
    }
  }
  close(fd);
  if (FILE* f = std::fopen(("/proc/sys/net/ipv6/conf/" + ifname + "/disable_ipv6").c_str(), "w")) {
    std::fputs("1", f);  // best effort
    std::fclose(f);
  }
  return ok;
}

}  // namespace nfpark::dp
