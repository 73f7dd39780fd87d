#include "nf/nat.h"

#include <algorithm>
#include <array>
#include <bit>
#include <string>

#include "core/bytes.h"
#include "core/checksum.h"
#include "core/hot_path.h"
#include "nf/nat_icmp.h"
#include "nf/rewrite.h"
#include "nf/run_burst.h"
#include "nf/run_state.h"

namespace nfpark::nf {
namespace {

// Unless max_flows is set (then the table is sized for it up front), the flow table starts with
// room for this many flows (662 buckets, 1.3 MiB) and doubles as flows arrive.
constexpr size_t kInitialFlows = 16384;

uint32_t key_v4(const std::array<uint8_t, 16>& a) {
  return load_be32(a.data() + 12);
}

}  // namespace

std::vector<uint32_t> default_nat_external() {
  std::vector<uint32_t> v;
  for (uint32_t i = 1; i <= 16; ++i) v.push_back(0xC6120000u + i);  // 198.18.0.i
  return v;
}

Nat::Nat(NatConfig cfg)
    : cfg_(std::move(cfg)),
      ports_per_addr_(cfg_.port_max >= cfg_.port_min ? cfg_.port_max - cfg_.port_min + 1u : 0u),
      max_flows_(cfg_.max_flows ? cfg_.max_flows : cfg_.external.size() * ports_per_addr_),
      capacity_(cfg_.max_flows ? max_flows_ : std::min(max_flows_, kInitialFlows)),
      pools_(cfg_.external.size()),
      reverse_(new uint32_t[cfg_.external.size() << 16]),
      table_(capacity_, cfg_.idle_timeout, Release{this}),
      frags_(cfg_.frag_states, cfg_.frag_timeout) {
  std::fill_n(reverse_.get(), cfg_.external.size() << 16, kNoSlot);
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

NFPARK_HOT_INLINE Nat::Step Nat::classify(const PacketView& p, FlowKey& k, int& ext_index,
                                          const FlowKey* known) const {
  const PacketLayout& L = p.layout;
  if (L.ip_version != 4) return Step::kPass;
  if (!L.ok()) return Step::kMalformed;
  if (!L.first_fragment) return Step::kLater;
  Step out = Step::kOut, in = Step::kIn;
  if (L.l4_proto == proto::kIcmp) {
    const IcmpKind kind = icmp_kind(p.data[L.l4_off]);
    if (kind == IcmpKind::kError) out = Step::kErrorOut, in = Step::kErrorIn;
    if (kind == IcmpKind::kOther) out = in = Step::kOther;
  } else if (L.l4_proto != proto::kTcp && L.l4_proto != proto::kUdp) {
    out = in = Step::kOther;
  }
  const uint8_t* ip = p.data + L.l3_off;
  const Dir d = direction(load_be32(ip + 12), load_be32(ip + 16), ext_index);
  if (d == Dir::kPass) return Step::kPass;
  if (out == Step::kOut) {
    if (known)
      k = *known;
    else
      extract_flow_key(p.data, L, k);
  }
  return d == Dir::kOut ? out : in;
}

NFPARK_HOT_INLINE bool Nat::translate(PacketView& p, Step s, const FlowKey& k, uint64_t h, int ext,
                                      Nanos now, uint32_t* slot) {
  if (s == Step::kOut) [[likely]]
    return outbound(p, k, h, now, slot);
  switch (s) {
    case Step::kIn:
      return inbound(p, k, ext, now, slot);
    case Step::kPass:
      ++passthrough_;
      return true;
    case Step::kErrorOut:
      return error_outbound(p, now);
    case Step::kErrorIn:
      return error_inbound(p, now);
    case Step::kOther:
      return other(p);
    case Step::kMalformed:
      ++drop_malformed_;
      return false;
    case Step::kOut:
    case Step::kLater:
      break;
  }
  return true;
}

NFPARK_HOT_INLINE void Nat::translate_one(PacketView& p, Verdict& v, Step s, const FlowKey& k,
                                          uint64_t h, int ext, Nanos now) {
  const bool frag = p.layout.fragment;
  uint32_t src = 0, dst = 0;
  if (frag) [[unlikely]] {
    src = load_be32(p.data + p.layout.l3_off + 12);
    dst = load_be32(p.data + p.layout.l3_off + 16);
  }
  const bool ok = translate(p, s, k, h, ext, now);
  if (frag && s != Step::kPass) [[unlikely]]  // IPv4 (IPv6 is kPass), header whole
    remember_first(p, src, dst, ok, now);
  if (!ok) v = Verdict::kDrop;
}

void Nat::process(std::span<PacketView> pkts, std::span<Verdict> verdicts, Nanos now) {
  const size_t n = std::min(pkts.size(), kBurst);
  if (table_.size() + n > capacity_ && capacity_ < max_flows_) grow();
  std::array<FlowKey, kBurst> keys;
  std::array<uint64_t, kBurst> hashes;
  std::array<Step, kBurst> steps;
  std::array<int, kBurst> ext;
  bool later = false;
  // Stage 1: what each packet is; hash and prefetch the forward table's buckets.
  for (size_t i = 0; i < n; ++i) {
    steps[i] = Step::kPass;
    hashes[i] = 0;
    ext[i] = -1;
    if (verdicts[i] != Verdict::kPass) continue;
    steps[i] = classify(pkts[i], keys[i], ext[i]);
    if (steps[i] == Step::kOut) {
      hashes[i] = table_.hash(keys[i]);
      table_.prefetch_buckets(hashes[i]);
    } else if (steps[i] == Step::kIn) {
      prefetch_line(&reverse(size_t(ext[i]), keys[i].dport));
    } else if (steps[i] == Step::kLater) {
      later = true;
    }
  }
  for (size_t i = 0; i < n; ++i)  // stage 2: the tags have arrived; prefetch the entries
    if (steps[i] == Step::kOut) table_.prefetch_entry(hashes[i]);
  // Stage 3: translate. A first fragment leaves a note for the datagram's later fragments.
  for (size_t i = 0; i < n; ++i)
    if (verdicts[i] == Verdict::kPass && steps[i] != Step::kLater)
      translate_one(pkts[i], verdicts[i], steps[i], keys[i], hashes[i], ext[i], now);
  // Stage 4: later fragments, after every first fragment of the burst.
  if (later) [[unlikely]] {
    for (size_t i = 0; i < n; ++i)
      if (steps[i] == Step::kLater && verdicts[i] == Verdict::kPass && !follow_first(pkts[i], now))
        verdicts[i] = Verdict::kDrop;
  }
  table_.sweep(now, table_.kSweepPerBurst);
}

// The runs of a burst (run_burst.h): each shared run is classified and looked up once, by its
// first live packet, and its other packets reuse the slot that packet's translation used. A
// translation that used no slot (passthrough, other protocols) or failed (pool or table full,
// no mapping) is done again for the next packet, exactly as process() would. Solo packets take
// process()'s path; later fragments still wait for stage 4.
void Nat::process_runs(std::span<PacketView> pkts, std::span<Verdict> verdicts,
                       const FlowRuns& runs, Nanos now) {
  const size_t n = std::min(pkts.size(), kBurst);
  if (table_.size() + n > capacity_ && capacity_ < max_flows_) grow();
  std::array<FlowKey, kBurst> keys;  // per solo packet, or at a shared run's first packet
  std::array<uint64_t, kBurst> hashes;
  std::array<Step, kBurst> steps;
  std::array<int, kBurst> ext;
  bool later = false;
  for (size_t i = 0; i < n; ++i) steps[i] = Step::kPass, hashes[i] = 0, ext[i] = -1;
  for (size_t r = 0; r < runs.count; ++r) {  // stage 1: classify, prefetch
    for (size_t i = runs.begin(r); i < runs.end(r); ++i) {
      if (verdicts[i] != Verdict::kPass) continue;
      const bool solo = runs.solo[r];
      steps[i] = classify(pkts[i], keys[i], ext[i], solo ? nullptr : &runs.keys[r]);
      if (steps[i] == Step::kOut) {
        hashes[i] = solo ? table_.hash(keys[i]) : runs.hashes[r];
        table_.prefetch_buckets(hashes[i]);
      } else if (steps[i] == Step::kIn) {
        prefetch_line(&reverse(size_t(ext[i]), keys[i].dport));
      } else if (steps[i] == Step::kLater) {
        later = true;
      }
      if (!solo) break;  // the run's first live packet speaks for the run
    }
  }
  for (size_t i = 0; i < n; ++i)  // stage 2
    if (steps[i] == Step::kOut) table_.prefetch_entry(hashes[i]);
  for (size_t r = 0; r < runs.count; ++r) {  // stage 3: translate
    if (runs.solo[r]) {
      for (size_t i = runs.begin(r); i < runs.end(r); ++i)
        if (verdicts[i] == Verdict::kPass && steps[i] != Step::kLater)
          translate_one(pkts[i], verdicts[i], steps[i], keys[i], hashes[i], ext[i], now);
      continue;
    }
    size_t lead = SIZE_MAX;  // the run's first live packet: its step, key, hash hold for all
    uint32_t slot = Table::kNone;
    OutPlan plan;
    bool planned = false;
    for (size_t i = runs.begin(r); i < runs.end(r); ++i) {
      if (verdicts[i] != Verdict::kPass) continue;
      if (lead == SIZE_MAX) lead = i;
      const Step s = steps[lead];
      if (slot != Table::kNone) {  // found at this `now`: a lookup again would find it again
        if (s == Step::kOut) {
          const Mapping& m = table_.at(slot).value;
          if (!planned) plan = out_plan(keys[lead], m), planned = true;
          if (plan.fast)
            rewrite_out_planned(pkts[i], m, plan);
          else
            rewrite_out(pkts[i], m);
        } else {
          rewrite_in(pkts[i], table_.at(slot).key);
        }
        continue;
      }
      if (!translate(pkts[i], s, keys[lead], hashes[lead], ext[lead], now, &slot))
        verdicts[i] = Verdict::kDrop;
    }
  }
  if (later) [[unlikely]] {  // stage 4: later fragments, after every first fragment
    for (size_t i = 0; i < n; ++i)
      if (steps[i] == Step::kLater && verdicts[i] == Verdict::kPass && !follow_first(pkts[i], now))
        verdicts[i] = Verdict::kDrop;
  }
  table_.sweep(now, table_.kSweepPerBurst);
}

void Nat::prefetch_runs(const FlowRuns& runs) const {
  prefetch_run_buckets(runs, table_);  // outbound runs' (an inbound one's is a wasted line)
}

// A shared run's live packets had one key and took one translation (process_runs: the slot of
// its first translated packet, or none for passthrough and other protocols, which leave the key
// alone), so they still share one key: its first live packet's, read once per run.
bool Nat::remap_runs(std::span<const PacketView> pkts, std::span<const Verdict> verdicts,
                     FlowRuns& runs) const {
  for (size_t r = 0; r < runs.count; ++r) {
    if (runs.solo[r]) continue;
    for (size_t i = runs.begin(r); i < runs.end(r); ++i) {
      if (verdicts[i] != Verdict::kPass) continue;
      FlowKey k;
      extract_flow_key(pkts[i].data, pkts[i].layout, k);
      if (!(k == runs.keys[r])) {
        runs.keys[r] = k;
        runs.hashes[r] = FlowKeyHash64{}(k);
      }
      break;
    }
  }
  return true;
}

bool Nat::outbound(PacketView& p, const FlowKey& k, uint64_t h, Nanos now, uint32_t* slot) {
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
    peak_ = std::max<uint64_t>(peak_, table_.size());
  }
  if (slot) *slot = s;
  rewrite_out(p, m);
  return true;
}

void Nat::rewrite_out(PacketView& p, const Mapping& m) {
  set_ipv4_src(p, m.ext_addr);
  set_l4_u16(p, p.layout.l4_proto == proto::kIcmp ? 4 : 0, m.ext_port);  // RFC 3022 §4.1
  ++outbound_;
}

// Run rewrites. The packets of a shared outbound run have one key, so one old source address
// and port, and one mapping: the RFC 1624 updates rewrite_out() applies (IPv4 checksum: the
// address's two halves; TCP/UDP checksum: the two halves, then the port) add the same terms
// ~old + new to every packet's checksum. Ones'-complement folding is associative (a folded sum
// is the sum mod 0xFFFF, 0 only when every term is 0), so adding the terms' sum once gives the
// bits the sequential updates give; UDP's "0 is stored as 0xFFFF" between two updates changes
// only the representation of a zero residue, which the next non-zero term normalises and a zero
// term (old 0xFFFF, new 0) leaves as it is, so storing it once at the end gives the same bits.
// Checked bit for bit against rewrite_out over every checksum value (nat_run_rewrite_test.cc).
Nat::OutPlan Nat::out_plan(const FlowKey& k, const Mapping& m) {
  OutPlan p;
  if (k.proto != proto::kTcp && k.proto != proto::kUdp) return p;  // ICMP: rewrite_out
  auto term = [](uint32_t o, uint32_t n) { return uint32_t(uint16_t(~o)) + uint16_t(n); };
  const uint32_t old_addr = key_v4(k.src);
  if (old_addr != m.ext_addr) {
    p.ip_delta = term(old_addr >> 16, m.ext_addr >> 16) + term(old_addr, m.ext_addr);
    p.addr = true;
  }
  uint32_t l4 = p.ip_delta;
  if (k.sport != m.ext_port) {
    l4 += term(k.sport, m.ext_port);
    p.port = true;
  }
  p.l4_delta = l4;
  p.fast = true;
  return p;
}

void Nat::rewrite_out_planned(PacketView& p, const Mapping& m, const OutPlan& plan) {
  const PacketLayout& L = p.layout;
  if (L.l4_off == 0) [[unlikely]]
    return rewrite_out(p, m);
  uint8_t* ip = p.data + L.l3_off;
  if (plan.addr) {
    store_be32(ip + 12, m.ext_addr);
    store_be16(ip + 10, csum_finish(uint32_t(uint16_t(~load_be16(ip + 10))) + plan.ip_delta));
  }
  uint8_t* l4 = p.data + L.l4_off;
  if (plan.addr || plan.port) {
    const bool udp = L.l4_proto == proto::kUdp;
    uint8_t* c = l4 + (udp ? 6 : 16);
    uint16_t hc = load_be16(c);
    if (!udp || hc != 0) {  // UDP checksum 0: none
      hc = csum_finish(uint32_t(uint16_t(~hc)) + plan.l4_delta);
      if (udp && hc == 0) hc = 0xFFFF;
      store_be16(c, hc);
    }
  }
  if (plan.port) store_be16(l4, m.ext_port);
  ++outbound_;
}

void Nat::rewrite_in(PacketView& p, const FlowKey& flow) {
  set_ipv4_dst(p, key_v4(flow.src));
  set_l4_u16(p, flow.proto == proto::kIcmp ? 4 : 2, flow.sport);
  ++inbound_;
}

bool Nat::inbound(PacketView& p, const FlowKey& k, int ext_index, Nanos now, uint32_t* slot) {
  uint32_t s = reverse(size_t(ext_index), k.dport);
  if (s == kNoSlot || !table_.live(s, now)) {
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
  e.last_seen = std::max(e.last_seen, now);
  if (slot) *slot = s;
  rewrite_in(p, e.key);
  return true;
}

bool Nat::other(const PacketView&) {
  if (cfg_.other == OtherProtocols::kPass) {
    ++other_passed_;
    return true;
  }
  ++drop_other_;
  return false;
}

void Nat::counters(const CounterSink& sink) const {
  sink("outbound", outbound_);
  sink("inbound", inbound_);
  sink("icmp_errors_out", errors_out_);
  sink("icmp_errors_in", errors_in_);
  sink("frag_followed", frag_followed_);
  sink("frag_evicted", frags_.evicted());
  sink("passthrough", passthrough_);
  sink("other_passed", other_passed_);
  sink("flows_active", table_.size());
  sink("flows_created", created_);
  sink("flows_expired", expired_before_ + table_.expired_count());
  sink("flows_peak", peak_);
  sink("ports_reclaimed", reclaimed_);
  sink("table_grown", grown_);
  sink("drop.pool_exhausted", drop_pool_);
  sink("drop.table_full", drop_table_);
  sink("drop.no_mapping", drop_no_mapping_);
  sink("drop.icmp_error_no_mapping", drop_error_no_mapping_);
  sink("drop.icmp_error_bad_quote", drop_bad_quote_);
  sink("drop.frag_no_first", drop_frag_no_first_);
  sink("drop.frag_expired", drop_frag_expired_);
  sink("drop.frag_first_dropped", drop_frag_first_dropped_);
  sink("drop.other", drop_other_);
  sink("drop.malformed", drop_malformed_);
}

void Nat::export_state(std::vector<uint8_t>& out) const {
  export_table(table_, out);
  for (const Pool& p : pools_) {
    for (uint32_t v : {p.head, p.count, p.size, p.probe}) put_state(out, v);
    for (uint32_t i = 0; i < p.size; ++i) put_state(out, p.ring[i]);
  }
  for (size_t i = 0; i < cfg_.external.size() << 16; ++i) put_state(out, reverse_[i]);
  frags_.export_state(out);
  counters([&](std::string_view, uint64_t v) { put_state(out, v); });
  put_state(out, uint64_t(capacity_));
}

void Nat::warnings(const WarningSink& sink) const {
  if (drop_pool_ > 0) {
    sink(std::to_string(drop_pool_) +
         " packets dropped: the address pool ran out of ports (drop.pool_exhausted). It holds " +
         std::to_string(size_t(ports_per_addr_) * cfg_.external.size()) + " flows (" +
         std::to_string(cfg_.external.size()) + " external addresses x " +
         std::to_string(ports_per_addr_) + " ports); " + std::to_string(peak_) +
         " were active at the peak. Add addresses to [nf.nat] external (e.g. \"198.18.0.0/24\"), "
         "widen port_min..port_max, or shorten idle_timeout_s.");
  }
  if (drop_table_ > 0) {
    sink(std::to_string(drop_table_) + " packets dropped: the flow table was full " +
         "(drop.table_full, max_flows " + std::to_string(max_flows_) +
         "). Raise [nf.nat] max_flows (0 = what the pool holds).");
  }
}

}  // namespace nfpark::nf
