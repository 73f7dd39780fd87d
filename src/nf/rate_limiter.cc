#include "nf/rate_limiter.h"

#include <algorithm>
#include <array>

#include "nf/keyed_burst.h"
#include "nf/run_burst.h"
#include "nf/run_state.h"

namespace nfpark::nf {
namespace {
constexpr int64_t kGiga = 1'000'000'000;
}

RateLimiter::RateLimiter(RateLimiterConfig cfg)
    : rate_(int64_t(std::clamp<uint64_t>(cfg.rate_bps, 1, cfg.kMaxRateBps))),
      cap_(int64_t(std::clamp<uint64_t>(cfg.burst_bytes, 1, cfg.kMaxBurstBytes)) * 8 * kGiga),
      full_after_(cap_ / rate_ + 1),
      table_(cfg.max_flows, cfg.idle_timeout) {}

bool RateLimiter::conform(Bucket& b, bool fresh, uint32_t wire_len, Nanos now) {
  if (fresh) {
    b.tokens = cap_;
  } else {
    Nanos dt = now - b.last;
    if (dt >= full_after_)
      b.tokens = cap_;
    else if (dt > 0)
      b.tokens = std::min(cap_, b.tokens + dt * rate_);
  }
  if (fresh || now > b.last) b.last = now;
  const int64_t cost = int64_t(wire_len) * 8 * kGiga;
  if (b.tokens < cost) return false;
  b.tokens -= cost;
  return true;
}

RateLimiter::Bucket* RateLimiter::meter(const FlowKey& k, uint64_t h, uint32_t wire_len, Nanos now,
                                        bool& pass) {
  bool inserted = false;
  uint32_t s = table_.find_or_insert(k, h, now, inserted);
  if (s == table_.kNone) {
    ++untracked_;
    pass = true;
    return nullptr;
  }
  Bucket& b = table_.at(s).value;
  pass = conform(b, inserted, wire_len, now);
  return &b;
}

void RateLimiter::account(Verdict& v, uint32_t len, bool pass) {
  if (pass) {
    ++tx_;
    tx_bytes_ += len;
  } else {
    ++drop_;
    drop_bytes_ += len;
    v = Verdict::kDrop;
  }
}

void RateLimiter::process(std::span<PacketView> pkts, std::span<Verdict> verdicts, Nanos now) {
  KeyedBurst b;
  b.prepare(table_, pkts, verdicts);
  for (size_t i = 0; i < b.size; ++i) {
    if (verdicts[i] != Verdict::kPass) continue;
    const uint32_t len = pkts[i].wire_len;
    ++rx_;
    bool pass = true;
    if (!b.keyed[i])
      ++not_ip_;
    else
      meter(b.keys[i], b.hashes[i], len, now, pass);
    account(verdicts[i], len, pass);
  }
  table_.sweep(now, table_.kSweepPerBurst);
}

void RateLimiter::process_runs(std::span<PacketView> pkts, std::span<Verdict> verdicts,
                               const FlowRuns& runs, Nanos now) {
  // process()'s stages, a shared run taking one lookup: its first live packet's.
  std::array<FlowKey, kBurst> keys;  // solo packets' own keys
  std::array<uint64_t, kBurst> hashes;
  std::array<bool, kBurst> keyed;
  hash_and_prefetch_runs(pkts, verdicts, runs, table_, keys, hashes, keyed);  // stages 1, 2
  for (size_t r = 0; r < runs.count; ++r) {                                   // stage 3: meter
    Bucket* bucket = nullptr;  // the run's bucket, once a packet found or made it
    for (size_t i = runs.begin(r); i < runs.end(r); ++i) {
      if (verdicts[i] != Verdict::kPass) continue;
      const uint32_t len = pkts[i].wire_len;
      ++rx_;
      bool pass = true;
      if (bucket)  // found at this `now`: a lookup again would only find it again
        pass = conform(*bucket, false, len, now);
      else if (!keyed[i])
        ++not_ip_;
      else if (runs.solo[r])
        meter(keys[i], hashes[i], len, now, pass);
      else
        bucket = meter(runs.keys[r], hashes[i], len, now, pass);
      account(verdicts[i], len, pass);
    }
  }
  table_.sweep(now, table_.kSweepPerBurst);
}

void RateLimiter::export_state(std::vector<uint8_t>& out) const {
  export_table(table_, out);
  for (uint64_t v : {rx_, tx_, tx_bytes_, drop_, drop_bytes_, untracked_, not_ip_})
    put_state(out, v);
}

void RateLimiter::counters(const CounterSink& sink) const {
  sink("rx", rx_);
  sink("tx", tx_);
  sink("tx_bytes", tx_bytes_);
  sink("drop.rate_exceeded", drop_);
  sink("drop_bytes", drop_bytes_);
  sink("flows_active", table_.size());
  sink("flows_expired", table_.expired_count());
  sink("untracked", untracked_);
  sink("not_ip", not_ip_);
}

}  // namespace nfpark::nf
