#include "nf/router.h"

#include <toml++/toml.h>

#include <array>
#include <cstring>

#include "core/bytes.h"
#include "core/checksum.h"
#include "core/hot_path.h"
#include "nf/run_burst.h"

namespace nfpark::nf {

static bool parse_route_line(std::string_view line, IpPrefix& prefix, MacAddr& mac,
                             std::string& error) {
  auto via = line.find(" via ");
  if (via == std::string_view::npos) {
    error = "route '" + std::string(line) + "': expected 'PREFIX via MAC'";
    return false;
  }
  auto trim = [](std::string_view s) {
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
    return s;
  };
  std::string e;
  if (!parse_prefix(trim(line.substr(0, via)), prefix, e) ||
      !parse_mac(trim(line.substr(via + 5)), mac, e)) {
    error = "route '" + std::string(line) + "': " + e;
    return false;
  }
  if (prefix.family == 0) {
    error = "route '" + std::string(line) + "': 'any' is not a prefix; use 0.0.0.0/0 or ::/0";
    return false;
  }
  return true;
}

uint32_t Router::next_hop_index(const MacAddr& mac) {
  for (uint32_t i = 0; i < next_hops_.size(); ++i)
    if (next_hops_[i] == mac) return i;
  next_hops_.push_back(mac);
  return uint32_t(next_hops_.size() - 1);
}

bool Router::add_route(const IpPrefix& p, const MacAddr& mac, std::string& error) {
  uint32_t nh = next_hop_index(mac);
  bool ok =
      p.family == 4 ? v4_.insert(p.addr.data(), p.len, nh) : v6_.insert(p.addr.data(), p.len, nh);
  if (!ok) error = "route table full";
  return ok;
}

std::unique_ptr<Router> Router::create(const RouterConfig& cfg, std::string& error) {
  std::unique_ptr<Router> r(new Router());
  r->port_mac_ = cfg.port_mac;
  if (cfg.default_via != "none") {
    MacAddr mac;
    if (!parse_mac(cfg.default_via, mac, error)) {
      error = "default_via: " + error + " (or \"none\")";
      return nullptr;
    }
    IpPrefix any4, any6;
    any4.family = 4;
    any6.family = 6;
    if (!r->add_route(any4, mac, error) || !r->add_route(any6, mac, error)) return nullptr;
  }
  for (const auto& line : cfg.routes) {
    IpPrefix p;
    MacAddr mac;
    if (!parse_route_line(line, p, mac, error) || !r->add_route(p, mac, error)) {
      error = "routes: " + error;
      return nullptr;
    }
  }
  r->v4_.compile();  // the LpmDir16 image for small tables, LpmRuns past it (lpm_runs.h)
  return r;
}

bool RouterConfig::parse(const toml::table& t, RouterConfig& out, std::string& error) {
  for (const auto& [k, v] : t) {
    std::string_view key = k.str();
    if (key == "port_mac") {
      auto s = v.value<std::string>();
      if (!s || !parse_mac(*s, out.port_mac, error)) {
        error = "port_mac: " + (s ? error : std::string("expected a string"));
        return false;
      }
    } else if (key == "default_via") {
      auto s = v.value<std::string>();
      if (!s) {
        error = "default_via: expected a MAC string or \"none\"";
        return false;
      }
      out.default_via = *s;
    } else if (key == "routes") {
      const auto* arr = v.as_array();
      if (!arr) {
        error = "routes: expected an array of \"PREFIX via MAC\" strings";
        return false;
      }
      out.routes.clear();
      for (const auto& el : *arr) {
        auto s = el.value<std::string>();
        if (!s) {
          error = "routes: every entry must be a string \"PREFIX via MAC\"";
          return false;
        }
        IpPrefix p;
        MacAddr m;
        if (!parse_route_line(*s, p, m, error)) {
          error = "routes: " + error;
          return false;
        }
        out.routes.push_back(*s);
      }
    } else {
      error = "unknown key '" + std::string(key) + "' (known: port_mac, routes, default_via)";
      return false;
    }
  }
  return true;
}

// The burst's IPv4 destinations looked up together, as one array of host-order addresses
// (Lpm::lookup_burst_v4: no pointer per header in the lookup loop); packets that are not IPv4 or
// not passing look up 0.0.0.0 and their answer is not used.
void Router::lookup_v4(std::span<PacketView> pkts, std::span<Verdict> verdicts,
                       uint32_t* out) const {
  std::array<uint32_t, kBurst> addrs{};  // zeroed: GCC -O3 cannot see pkts.size() <= kBurst
  for (size_t i = 0; i < pkts.size(); ++i) {
    const PacketLayout& L = pkts[i].layout;
    const bool v4 = verdicts[i] == Verdict::kPass && L.ok() && L.ip_version == 4;
    uint32_t a = 0;
    if (v4) std::memcpy(&a, pkts[i].data + L.l3_off + 16, 4);
    addrs[i] = __builtin_bswap32(a);
  }
  v4_.lookup_burst_v4(addrs.data(), out, pkts.size());
}

NFPARK_HOT_INLINE void Router::route(PacketView& p, Verdict& v, uint32_t& nh) {
  const PacketLayout& L = p.layout;
  ++rx_;
  if (!L.ok() || L.ip_version == 0) {
    v = Verdict::kDrop;
    ++not_ip_;
    return;
  }
  uint8_t* ip = p.data + L.l3_off;
  const bool v4 = L.ip_version == 4;
  uint8_t* ttl = v4 ? ip + 8 : ip + 7;
  if (*ttl <= 1) {  // RFC 1812 §5.3.1 / RFC 8200: do not forward
    v = Verdict::kDrop;
    ++ttl_expired_;
    return;
  }
  if (nh == kUnknown) nh = v4 ? v4_.lookup(ip + 16) : v6_.lookup(ip + 24);
  if (nh == Lpm::kNoRoute) {
    v = Verdict::kDrop;
    ++no_route_;
    return;
  }
  if (v4) {  // RFC 1624: patch the header checksum for the (TTL, protocol) word
    uint16_t old_w = load_be16(ip + 8);
    --*ttl;
    store_be16(ip + 10, csum_update16(load_be16(ip + 10), old_w, load_be16(ip + 8)));
  } else {
    --*ttl;
  }
  std::memcpy(p.data, next_hops_[nh].data(), 6);
  std::memcpy(p.data + 6, port_mac_.data(), 6);
  ++forwarded_;
}

void Router::process(std::span<PacketView> pkts, std::span<Verdict> verdicts, Nanos) {
  std::array<uint32_t, kBurst> nh4;
  lookup_v4(pkts, verdicts, nh4.data());
  for (size_t i = 0; i < pkts.size(); ++i) {
    if (verdicts[i] != Verdict::kPass) continue;
    const PacketLayout& L = pkts[i].layout;
    uint32_t nh = L.ok() && L.ip_version == 4 ? nh4[i] : kUnknown;  // v4: looked up with the burst
    route(pkts[i], verdicts[i], nh);
  }
}

void Router::process_runs(std::span<PacketView> pkts, std::span<Verdict> verdicts,
                          const FlowRuns& runs, Nanos) {
  for (size_t r = 0; r < runs.count; ++r) {
    uint32_t nh = kUnknown;  // shared by the run's packets: they have one destination
    for (size_t i = runs.begin(r); i < runs.end(r); ++i) {
      if (verdicts[i] != Verdict::kPass) continue;
      if (runs.solo[r]) nh = kUnknown;
      route(pkts[i], verdicts[i], nh);
    }
  }
}

void Router::export_state(std::vector<uint8_t>& out) const {
  for (uint64_t v : {rx_, forwarded_, ttl_expired_, no_route_, not_ip_}) put_state(out, v);
}

void Router::counters(const CounterSink& sink) const {
  sink("rx", rx_);
  sink("forwarded", forwarded_);
  sink("drop.ttl_expired", ttl_expired_);
  sink("drop.no_route", no_route_);
  sink("drop.not_ip", not_ip_);
}

}  // namespace nfpark::nf
