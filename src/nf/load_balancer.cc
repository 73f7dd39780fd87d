#include "nf/load_balancer.h"

#include <algorithm>
#include <cstring>

#include "core/bytes.h"
#include "nf/rewrite.h"
#include "nf/run_burst.h"
#include "nf/run_state.h"

namespace nfpark::nf {
std::vector<LbBackend> LbConfig::default_backends() {
  std::vector<LbBackend> v;
  for (uint8_t i = 1; i <= 4; ++i) v.push_back({0x0A0A0000u | i, {0x02, 0, 0x0A, 0x0A, 0, i}, 1});
  return v;
}

LoadBalancer::LoadBalancer(LbConfig cfg)
    : backends_(std::move(cfg.backends)),
      vips_(std::move(cfg.vips)),
      maglev_(cfg.table_size),
      conns_(cfg.max_flows, cfg.idle_timeout) {
  std::sort(vips_.begin(), vips_.end());
  rebuild();
}

void LoadBalancer::rebuild() {
  std::vector<uint64_t> ids;
  std::vector<uint32_t> weights;
  for (const LbBackend& b : backends_) {
    ids.push_back(b.addr);
    weights.push_back(b.weight);
  }
  maglev_.build(ids, weights);
}

void LoadBalancer::add_backend(const LbBackend& b) {
  auto it = std::find_if(backends_.begin(), backends_.end(),
                         [&](const LbBackend& x) { return x.addr == b.addr; });
  if (it != backends_.end())
    *it = b;
  else
    backends_.push_back(b);
  rebuild();
}

bool LoadBalancer::remove_backend(uint32_t addr) {
  for (LbBackend& b : backends_) {
    if (b.addr == addr && b.weight != 0) {
      b.weight = 0;
      rebuild();
      return true;
    }
  }
  return false;
}

bool LoadBalancer::is_vip(uint32_t dst) const {
  return vips_.empty() || std::binary_search(vips_.begin(), vips_.end(), dst);
}

uint32_t LoadBalancer::pick(const FlowKey& k, uint64_t h, Nanos now, bool& pinned) {
  bool inserted = false;
  uint32_t s = conns_.find_or_insert(k, h, now, inserted);
  pinned = s != conns_.kNone;
  if (!pinned) {
    ++table_full_;
    return maglev_.lookup(h);
  }
  uint32_t& b = conns_.at(s).value;
  if (inserted) {
    b = maglev_.lookup(h);
    ++new_flows_;
  } else if (b >= backends_.size() || backends_[b].weight == 0) {
    b = maglev_.lookup(h);
    ++rerouted_;
  }
  return b;
}

bool LoadBalancer::mine(const PacketView& p, const FlowKey& k) const {
  return p.layout.ip_version == 4 && is_vip(load_be32(k.dst.data() + 12));
}

void LoadBalancer::rewrite(PacketView& p, uint32_t b) {
  if (b >= backends_.size()) {  // no backend at all
    ++passthrough_;
    return;
  }
  const LbBackend& be = backends_[b];
  set_ipv4_dst(p, be.addr);
  std::memcpy(p.data, be.mac.data(), 6);
  ++balanced_;
}

void LoadBalancer::process(std::span<PacketView> pkts, std::span<Verdict> verdicts, Nanos now) {
  std::array<FlowKey, kBurst> keys;
  std::array<uint64_t, kBurst> hashes;
  std::array<bool, kBurst> ours;
  const size_t n = std::min(pkts.size(), kBurst);
  for (size_t i = 0; i < n; ++i) {  // stage 1: hash all, prefetch buckets
    ours[i] = false;
    if (verdicts[i] != Verdict::kPass) continue;
    const PacketView& p = pkts[i];
    if (p.layout.ip_version != 4 || !extract_flow_key(p.data, p.layout, keys[i]) ||
        !mine(p, keys[i])) {
      ++passthrough_;
      continue;
    }
    ours[i] = true;
    hashes[i] = conns_.hash(keys[i]);
    conns_.prefetch_buckets(hashes[i]);
  }
  for (size_t i = 0; i < n; ++i)  // stage 2: the tags have arrived; prefetch the entries
    if (ours[i]) conns_.prefetch_entry(hashes[i]);
  for (size_t i = 0; i < n; ++i) {  // stage 3: pick and rewrite
    if (!ours[i]) continue;
    bool pinned;
    rewrite(pkts[i], pick(keys[i], hashes[i], now, pinned));
  }
  conns_.sweep(now, conns_.kSweepPerBurst);
}

void LoadBalancer::process_runs(std::span<PacketView> pkts, std::span<Verdict> verdicts,
                                const FlowRuns& runs, Nanos now) {
  // process()'s three stages, a shared run taking one slot: its first live packet decides.
  std::array<FlowKey, kBurst> keys;  // solo packets' own keys
  std::array<uint64_t, kBurst> hashes;
  std::array<bool, kBurst> ours;
  for (size_t r = 0; r < runs.count; ++r) {  // stage 1: whose flows are balanced; prefetch
    const size_t first = runs.begin(r);
    for (size_t i = runs.begin(r); i < runs.end(r); ++i) {
      ours[i] = false;
      if (verdicts[i] != Verdict::kPass) continue;
      const PacketView& p = pkts[i];
      if (runs.solo[r]) {
        if (!extract_flow_key(p.data, p.layout, keys[i]) || !mine(p, keys[i])) {
          ++passthrough_;
          continue;
        }
        hashes[i] = conns_.hash(keys[i]);
      } else if (!mine(p, runs.keys[r])) {
        ++passthrough_;
        continue;
      } else {
        hashes[i] = runs.hashes[r];
      }
      ours[i] = true;
      if (runs.solo[r] || i == first) conns_.prefetch_buckets(hashes[i]);
    }
  }
  for (size_t r = 0; r < runs.count; ++r)  // stage 2: once per run
    for (size_t i = runs.begin(r); i < runs.end(r); ++i)
      if (ours[i] && (runs.solo[r] || i == runs.begin(r))) conns_.prefetch_entry(hashes[i]);
  for (size_t r = 0; r < runs.count; ++r) {  // stage 3: pick once per run, rewrite each packet
    uint32_t backend = 0;
    bool pinned = false;  // the run's backend is fixed (found or pinned at this `now`)
    for (size_t i = runs.begin(r); i < runs.end(r); ++i) {
      if (!ours[i]) continue;
      if (!pinned) {
        backend = pick(runs.solo[r] ? keys[i] : runs.keys[r], hashes[i], now, pinned);
        pinned = pinned && !runs.solo[r];
      }
      rewrite(pkts[i], backend);
    }
  }
  conns_.sweep(now, conns_.kSweepPerBurst);
}

void LoadBalancer::export_state(std::vector<uint8_t>& out) const {
  export_table(conns_, out);
  for (uint64_t v : {balanced_, new_flows_, rerouted_, table_full_, passthrough_})
    put_state(out, v);
}

void LoadBalancer::counters(const CounterSink& sink) const {
  sink("balanced", balanced_);
  sink("new_flows", new_flows_);
  sink("rerouted", rerouted_);
  sink("flows_active", conns_.size());
  sink("flows_expired", conns_.expired_count());
  sink("conn_table_full", table_full_);
  sink("passthrough", passthrough_);
}

}  // namespace nfpark::nf
