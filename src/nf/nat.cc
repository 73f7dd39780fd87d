#include "nf/nat.h"

#include <algorithm>
#include <array>
#include <bit>

#include "core/bytes.h"
#include "nf/rewrite.h"

namespace nfpark::nf {
namespace {

constexpr uint32_t kNone = UINT32_MAX;
constexpr uint8_t kIcmpEchoReply = 0, kIcmpEchoRequest = 8;

uint32_t key_v4(const std::array<uint8_t, 16>& a) {
  return load_be32(a.data() + 12);
}
uint32_t addr_hash(uint32_t a) {
  return uint32_t(mix64(a) >> 32);
}

}  // namespace

Nat::Nat(NatConfig cfg)
    : cfg_(std::move(cfg)),
      ports_per_addr_(cfg_.port_max >= cfg_.port_min ? cfg_.port_max - cfg_.port_min + 1u : 0u),
      pools_(cfg_.external.size()),
      reverse_(new uint32_t[cfg_.external.size() << 16]),
      table_(cfg_.max_flows ? cfg_.max_flows : cfg_.external.size() * ports_per_addr_,
             cfg_.idle_timeout, Release{this}) {
  std::fill_n(reverse_.get(), cfg_.external.size() << 16, kNone);
  for (Pool& p : pools_) {
    p.ring.reset(new uint16_t[std::max(ports_per_addr_, 1u)]);
    p.size = ports_per_addr_;
    for (uint32_t i = 0; i < ports_per_addr_; ++i) p.ring[i] = uint16_t(cfg_.port_min + i);
    p.count = ports_per_addr_;
  }
  ext_set_.assign(2 * std::bit_ceil(std::max<size_t>(4 * cfg_.external.size(), 4)), 0);
  ext_mask_ = uint32_t(ext_set_.size() / 2 - 1);
  for (size_t i = 0; i < cfg_.external.size(); ++i) {
    uint32_t h = addr_hash(cfg_.external[i]) & ext_mask_;
    while (ext_set_[2 * h + 1] != 0) h = (h + 1) & ext_mask_;
    ext_set_[2 * h] = cfg_.external[i];
    ext_set_[2 * h + 1] = uint32_t(i + 1);
  }
}

int Nat::external_index(uint32_t addr) const {
  for (uint32_t h = addr_hash(addr) & ext_mask_;; h = (h + 1) & ext_mask_) {
    if (ext_set_[2 * h + 1] == 0) return -1;
    if (ext_set_[2 * h] == addr) return int(ext_set_[2 * h + 1]) - 1;
  }
}

Nat::Dir Nat::classify(const PacketView& p, const FlowKey& k, int& ext_index) const {
  const PacketLayout& L = p.layout;
  if (L.ip_version != 4) return Dir::kPass;
  if (!L.ok() || L.l4_off == 0) return Dir::kDrop;
  if (L.l4_proto == proto::kIcmp) {
    uint8_t type = p.data[L.l4_off];
    if (type != kIcmpEchoRequest && type != kIcmpEchoReply) return Dir::kDrop;
  } else if (!L.has_ports()) {
    return Dir::kDrop;
  }
  ext_index = external_index(key_v4(k.dst));
  if (ext_index >= 0) return Dir::kIn;
  if (cfg_.inside.empty()) return Dir::kOut;
  uint32_t src = key_v4(k.src);
  for (const Prefix4& pf : cfg_.inside)
    if (pf.contains(src)) return Dir::kOut;
  return Dir::kPass;
}

void Nat::process(std::span<PacketView> pkts, std::span<Verdict> verdicts, Nanos now) {
  std::array<FlowKey, kBurst> keys;
  std::array<uint64_t, kBurst> hashes;
  std::array<Dir, kBurst> dirs;
  std::array<int, kBurst> ext;
  const size_t n = std::min(pkts.size(), kBurst);
  // Stage 1: keys, direction, hashes; prefetch the forward table's buckets.
  for (size_t i = 0; i < n; ++i) {
    dirs[i] = Dir::kPass;
    if (verdicts[i] != Verdict::kPass) continue;
    if (!extract_flow_key(pkts[i].data, pkts[i].layout, keys[i]) &&
        pkts[i].layout.ip_version == 4) {
      dirs[i] = Dir::kDrop;
      continue;
    }
    dirs[i] = classify(pkts[i], keys[i], ext[i]);
    if (dirs[i] == Dir::kOut) {
      hashes[i] = table_.hash(keys[i]);
      table_.prefetch_buckets(hashes[i]);
    } else if (dirs[i] == Dir::kIn) {
      __builtin_prefetch(&reverse(size_t(ext[i]), keys[i].dport));
    }
  }
  for (size_t i = 0; i < n; ++i)  // stage 2: the tags have arrived; prefetch the entries
    if (dirs[i] == Dir::kOut) table_.prefetch_entry(hashes[i]);
  // Stage 3: translate.
  for (size_t i = 0; i < n; ++i) {
    if (verdicts[i] != Verdict::kPass) continue;
    bool ok = true;
    switch (dirs[i]) {
      case Dir::kPass:
        ++passthrough_;
        break;
      case Dir::kDrop:
        ++drop_unsupported_;
        ok = false;
        break;
      case Dir::kOut:
        ok = outbound(pkts[i], keys[i], hashes[i], now);
        break;
      case Dir::kIn:
        ok = inbound(pkts[i], keys[i], ext[i], now);
        break;
    }
    if (!ok) verdicts[i] = Verdict::kDrop;
  }
  table_.sweep(now, table_.kSweepPerBurst);
}

bool Nat::outbound(PacketView& p, const FlowKey& k, uint64_t h, Nanos now) {
  bool inserted = false;
  uint32_t s = table_.find_or_insert(k, h, now, inserted);
  if (s == Table::kNone) {
    ++drop_table_;
    return false;
  }
  Mapping& m = table_.at(s).value;
  if (inserted) {
    if (!allocate(key_v4(k.src), m, now)) {
      table_.erase(s);
      ++drop_pool_;
      return false;
    }
    reverse(m.addr_index, m.ext_port) = s;
    ++created_;
  }
  set_ipv4_src(p, m.ext_addr);
  set_l4_u16(p, p.layout.l4_proto == proto::kIcmp ? 4 : 0, m.ext_port);  // RFC 3022 §4.1
  ++outbound_;
  return true;
}

bool Nat::inbound(PacketView& p, const FlowKey& k, int ext_index, Nanos now) {
  uint32_t s = reverse(size_t(ext_index), k.dport);
  if (s == kNone || !table_.live(s, now)) {
    ++drop_no_mapping_;
    return false;
  }
  auto& e = table_.at(s);
  // Endpoint-dependent filtering: the packet must come from the flow's remote end.
  bool icmp = k.proto == proto::kIcmp;
  if (e.key.proto != k.proto || e.key.dst != k.src || (!icmp && e.key.dport != k.sport)) {
    ++drop_no_mapping_;
    return false;
  }
  e.last_seen = now;
  set_ipv4_dst(p, key_v4(e.key.src));
  set_l4_u16(p, icmp ? 4 : 2, e.key.sport);
  ++inbound_;
  return true;
}

bool Nat::allocate(uint32_t src_addr, Mapping& m, Nanos now) {
  const size_t n = pools_.size();
  if (n == 0) return false;
  const size_t pref = addr_hash(src_addr) % n;  // RFC 4787 REQ-2: paired pooling
  size_t a = pref;
  for (size_t i = 0; i < n && pools_[a].count == 0; ++i) a = (a + 1) % n;
  if (pools_[a].count == 0) {
    if (!reclaim(pref, now)) return false;
    a = pref;
  }
  Pool& p = pools_[a];
  m.ext_port = p.ring[p.head];
  p.head = (p.head + 1) % p.size;
  --p.count;
  m.addr_index = uint8_t(a);
  m.ext_addr = cfg_.external[a];
  return true;
}

// Probes up to reclaim_probe allocated ports of address `a` for idle flows (each expiry returns
// its port to the pool through release()). The cursor persists, so repeated probes cover the
// whole range: an exhausted pool recovers as soon as one of its flows has expired.
bool Nat::reclaim(size_t a, Nanos now) {
  Pool& p = pools_[a];
  if (ports_per_addr_ == 0) return false;
  for (uint32_t i = 0; i < cfg_.reclaim_probe && p.count == 0; ++i) {
    uint16_t port = uint16_t(cfg_.port_min + p.probe);
    p.probe = (p.probe + 1) % ports_per_addr_;
    uint32_t s = reverse(a, port);
    if (s != kNone && !table_.live(s, now)) ++reclaimed_;
  }
  return p.count > 0;
}

void Nat::release(const Mapping& m) {
  Pool& p = pools_[m.addr_index];
  p.ring[(p.head + p.count) % p.size] = m.ext_port;
  ++p.count;
  reverse(m.addr_index, m.ext_port) = kNone;
}

void Nat::counters(const CounterSink& sink) const {
  sink("outbound", outbound_);
  sink("inbound", inbound_);
  sink("passthrough", passthrough_);
  sink("flows_active", table_.size());
  sink("flows_created", created_);
  sink("flows_expired", table_.expired_count());
  sink("ports_reclaimed", reclaimed_);
  sink("drop.pool_exhausted", drop_pool_);
  sink("drop.table_full", drop_table_);
  sink("drop.no_mapping", drop_no_mapping_);
  sink("drop.unsupported", drop_unsupported_);
}

}  // namespace nfpark::nf
