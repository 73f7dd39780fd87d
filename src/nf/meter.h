// Element:  Meter — srTCM (RFC 2697) or trTCM (RFC 2698) colour-blind metering, globally or per
//           flow; the colour is written into the DSCP field and red may be dropped.
// Ports:    in[0] headers -> out[0] coloured               diagram:  in0 --> [Meter] --> out0
// Config:   mode srtcm|trtcm (default srtcm) · cir, pir in bytes/s (default 125e6 = 1 Gbit/s,
//           pir 250e6) · cbs, ebs, pbs in bytes (default 150000 each) · per_flow (default false)
//           · max_flows (default 65536) · green_dscp/yellow_dscp/red_dscp 0..63 or -1 = leave
//           (default 10/12/14 = AF11/AF12/AF13, RFC 2597) · drop_red (default false)
// Time:     uses `now` per burst; no timers.  State: one bucket pair, or a 4-way table of flows.
// Counters: rx, green, yellow, red, drop.red, flows_evicted
// Cost:     ~5 ns/pkt over forward global (nf_bench --quick); per flow + one hash and a
//           probe of 4 ways.
// Runs:     per flow, one table probe per run of a flow (run_burst.h), then each packet marked
//           on the buckets found: the colours are the packet-by-packet colours.
// Refs:     RFC 2697, RFC 2698, RFC 2597 (AF DSCPs), RFC 1624.
//
// Theory of operation. Packet size B is the original frame length (wire_len), not the bytes
// held. Token counts are kept exactly as bytes×1e9 so that a refill after dt ns adds dt×rate
// with no rounding; buckets start full (RFC 2697 §3) and refill continuously — the fluid form of
// the RFC's "CIR times per second" increments; srTCM overflow from C goes to E (RFC 2697 §3).
// Per flow: a flow's buckets live in a 4-way set-associative table (key = 5-tuple); a new flow
// takes a free way or evicts the way idle longest (counted) and starts with full buckets.
// Memory: 72 B per flow entry. DSCP rewrite patches the IPv4 header checksum (RFC 1624); IPv6
// has none, and L4 checksums do not cover DSCP.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/flow_key.h"
#include "nf/nf.h"
#include "nf/toml_fwd.h"

namespace nfpark::nf {

enum class Colour : uint8_t { kGreen = 0, kYellow = 1, kRed = 2 };

struct MeterConfig {
  enum class Mode : uint8_t { kSrTcm, kTrTcm } mode = Mode::kSrTcm;
  uint64_t cir = 125'000'000, pir = 250'000'000;         // bytes per second
  uint64_t cbs = 150'000, ebs = 150'000, pbs = 150'000;  // bytes
  bool per_flow = false;
  uint32_t max_flows = 65536;
  int green_dscp = 10, yellow_dscp = 12, red_dscp = 14;  // -1: leave DSCP unchanged
  bool drop_red = false;

  bool validate(std::string& error) const;
  static bool parse(const toml::table& t, MeterConfig& out, std::string& error);
};

// The two-bucket state machine of one meter (exact integer arithmetic).
class TcmBuckets {
 public:
  void reset(const MeterConfig& cfg, Nanos now);  // full buckets
  Colour mark(const MeterConfig& cfg, Nanos now, uint32_t bytes);
  // Tokens in bytes (rounded down), for tests: C/E (srTCM) or C/P (trTCM).
  uint64_t c_bytes() const { return c_ / kScale; }
  uint64_t other_bytes() const { return o_ / kScale; }
  void export_state(std::vector<uint8_t>& out) const {
    put_state(out, last_);
    put_state(out, c_);
    put_state(out, o_);
  }

 private:
  static constexpr uint64_t kScale = 1'000'000'000;  // tokens are bytes × 1e9
  Nanos last_ = 0;
  uint64_t c_ = 0, o_ = 0;  // committed; excess (srTCM) or peak (trTCM)
};

class Meter final : public Nf {
 public:
  static std::unique_ptr<Meter> create(const MeterConfig& cfg, std::string& error);
  std::string_view name() const override { return "meter"; }
  void process(std::span<PacketView> pkts, std::span<Verdict> verdicts, Nanos now) override;
  void process_runs(std::span<PacketView> pkts, std::span<Verdict> verdicts, const FlowRuns& runs,
                    Nanos now) override;
  bool run_aware() const override { return cfg_.per_flow; }
  bool rewrites_flow_key() const override { return false; }
  void counters(const CounterSink& sink) const override;
  void export_state(std::vector<uint8_t>& out) const override;

 private:
  struct Entry {
    FlowKey key;
    TcmBuckets b;
    bool used = false;
  };
  explicit Meter(const MeterConfig& cfg);
  TcmBuckets& flow_buckets(const FlowKey& k, uint64_t h, Nanos now);
  // Marks one live packet on buckets `b`: colour, DSCP, drop of red.
  void mark(PacketView& p, Verdict& v, TcmBuckets& b, Nanos now);
  static void set_dscp(PacketView& p, int dscp);

  MeterConfig cfg_;
  TcmBuckets global_;
  std::vector<Entry> table_;  // sets of 4 ways
  std::vector<Nanos> seen_;   // last use per entry
  size_t set_mask_ = 0;
  uint64_t rx_ = 0, colours_[3] = {0, 0, 0}, dropped_ = 0, evicted_ = 0;
};

}  // namespace nfpark::nf
