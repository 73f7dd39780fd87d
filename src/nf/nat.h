// Element:  Nat — source NAT (NAPT) for IPv4: TCP, UDP, ICMP queries and errors, fragments.
// Ports:    in[0] -> out[0] (rewritten or passed), dropped packets get Verdict::kDrop.
// Config:   external (IPv4 addresses, default 198.18.0.1-198.18.0.16: 16 x 64512 ports =
//           1,032,192 flows) · port_min/port_max (default 1024..65535, inclusive) · inside
//           (IPv4 prefixes; default none = every packet not addressed to an external address is
//           outbound) · idle_timeout (Nanos, default 60 s) · max_flows (flow table capacity,
//           allocated up front; default 0 = grow as flows come, up to what the pools hold) ·
//           reclaim_probe (ports checked for expiry when a pool is empty, 64) ·
//           other (OtherProtocols::kPass or kDrop, default kPass) · frag_states (datagrams whose
//           fragments are followed at once, 4096) · frag_timeout (Nanos, default 2 s).
// Time:     `now` per burst: last-seen stamps, lazy expiry, sweep of 16 slots per burst.
// State:    FlowTable<FlowKey, Mapping> (2 KiB a bucket of 31 flows, see flow_table.h): with
// max_flows 0,
//           started at 16,384 flows (662 buckets, 1.3 MiB) and doubled as flows arrive, up to the
//           pools' capacity (1,032,192 flows: 41,622 buckets, 81.3 MiB); a reverse map of 4 B per
//           (external address, port) and a 2 B free ring per port (16 addresses: 4 MiB + 2 MiB);
//           NatFragments (24 B x frag_states).
// Counters: outbound, inbound, icmp_errors_out, icmp_errors_in, frag_followed, frag_evicted,
//           passthrough, other_passed, flows_active, flows_created, flows_expired, flows_peak,
//           ports_reclaimed, table_grown, drop.pool_exhausted, drop.table_full, drop.no_mapping,
//           drop.icmp_error_no_mapping, drop.icmp_error_bad_quote, drop.frag_no_first,
//           drop.frag_expired, drop.frag_first_dropped, drop.other, drop.malformed.
// Warnings: at the end of a run, when the pool ran out (drop.pool_exhausted) or the table
//           was full (drop.table_full): how many packets, and which key to change.
// Cost:     92 ns/pkt at 1k flows, 181 at 1M (SLF 1; forward = 23-25 ns incl. parse), nf_bench;
//           TCP/UDP unchanged by ICMP/fragment support (new/old, alternated: 0.97x at 1k flows,
//           1.02x at 1M, N = 6; cachegrind 689 vs 691 instructions per packet).
// Runs:     one classification and one forward-table (outbound) or reverse-map (inbound) lookup,
//           or mapping creation, per run of a flow (run_burst.h); a TCP/UDP run's checksum
//           deltas are worked out once and added to each packet's checksums (nat.cc "Run
//           rewrites"), and the chain takes the run's new key from its first packet
//           (remap_runs) instead of finding the runs again. Fragments and ICMP errors run solo.
// Refs:     RFC 3022 (NAPT), RFC 4787 (REQ-2 paired pooling, endpoint-dependent filtering),
//           RFC 5508 (ICMP), RFC 791 (fragments), VigNAT (Zaostrovnykh et al., SIGCOMM'17),
//           MazuNAT (Click), BESS nat.h, Linux nf_nat (for the differences: docs/nfs.md).
//
// Theory of operation. An outbound packet (inside -> outside) is looked up by its 5-tuple in
// the forward table (ICMP queries — echo, timestamp, information, address mask — by their
// identifier, which plays both ports). A new flow gets a port from the pool of its preferred
// external address (hash of the inside source address, RFC 4787 REQ-2 "paired"), or from the
// next address with a free port; its mapping {address index, external port} is stored, and
// reverse[addr][port] records the forward slot. One external port belongs to one flow at a time,
// so the NAT holds up to |external| x (port_max - port_min + 1) flows. The packet's source
// address and port (ICMP: identifier) are rewritten. An inbound packet to an external address is
// mapped through reverse[addr][dst port]; it is accepted only when its protocol, source address
// and source port equal the flow's remote end (endpoint-dependent filtering, as VigNAT), and its
// destination is rewritten to the inside address and port. Both directions refresh the flow.
// ICMP errors (nat_icmp.cc) are translated through the datagram they quote (RFC 5508): an
// inbound error's quote is an outbound packet, found through the reverse map; an outbound
// error's quote is an inbound packet, found in the forward table; the quote's address, port or
// identifier, its IP checksum and its transport checksum (when quoted: always for UDP and ICMP,
// for TCP when 18+ bytes are) are reverted, the outer destination (inbound) or source (outbound)
// is rewritten, and the ICMP checksum is patched for every changed word; an error never
// refreshes a flow. IPv4 fragments (nat_frag.h): a first fragment is translated like a whole
// packet and what was done to it is recorded under (src, dst, proto, IP id); later fragments
// repeat it. They are translated after the rest of their burst, so a burst that holds a
// datagram's first fragment behind its others still translates them all; a fragment with no
// state is dropped (frag_no_first, frag_expired, frag_first_dropped). Other protocols (and ICMP
// types that are neither queries nor errors) pass unchanged or are dropped, as `other` says;
// transit packets (with `inside` set: neither from inside nor to an external address) pass.
// IPv6 and non-IP pass unchanged (passthrough; no NAT66/NAT64). An IPv4 packet the parser
// rejects is dropped (drop.malformed). A flow idle for more than idle_timeout expires lazily,
// by a 16-slot sweep per burst, or when an empty pool probes reclaim_probe of its allocated
// ports; expiry returns the port to the tail of a FIFO free ring and clears its reverse entry.
// The flow table grows before a burst that could fill it: a table twice the size is built and
// every flow moved into it (reverse entries follow; a pause of ~0.4 us of CPU per flow moved,
// 0.2-0.27 s at 524k flows; a set max_flows sizes the table up front and avoids it). A full
// pool or table drops the packet and counts it. No TCP state is tracked (idleness ends a flow).
// Checksums are patched incrementally (rewrite.h); nothing past layout.payload_off is read.
#pragma once
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "core/flow_key.h"
#include "nf/flow_table.h"
#include "nf/nat_frag.h"
#include "nf/nf.h"

namespace nfpark::nf {

struct Prefix4 {
  uint32_t addr = 0;  // host order
  uint8_t len = 0;
  bool contains(uint32_t a) const { return len == 0 || ((a ^ addr) >> (32 - len)) == 0; }
};

// What happens to protocols the NAT cannot translate (GRE, ESP, IGMP, SCTP, ICMP types that are
// neither queries nor errors ...): pass unchanged (their inside addresses show) or drop.
enum class OtherProtocols : uint8_t { kPass, kDrop };

// 198.18.0.1 .. 198.18.0.16 (RFC 2544's benchmarking range), host order.
std::vector<uint32_t> default_nat_external();

struct NatConfig {
  std::vector<uint32_t> external = default_nat_external();
  uint16_t port_min = 1024, port_max = 65535;
  std::vector<Prefix4> inside;
  Nanos idle_timeout = 60 * kSecond;
  size_t max_flows = 0;  // 0 = external.size() * (port_max - port_min + 1)
  uint32_t reclaim_probe = 64;
  OtherProtocols other = OtherProtocols::kPass;
  uint32_t frag_states = 4096;
  Nanos frag_timeout = 2 * kSecond;
};

class Nat final : public Nf {
 public:
  explicit Nat(NatConfig cfg);
  std::string_view name() const override { return "nat"; }
  void process(std::span<PacketView> pkts, std::span<Verdict> verdicts, Nanos now) override;
  void process_runs(std::span<PacketView> pkts, std::span<Verdict> verdicts, const FlowRuns& runs,
                    Nanos now) override;
  bool run_aware() const override { return true; }
  void prefetch_runs(const FlowRuns& runs) const override;
  bool remap_runs(std::span<const PacketView> pkts, std::span<const Verdict> verdicts,
                  FlowRuns& runs) const override;
  void counters(const CounterSink& sink) const override;
  void export_state(std::vector<uint8_t>& out) const override;
  void warnings(const WarningSink& sink) const override;
  // Worker w of n allocates the external ports p with (p - port_min) mod n == w; replies are
  // steered to it by that rule (core/shard.h).
  void set_worker(uint32_t w, uint32_t n) override;
  void steering(std::vector<SteerRule>& rules) const override {
    rules.push_back(SteerRule{cfg_.external, cfg_.port_min});
  }

  size_t active_flows() const { return table_.size(); }
  size_t free_ports(size_t addr_index) const { return pools_[addr_index].count; }
  size_t table_slots() const { return table_.slots(); }

 private:
  struct Mapping {
    uint32_t ext_addr;  // host order
    uint16_t ext_port;
    uint8_t addr_index;
    uint8_t pad_;
  };
  struct Release {
    Nat* nat;
    void operator()(const FlowKey&, Mapping& m, uint32_t) const { nat->release(m); }
  };
  struct Pool {  // FIFO ring of free ports
    std::unique_ptr<uint16_t[]> ring;
    uint32_t head = 0, count = 0, size = 0, probe = 0;
  };
  using Table = FlowTable<FlowKey, Mapping, FlowKeyHash64, Release>;
  static constexpr uint32_t kNoSlot = Table::kNone;  // in reverse_: the port is free
  static uint32_t addr_hash(uint32_t a) { return uint32_t(mix64(a) >> 32); }

  // What a packet is, decided in the burst's first pass.
  enum class Step : uint8_t { kPass, kOut, kIn, kErrorOut, kErrorIn, kOther, kMalformed, kLater };
  enum class Dir : uint8_t { kOut, kIn, kPass };
  // `known`: the packet's flow key when the caller has it (a run's), else nullptr.
  Step classify(const PacketView& p, FlowKey& k, int& ext_index,
                const FlowKey* known = nullptr) const;
  // To an external address: inbound. Otherwise outbound when no inside prefixes are set or the
  // source is inside; else transit.
  Dir direction(uint32_t src, uint32_t dst, int& ext_index) const {
    ext_index = external_index(dst);
    if (ext_index >= 0) return Dir::kIn;
    if (cfg_.inside.empty()) return Dir::kOut;
    for (const Prefix4& pf : cfg_.inside)
      if (pf.contains(src)) return Dir::kOut;
    return Dir::kPass;
  }
  // `slot`, when given, receives the forward slot a translated kOut/kIn packet used (else kNone).
  bool translate(PacketView& p, Step s, const FlowKey& k, uint64_t h, int ext, Nanos now,
                 uint32_t* slot = nullptr);
  bool outbound(PacketView& p, const FlowKey& k, uint64_t h, Nanos now, uint32_t* slot);
  bool inbound(PacketView& p, const FlowKey& k, int ext_index, Nanos now, uint32_t* slot);
  void rewrite_out(PacketView& p, const Mapping& m);
  // A shared run's outbound rewrite, worked out once for the run (nat.cc: "Run rewrites"):
  // the checksum deltas every packet of the run takes. fast == false (ICMP): rewrite_out.
  struct OutPlan {
    uint32_t ip_delta = 0, l4_delta = 0;
    bool fast = false, addr = false, port = false;
  };
  static OutPlan out_plan(const FlowKey& k, const Mapping& m);
  void rewrite_out_planned(PacketView& p, const Mapping& m, const OutPlan& plan);
  void rewrite_in(PacketView& p, const FlowKey& flow);
  // Stage 3 of a burst for one packet (translate, note a first fragment, set the verdict).
  void translate_one(PacketView& p, Verdict& v, Step s, const FlowKey& k, uint64_t h, int ext,
                     Nanos now);
  bool other(const PacketView& p);
  // ICMP errors (nat_icmp.cc): translate through the quote, or count why not and return false.
  bool error_inbound(PacketView& p, Nanos now);
  bool error_outbound(PacketView& p, Nanos now);
  // Fragments (nat_frag.cc): remember what a first fragment became; make a later one follow it.
  void remember_first(const PacketView& p, uint32_t src, uint32_t dst, bool passed, Nanos now);
  bool follow_first(PacketView& p, Nanos now);
  // Pools and table (nat_pool.cc).
  bool allocate(uint32_t src_addr, Mapping& m, Nanos now);
  bool reclaim(size_t a, Nanos now);
  void release(const Mapping& m);
  void grow();
  int external_index(uint32_t addr) const;
  uint32_t& reverse(size_t a, uint16_t port) { return reverse_[(a << 16) | port]; }

  NatConfig cfg_;
  uint32_t ports_per_addr_;
  size_t max_flows_, capacity_;  // the table's final and current capacity
  std::vector<Pool> pools_;
  std::unique_ptr<uint32_t[]> reverse_;  // (addr index << 16 | port) -> forward slot
  std::vector<uint32_t> ext_set_;        // open-addressed (addr, index + 1) pairs
  uint32_t ext_mask_ = 0;
  Table table_;
  NatFragments frags_;
  uint64_t outbound_ = 0, inbound_ = 0, errors_out_ = 0, errors_in_ = 0, frag_followed_ = 0;
  uint64_t passthrough_ = 0, other_passed_ = 0, created_ = 0, reclaimed_ = 0, grown_ = 0;
  uint64_t expired_before_ = 0, peak_ = 0;  // expired_before_: expiries of replaced tables
  uint64_t drop_pool_ = 0, drop_table_ = 0, drop_no_mapping_ = 0, drop_error_no_mapping_ = 0;
  uint64_t drop_bad_quote_ = 0, drop_frag_no_first_ = 0, drop_frag_expired_ = 0;
  uint64_t drop_frag_first_dropped_ = 0, drop_other_ = 0, drop_malformed_ = 0;
};

}  // namespace nfpark::nf
