#include "nf/rate_limiter.h"

#include <algorithm>
#include <array>

#include "nf/keyed_burst.h"

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

void RateLimiter::process(std::span<PacketView> pkts, std::span<Verdict> verdicts, Nanos now) {
  KeyedBurst b;
  b.prepare(table_, pkts, verdicts);
  const size_t n = b.size;
  auto& keys = b.keys;
  auto& hashes = b.hashes;
  auto& keyed = b.keyed;
  for (size_t i = 0; i < n; ++i) {
    if (verdicts[i] != Verdict::kPass) continue;
    const uint32_t len = pkts[i].wire_len;
    ++rx_;
    bool pass = true;
    if (!keyed[i]) {
      ++not_ip_;
    } else {
      bool inserted = false;
      uint32_t s = table_.find_or_insert(keys[i], hashes[i], now, inserted);
      if (s == table_.kNone)
        ++untracked_;
      else
        pass = conform(table_.at(s).value, inserted, len, now);
    }
    if (pass) {
      ++tx_;
      tx_bytes_ += len;
    } else {
      ++drop_;
      drop_bytes_ += len;
      verdicts[i] = Verdict::kDrop;
    }
  }
  table_.sweep(now, table_.kSweepPerBurst);
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
