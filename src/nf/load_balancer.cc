#include "nf/load_balancer.h"

#include <algorithm>
#include <cstring>

#include "core/bytes.h"
#include "nf/rewrite.h"

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

uint32_t LoadBalancer::pick(PacketView&, const FlowKey& k, uint64_t h, Nanos now) {
  bool inserted = false;
  uint32_t s = conns_.find_or_insert(k, h, now, inserted);
  if (s == conns_.kNone) {
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

void LoadBalancer::process(std::span<PacketView> pkts, std::span<Verdict> verdicts, Nanos now) {
  std::array<FlowKey, kBurst> keys;
  std::array<uint64_t, kBurst> hashes;
  std::array<bool, kBurst> mine;
  const size_t n = std::min(pkts.size(), kBurst);
  for (size_t i = 0; i < n; ++i) {  // stage 1: hash all, prefetch buckets
    mine[i] = false;
    if (verdicts[i] != Verdict::kPass) continue;
    const PacketView& p = pkts[i];
    if (p.layout.ip_version != 4 || !extract_flow_key(p.data, p.layout, keys[i]) ||
        !is_vip(load_be32(keys[i].dst.data() + 12))) {
      ++passthrough_;
      continue;
    }
    mine[i] = true;
    hashes[i] = conns_.hash(keys[i]);
    conns_.prefetch_buckets(hashes[i]);
  }
  for (size_t i = 0; i < n; ++i)  // stage 2: the tags have arrived; prefetch the entries
    if (mine[i]) conns_.prefetch_entry(hashes[i]);
  for (size_t i = 0; i < n; ++i) {  // stage 3: pick and rewrite
    if (!mine[i]) continue;
    uint32_t b = pick(pkts[i], keys[i], hashes[i], now);
    if (b >= backends_.size()) {  // no backend at all
      ++passthrough_;
      continue;
    }
    const LbBackend& be = backends_[b];
    set_ipv4_dst(pkts[i], be.addr);
    std::memcpy(pkts[i].data, be.mac.data(), 6);
    ++balanced_;
  }
  conns_.sweep(now, conns_.kSweepPerBurst);
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
