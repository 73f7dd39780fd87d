#include "nf/counter.h"

#include <algorithm>
#include <array>

#include "nf/keyed_burst.h"

namespace nfpark::nf {

void FlowCounter::process(std::span<PacketView> pkts, std::span<Verdict> verdicts, Nanos now) {
  KeyedBurst b;
  b.prepare(table_, pkts, verdicts);
  const size_t n = b.size;
  auto& keys = b.keys;
  auto& hashes = b.hashes;
  auto& keyed = b.keyed;
  for (size_t i = 0; i < n; ++i) {
    if (verdicts[i] != Verdict::kPass) continue;
    const uint32_t bytes = pkts[i].wire_len;
    ++packets_;
    bytes_ += bytes;
    if (!keyed[i]) {
      ++not_ip_;
      continue;
    }
    bool inserted = false;
    uint32_t s = table_.find_or_insert(keys[i], hashes[i], now, inserted);
    if (s == table_.kNone) {
      ++untracked_;
      continue;
    }
    created_ += inserted;
    FlowStats& st = table_.at(s).value;
    ++st.packets;
    st.bytes += bytes;
  }
  table_.sweep(now, table_.kSweepPerBurst);
}

const FlowStats* FlowCounter::find(const FlowKey& k, Nanos now) {
  uint32_t s = table_.find(k, table_.hash(k), now, /*touch=*/false);
  return s == table_.kNone ? nullptr : &table_.at(s).value;
}

void FlowCounter::counters(const CounterSink& sink) const {
  sink("packets", packets_);
  sink("bytes", bytes_);
  sink("flows_active", table_.size());
  sink("flows_created", created_);
  sink("flows_expired", table_.expired_count());
  sink("untracked", untracked_);
  sink("not_ip", not_ip_);
}

}  // namespace nfpark::nf
