// Element:  RateLimiter ("ratelimit") — per-flow token bucket in bytes of the original packet;
//           excess packets are dropped and counted.
// Ports:    in[0] -> out[0] conforming; excess -> Verdict::kDrop.
// Config:   rate_bps (bits/s of wire_len, default 1e9, 1..1e13) · burst_bytes (bucket depth,
//           default 131072, 1..2^29) · max_flows (default 65536) · idle_timeout (Nanos, default
//           60 s; a flow idle that long has a full bucket anyway when burst/rate <= 60 s).
// Time:     `now` per burst: refill by elapsed time, lazy expiry, 16-slot sweep per burst.
// State:    FlowTable<FlowKey, Bucket{tokens, last}> — 64 B entry + 2 B tag per slot (65536 flows
//           -> 5.2 MiB; 1M flows -> 78.8 MiB).
// Counters: rx, tx, tx_bytes, drop.rate_exceeded, drop_bytes, flows_active, flows_expired,
//           untracked (table full: passed unmetered), not_ip (passed unmetered).
// Cost:     60 ns/pkt at 1k flows, 115 at 1M (SLF 1; forward = 23-25 ns incl. parse), nf_bench.
// Runs:     one table lookup per run of a flow (run_burst.h), then the token arithmetic of each
//           packet on the bucket found, so a run drops exactly what packet-by-packet does.
// Refs:     token bucket as in RFC 2697 §3 (one bucket, C only); QUEUE-MEM's per-flow limiter.
//
// Theory of operation. Token arithmetic is exact integer arithmetic in "bit-nanoseconds":
// a bucket holds T = bits * 1e9, gains elapsed_ns * rate_bps per refill, is capped at
// burst_bytes * 8e9, and a packet costs wire_len * 8e9. A new flow starts with a full bucket.
// A packet conforms when T >= cost (then T -= cost), otherwise it is dropped and T is unchanged.
// So over any interval [t0, t1] a flow passes at most burst + rate * (t1 - t0) bytes, exactly,
// which tests/nf/rate_limiter_test.cc checks with a virtual clock.
#pragma once
#include <cstdint>

#include "core/flow_key.h"
#include "nf/flow_table.h"
#include "nf/nf.h"

namespace nfpark::nf {

struct RateLimiterConfig {
  uint64_t rate_bps = 1'000'000'000;
  uint64_t burst_bytes = 131072;
  size_t max_flows = 65536;
  Nanos idle_timeout = 60 * kSecond;
  static constexpr uint64_t kMaxRateBps = 10'000'000'000'000ULL;
  static constexpr uint64_t kMaxBurstBytes = 1ULL << 29;
};

class RateLimiter final : public Nf {
 public:
  explicit RateLimiter(RateLimiterConfig cfg);
  std::string_view name() const override { return "ratelimit"; }
  void process(std::span<PacketView> pkts, std::span<Verdict> verdicts, Nanos now) override;
  void process_runs(std::span<PacketView> pkts, std::span<Verdict> verdicts, const FlowRuns& runs,
                    Nanos now) override;
  bool run_aware() const override { return true; }
  bool rewrites_flow_key() const override { return false; }
  void counters(const CounterSink& sink) const override;
  void export_state(std::vector<uint8_t>& out) const override;

 private:
  struct Bucket {
    int64_t tokens;  // bits * 1e9
    Nanos last;
  };
  bool conform(Bucket& b, bool fresh, uint32_t wire_len, Nanos now);
  // Looks a keyed packet's flow up and meters it: its bucket (nullptr when the table is full:
  // the packet passes unmetered, counted untracked) and whether it conforms.
  Bucket* meter(const FlowKey& k, uint64_t h, uint32_t wire_len, Nanos now, bool& pass);
  void account(Verdict& v, uint32_t len, bool pass);

  int64_t rate_;      // bits/s = bit-ns gained per ns
  int64_t cap_;       // burst in bit-ns
  Nanos full_after_;  // elapsed time that refills an empty bucket
  FlowTable<FlowKey, Bucket, FlowKeyHash64> table_;
  uint64_t rx_ = 0, tx_ = 0, tx_bytes_ = 0, drop_ = 0, drop_bytes_ = 0, untracked_ = 0, not_ip_ = 0;
};

}  // namespace nfpark::nf
