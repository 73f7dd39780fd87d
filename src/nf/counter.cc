#include "nf/counter.h"

#include <algorithm>
#include <array>

#include "nf/keyed_burst.h"
#include "nf/run_burst.h"
#include "nf/run_state.h"

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
    count(keys[i], hashes[i], 1, bytes, now);
  }
  table_.sweep(now, table_.kSweepPerBurst);
}

bool FlowCounter::count(const FlowKey& k, uint64_t h, uint64_t packets, uint64_t bytes, Nanos now) {
  bool inserted = false;
  uint32_t s = table_.find_or_insert(k, h, now, inserted);
  if (s == table_.kNone) {
    ++untracked_;
    return false;
  }
  created_ += inserted;
  FlowStats& st = table_.at(s).value;
  st.packets += packets;
  st.bytes += bytes;
  return true;
}

void FlowCounter::process_runs(std::span<PacketView> pkts, std::span<Verdict> verdicts,
                               const FlowRuns& runs, Nanos now) {
  // process()'s stages, a shared run taking one lookup: its first live packet's.
  std::array<FlowKey, kBurst> keys;  // solo packets' own keys
  std::array<uint64_t, kBurst> hashes;
  std::array<bool, kBurst> keyed;
  hash_and_prefetch_runs(pkts, verdicts, runs, table_, keys, hashes, keyed);  // stages 1, 2
  for (size_t r = 0; r < runs.count; ++r) {                                   // stage 3: count
    const size_t end = runs.end(r);
    if (runs.solo[r]) {
      for (size_t i = runs.begin(r); i < end; ++i) {
        if (verdicts[i] != Verdict::kPass) continue;
        const uint32_t bytes = pkts[i].wire_len;
        ++packets_;
        bytes_ += bytes;
        if (keyed[i])
          count(keys[i], hashes[i], 1, bytes, now);
        else
          ++not_ip_;
      }
      continue;
    }
    // A shared run: its live packets and bytes summed, then one lookup adds them (a lookup
    // again at this `now` would only find the entry again). When the table is full the rest
    // of the run retries packet by packet, as process() does.
    size_t lead = end;
    uint64_t live = 0, bytes = 0;
    for (size_t i = runs.begin(r); i < end; ++i) {
      if (verdicts[i] != Verdict::kPass) continue;
      lead = std::min(lead, i);
      ++live;
      bytes += pkts[i].wire_len;
    }
    if (live == 0) continue;
    packets_ += live;
    bytes_ += bytes;
    if (count(runs.keys[r], hashes[lead], live, bytes, now)) continue;
    for (size_t i = lead + 1; i < end; ++i)
      if (verdicts[i] == Verdict::kPass)
        count(runs.keys[r], hashes[lead], 1, pkts[i].wire_len, now);
  }
  table_.sweep(now, table_.kSweepPerBurst);
}

void FlowCounter::prefetch_runs(const FlowRuns& runs) const {
  prefetch_run_buckets(runs, table_);
}

void FlowCounter::export_state(std::vector<uint8_t>& out) const {
  export_table(table_, out);
  for (uint64_t v : {packets_, bytes_, created_, untracked_, not_ip_}) put_state(out, v);
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
