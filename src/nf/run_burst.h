// FlowRuns: a burst split into runs of consecutive same-flow packets, found once per chain
// segment and shared by every run-aware NF of the chain (nf.h: Nf::process_runs).
//
// Element:  (library) built by Chain::process; read by firewall, router, nat, lb, counter,
//           meter and ratelimit.
// State:    per burst, on the stack or in the Chain: 32 keys (40 B), 32 hashes, 33 run
//           boundaries, 32 solo flags — nothing allocated.
// Cost:     per live packet, a 12-byte compare of its IPv4 addresses and ports with the run's
//           first packet (same_v4_ports); where that does not say "same flow", one
//           extract_flow_key (the layout is the engine's parse, already in PacketView) and a
//           40-byte compare with the previous key; one FlowKeyHash64 per run.
// Refs:     Reframer (seeds/003) §5.1-5.2: FastClick's flow subsystem classifies once per
//           per-flow batch, so cycles per packet fall with the spatial locality factor (SLF).
//
// Theory of operation. A run is a maximal range [begin, end) of the burst whose live (kPass)
// packets all have the same FlowKey (core/flow_key.h: 5-tuple, direction-sensitive, ICMP query
// identifier as both ports). The key is the packet's own 5-tuple read through the parse the
// engine already did (PacketView::layout), so nothing is re-parsed. Packets an earlier NF
// dropped are inside whatever run they sit in: every NF skips them, so two packets of a flow
// with a dropped packet between them are still consecutive for the NFs, exactly as when each
// packet is processed on its own. A packet whose handling depends on more than its 5-tuple —
// no flow key (non-IP, malformed), an IPv4/IPv6 fragment (the NAT follows fragments by IP id),
// an ICMPv4 message that is not a query (errors are translated through their quote, and the
// key's "identifier" of other types is arbitrary bytes), an ICMPv6 message that is not echo —
// is a run of its own marked `solo`, and every NF gives it its per-packet path.
//
// Why runs give the per-packet result. Within a burst every NF sees one `now`; the live packets
// of a run are consecutive among live packets, so with per-packet processing nothing touches
// an NF's state between them but the run's own packets. A lookup that succeeded for the run's
// first packet (entry found or created, last_seen := now) therefore finds the same entry for
// each later packet with no other effect, and the NF may do it once. A lookup that failed
// (table or pool full) is not idempotent — a retry counts insert_failed again and may reclaim
// an expired slot — so on failure an NF processes the rest of the run packet by packet.
// Per-packet arithmetic (token buckets, meter colours, TTL, checksums) stays per packet.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "core/flow_key.h"
#include "core/packet_view.h"
#include "nf/nat_icmp.h"
#include "nf/nf.h"

namespace nfpark::nf {

// What an engine knows of a burst's flows before the chain (nf.h: Chain::process): Reframer's
// flow id of each packet (reframe::PacketMeta::flow: FlowKeyHash64 of its key, 1 for a hash of
// 0, 0 for a packet without a key), computed from the bytes the chain's first NF sees.
struct RunHints {
  const uint64_t* flow;
};

struct FlowRuns {
  std::array<FlowKey, kBurst> keys;       // per run: the key of its live packets
  std::array<uint64_t, kBurst> hashes;    // per run: FlowKeyHash64 of the key (flow tables')
  std::array<uint8_t, kBurst + 1> start;  // run r is [start[r], start[r + 1])
  std::array<bool, kBurst> solo;          // run r is processed packet by packet
  size_t count = 0;

  size_t begin(size_t r) const { return start[r]; }
  size_t end(size_t r) const { return start[r + 1]; }

  // True when the packet may share a run: it has a key and the key says all that matters.
  static bool runnable(const PacketView& p) {
    const PacketLayout& L = p.layout;
    if (L.fragment) return false;
    if (L.l4_proto == proto::kIcmp && L.l4_off != 0)
      return icmp_kind(p.data[L.l4_off]) == IcmpKind::kQuery;
    if (L.l4_proto == proto::kIcmpV6 && L.l4_off != 0)
      return p.data[L.l4_off] == 128 || p.data[L.l4_off] == 129;  // echo request / reply
    return true;
  }

  // Splits pkts (at most kBurst) into runs; `verdicts` says which packets are live. With
  // `hints` (RunHints: Reframer's flow ids of these very bytes), a packet whose flow id differs
  // from the live packet before it starts a run without key compares, and a run's hash is its
  // flow id; packets of one flow id are still checked to share the key (the id is a hash).
  void build(std::span<const PacketView> pkts, std::span<const Verdict> verdicts,
             const RunHints* hints = nullptr) {
    const size_t n = pkts.size() < kBurst ? pkts.size() : kBurst;
    count = 0;
    bool open = false;  // the current run may take the next live packet of its flow
    size_t lead = 0;    // the open run's first packet
    for (size_t i = 0; i < n; ++i) {
      if (verdicts[i] != Verdict::kPass) {
        if (count == 0) open_run(i, true);  // a leading dead packet: a solo run of its own
        continue;
      }
      // Another flow id than the live packet before it (in the open run): another key.
      const bool other = hints && open && verdicts[i - 1] == Verdict::kPass &&
                         hints->flow[i] != hints->flow[i - 1];
      if (open && !other && same_v4_ports(pkts[i], pkts[lead])) continue;  // its key is the run's
      FlowKey k;
      const bool keyed = extract_flow_key(pkts[i].data, pkts[i].layout, k);
      const bool joins = keyed && runnable(pkts[i]);
      if (open && joins && !other && k == keys[count - 1]) continue;
      open_run(i, !joins);
      if (joins) {
        keys[count - 1] = k;
        // classify() maps a hash of 0 to 1: only other ids are the key's hash as they are
        hashes[count - 1] = hints && hints->flow[i] > 1 ? hints->flow[i] : FlowKeyHash64{}(k);
        lead = i;
      }
      open = joins;
    }
    start[count] = uint8_t(n);
  }

  // The common case of a packet inside a run, without extracting its key: q is an unfragmented
  // IPv4 TCP/UDP packet with the protocol, address bytes and port bytes of p (a run's first
  // packet, IPv4 TCP/UDP too), so extract_flow_key would give both one key and q is runnable.
  // False sends q down the full path (extract, compare), which decides the same way or splits.
  static bool same_v4_ports(const PacketView& q, const PacketView& p) {
    const PacketLayout &A = q.layout, &B = p.layout;
    if (A.status != ParseStatus::kOk || A.ip_version != 4 || A.fragment || !A.has_ports() ||
        B.ip_version != 4 || !B.has_ports() || A.l4_proto != B.l4_proto)
      return false;
    return std::memcmp(q.data + A.l3_off + 12, p.data + B.l3_off + 12, 8) == 0 &&
           std::memcmp(q.data + A.l4_off, p.data + B.l4_off, 4) == 0;
  }

 private:
  void open_run(size_t i, bool is_solo) {
    start[count] = uint8_t(i);
    solo[count] = is_solo;
    ++count;
  }
};

// Stage 1 of a flow table's lookups for every shared run (Nf::prefetch_runs): its buckets.
template <class Table>
void prefetch_run_buckets(const FlowRuns& runs, const Table& table) {
  for (size_t r = 0; r < runs.count; ++r)
    if (!runs.solo[r]) table.prefetch_buckets(runs.hashes[r]);
}

// The first two stages of a run-aware lookup into a flow table (counter, rate limiter): each
// live packet's hash — a shared run's from `runs`, a solo packet's from its own key (in `keys`) —
// with its buckets prefetched, then the entries prefetched, once per run. keyed[i]: packet i is
// live and has a flow key.
template <class Table>
void hash_and_prefetch_runs(std::span<PacketView> pkts, std::span<const Verdict> verdicts,
                            const FlowRuns& runs, const Table& table,
                            std::array<FlowKey, kBurst>& keys, std::array<uint64_t, kBurst>& hashes,
                            std::array<bool, kBurst>& keyed) {
  for (size_t r = 0; r < runs.count; ++r) {
    for (size_t i = runs.begin(r); i < runs.end(r); ++i) {
      keyed[i] = false;
      if (verdicts[i] != Verdict::kPass) continue;
      if (!runs.solo[r]) {
        keyed[i] = true;
        hashes[i] = runs.hashes[r];
        if (i == runs.begin(r)) table.prefetch_buckets(hashes[i]);
      } else if (extract_flow_key(pkts[i].data, pkts[i].layout, keys[i])) {
        keyed[i] = true;
        hashes[i] = table.hash(keys[i]);
        table.prefetch_buckets(hashes[i]);
      }
    }
  }
  for (size_t r = 0; r < runs.count; ++r)
    for (size_t i = runs.begin(r); i < runs.end(r); ++i)
      if (keyed[i] && (runs.solo[r] || i == runs.begin(r))) table.prefetch_entry(hashes[i]);
}

}  // namespace nfpark::nf
