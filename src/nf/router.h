// Element:  Router — IPv4/IPv6 longest-prefix-match forwarding: TTL/hop-limit decrement,
//           next-hop MAC rewrite (dst = next hop, src = the router's port MAC).
// Ports:    in[0] headers -> out[0] routed (or dropped)    diagram:  in0 --> [Router] --> out0
// Config:   port_mac (default 02:00:00:00:01:00) · routes: list of "PREFIX via MAC", IPv4 or
//           IPv6 (default none) · default_via: MAC of the next hop for 0.0.0.0/0 and ::/0
//           (default 02:00:00:00:00:02; "none" = no default route, unmatched packets dropped).
// Time:     none.                                    State: two Lpm tables + next-hop list, static.
// Counters: rx, forwarded, drop.ttl_expired, drop.no_route, drop.not_ip
// Cost:     ~4 ns/pkt over forward (nf_bench --quick, 100k flows: 24.5 vs 20.3 ns/pkt);
//           IPv4 lookup is 2 loads in a cache-sized image for small tables (LpmDir16, built
//           at the end of create()), 2-3 in the run-compressed LpmRuns image past its 32 MiB
//           bound (4 MiB at 100k routes), done for the whole burst at once with the loads
//           prefetched a stage ahead (Lpm::lookup_burst_v4, IPv4 destinations in host order).
// Runs:     one LPM lookup per run of a flow (run_burst.h: same destination); TTL, checksum
//           and MACs per packet. Only when the chain has found runs for an NF before: alone,
//           finding them (~8-10 ns/pkt) costs more than the LPM saves (0.65x, nf_bench --runs).
// Refs:     RFC 1812 §5.3.1 (TTL), RFC 8200 §3 (hop limit), RFC 1624 (checksum update).
//
// Theory of operation. A packet whose TTL/hop limit is ≤ 1 is dropped (no ICMP Time Exceeded is
// generated: shallow NFs do not originate packets). Otherwise the destination address is looked
// up; a miss drops the packet. TTL is decremented and the IPv4 header checksum patched with the
// RFC 1624 update of the (TTL, protocol) word; IPv6 has no header checksum and its L4 checksums
// do not cover the hop limit. Non-IP and malformed packets are dropped. Packets are never read
// past layout.payload_off.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "nf/lpm.h"
#include "nf/lpm_prefix.h"
#include "nf/nf.h"
#include "nf/toml_fwd.h"

namespace nfpark::nf {

struct RouterConfig {
  MacAddr port_mac = {0x02, 0, 0, 0, 0x01, 0x00};
  std::vector<std::string> routes;                // "10.0.0.0/8 via 02:00:00:00:00:0a"
  std::string default_via = "02:00:00:00:00:02";  // or "none"

  // Reads port_mac, routes, default_via from a TOML table; unknown keys are errors.
  static bool parse(const toml::table& t, RouterConfig& out, std::string& error);
};

class Router final : public Nf {
 public:
  static std::unique_ptr<Router> create(const RouterConfig& cfg, std::string& error);
  std::string_view name() const override { return "router"; }
  void process(std::span<PacketView> pkts, std::span<Verdict> verdicts, Nanos now) override;
  void process_runs(std::span<PacketView> pkts, std::span<Verdict> verdicts, const FlowRuns& runs,
                    Nanos now) override;
  bool run_aware() const override { return true; }
  bool finds_runs() const override { return false; }
  bool rewrites_flow_key() const override { return false; }
  void counters(const CounterSink& sink) const override;
  void export_state(std::vector<uint8_t>& out) const override;
  // Adds a route; false (with error) for a bad prefix or too many next hops. After create(),
  // IPv4 lookups walk the trie again (same answers) until compile_routes().
  bool add_route(const IpPrefix& prefix, const MacAddr& next_hop, std::string& error);
  void compile_routes() { v4_.compile(); }
  size_t memory_bytes() const { return v4_.memory_bytes() + v6_.memory_bytes(); }

 private:
  Router() : v4_(4), v6_(16) {}
  uint32_t next_hop_index(const MacAddr& mac);
  void lookup_v4(std::span<PacketView> pkts, std::span<Verdict> verdicts, uint32_t* out) const;
  static constexpr uint32_t kUnknown = Lpm::kNoRoute - 1;  // a run's next hop, not looked up yet
  // Routes one live packet. `nh`: the run's next hop (kUnknown: look it up and store it there).
  void route(PacketView& p, Verdict& v, uint32_t& nh);

  Lpm v4_, v6_;
  MacAddr port_mac_{};
  std::vector<MacAddr> next_hops_;
  uint64_t rx_ = 0, forwarded_ = 0, ttl_expired_ = 0, no_route_ = 0, not_ip_ = 0;
};

}  // namespace nfpark::nf
