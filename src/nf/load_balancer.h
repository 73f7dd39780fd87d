// Element:  LoadBalancer ("lb") — L4 load balancer: Maglev consistent hashing over weighted
//           backends plus a connection table, rewriting the destination IPv4 address and MAC.
// Ports:    in[0] -> out[0]; never drops.
// Config:   backends (address, MAC, weight; default 4 backends 10.10.0.1-4, MAC 02:00:0a:0a:00:0N,
//           weight 1) · vips (IPv4 addresses balanced; default none = every IPv4 packet) ·
//           table_size (prime, default 65537) · max_flows (default 65536) · idle_timeout (Nanos,
//           default 60 s).
// Time:     `now` per burst: connection last-seen stamps, lazy expiry, 16-slot sweep per burst.
// State:    Maglev table (4 B * table_size) + FlowTable<FlowKey, uint32_t backend> (64 B entry +
//           2 B tag per slot; 65536 flows -> 5.2 MiB; 1M flows -> 78.8 MiB).
// Counters: balanced, new_flows, rerouted (backend removed under a flow), conn_table_full
//           (flow balanced by Maglev alone, not pinned), passthrough (IPv6, non-IP, not a VIP).
// Cost:     64 ns/pkt at 1k flows, 123 at 1M (SLF 1; forward = 23-25 ns incl. parse), nf_bench.
// Runs:     one VIP check and connection-table lookup per run of a flow (run_burst.h); the
//           backend's address and MAC written into each packet (checksums per packet).
// Refs:     Eisenbud et al., Maglev (NSDI'16); Katran (connection table + Maglev).
//
// Theory of operation. A packet to a VIP (or any IPv4 packet when no VIP is configured) is
// looked up by its 5-tuple in the connection table; a new flow takes the Maglev choice for its
// hash and is pinned, so later changes to the backend set do not move it. A pinned flow whose
// backend has been removed is re-balanced (counted in rerouted). The action is a destination
// NAT, not encapsulation: destination IPv4 address := backend address (IPv4 header and TCP/UDP
// checksums patched incrementally, rewrite.h) and destination MAC := backend MAC. Replies from
// backends are expected to return directly (DSR) or through a NAT; this element does not
// un-rewrite them. When the connection table is full the packet still goes to the Maglev
// backend (the same one while the backend set is stable), counted in conn_table_full. IPv6
// passes unchanged. add_backend/remove_backend rebuild the Maglev table (control path, allocates).
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "core/flow_key.h"
#include "nf/flow_table.h"
#include "nf/maglev.h"
#include "nf/nf.h"

namespace nfpark::nf {

struct LbBackend {
  uint32_t addr = 0;  // host order
  std::array<uint8_t, 6> mac{};
  uint32_t weight = 1;
};

struct LbConfig {
  std::vector<LbBackend> backends = default_backends();
  std::vector<uint32_t> vips;  // host order; empty = all IPv4
  uint32_t table_size = 65537;
  size_t max_flows = 65536;
  Nanos idle_timeout = 60 * kSecond;
  static std::vector<LbBackend> default_backends();
};

class LoadBalancer final : public Nf {
 public:
  explicit LoadBalancer(LbConfig cfg);
  std::string_view name() const override { return "lb"; }
  void process(std::span<PacketView> pkts, std::span<Verdict> verdicts, Nanos now) override;
  void process_runs(std::span<PacketView> pkts, std::span<Verdict> verdicts, const FlowRuns& runs,
                    Nanos now) override;
  bool run_aware() const override { return true; }
  void counters(const CounterSink& sink) const override;
  void export_state(std::vector<uint8_t>& out) const override;

  // Control path. Adding a known address revives it with the new MAC/weight; removing an
  // unknown one returns false.
  void add_backend(const LbBackend& b);
  bool remove_backend(uint32_t addr);
  const MaglevTable& maglev() const { return maglev_; }
  const std::vector<LbBackend>& backends() const { return backends_; }
  size_t active_flows() const { return conns_.size(); }

 private:
  void rebuild();
  bool is_vip(uint32_t dst) const;
  // The backend of a balanced flow; `pinned` tells whether it sits in the connection table.
  uint32_t pick(const FlowKey& k, uint64_t h, Nanos now, bool& pinned);
  bool mine(const PacketView& p, const FlowKey& k) const;
  void rewrite(PacketView& p, uint32_t backend);

  std::vector<LbBackend> backends_;  // index = backend id, stable; weight 0 = removed
  std::vector<uint32_t> vips_;       // sorted
  MaglevTable maglev_;
  FlowTable<FlowKey, uint32_t, FlowKeyHash64> conns_;
  uint64_t balanced_ = 0, new_flows_ = 0, rerouted_ = 0, table_full_ = 0, passthrough_ = 0;
};

}  // namespace nfpark::nf
