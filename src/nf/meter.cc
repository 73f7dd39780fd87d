#include "nf/meter.h"

#include <toml++/toml.h>

#include "core/bytes.h"
#include "core/checksum.h"
#include "nf/flow_table.h"
#include "nf/run_burst.h"

namespace nfpark::nf {

using u128 = unsigned __int128;

static uint64_t refill(uint64_t tokens, u128 add, uint64_t cap, u128* overflow) {
  u128 room = cap - tokens;
  if (add <= room) {
    if (overflow) *overflow = 0;
    return tokens + uint64_t(add);
  }
  if (overflow) *overflow = add - room;
  return cap;
}

void TcmBuckets::reset(const MeterConfig& cfg, Nanos now) {
  last_ = now;
  c_ = cfg.cbs * kScale;
  o_ = (cfg.mode == MeterConfig::Mode::kSrTcm ? cfg.ebs : cfg.pbs) * kScale;
}

Colour TcmBuckets::mark(const MeterConfig& cfg, Nanos now, uint32_t bytes) {
  const u128 dt = now > last_ ? u128(now - last_) : 0;
  if (now > last_) last_ = now;
  const uint64_t b = uint64_t(bytes) * kScale;
  if (cfg.mode == MeterConfig::Mode::kSrTcm) {
    u128 spill;  // RFC 2697 §3: tokens that find C full go to E
    c_ = refill(c_, dt * cfg.cir, cfg.cbs * kScale, &spill);
    o_ = refill(o_, spill, cfg.ebs * kScale, nullptr);
    if (c_ >= b) {  // RFC 2697 §4.1 (colour-blind)
      c_ -= b;
      return Colour::kGreen;
    }
    if (o_ >= b) {
      o_ -= b;
      return Colour::kYellow;
    }
    return Colour::kRed;
  }
  o_ = refill(o_, dt * cfg.pir, cfg.pbs * kScale, nullptr);
  c_ = refill(c_, dt * cfg.cir, cfg.cbs * kScale, nullptr);
  if (o_ < b) return Colour::kRed;  // RFC 2698 §3 (colour-blind)
  o_ -= b;
  if (c_ < b) return Colour::kYellow;
  c_ -= b;
  return Colour::kGreen;
}

bool MeterConfig::validate(std::string& error) const {
  constexpr uint64_t kMaxBurst = 1'000'000'000, kMaxRate = 1'000'000'000'000;
  if (cbs > kMaxBurst || ebs > kMaxBurst || pbs > kMaxBurst) {
    error = "cbs/ebs/pbs must be <= 1e9 bytes";
    return false;
  }
  if (cir > kMaxRate || pir > kMaxRate) {
    error = "cir/pir must be <= 1e12 bytes/s";
    return false;
  }
  if (mode == Mode::kTrTcm && pir < cir) {
    error = "trtcm needs pir >= cir (RFC 2698 §1)";
    return false;
  }
  for (int d : {green_dscp, yellow_dscp, red_dscp})
    if (d < -1 || d > 63) {
      error = "*_dscp must be 0..63 or -1 (leave unchanged)";
      return false;
    }
  if (per_flow && max_flows < 4) {
    error = "max_flows must be >= 4";
    return false;
  }
  return true;
}

bool MeterConfig::parse(const toml::table& t, MeterConfig& out, std::string& error) {
  for (const auto& [k, v] : t) {
    std::string_view key = k.str();
    auto fail = [&](const char* what) {
      error = std::string(key) + ": " + what;
      return false;
    };
    auto num = v.value<int64_t>();
    if (key == "mode") {
      auto s = v.value<std::string>();
      if (!s || (*s != "srtcm" && *s != "trtcm")) return fail("expected \"srtcm\" or \"trtcm\"");
      out.mode = *s == "srtcm" ? Mode::kSrTcm : Mode::kTrTcm;
    } else if (key == "per_flow" || key == "drop_red") {
      auto b = v.value<bool>();
      if (!b) return fail("expected true or false");
      (key == "per_flow" ? out.per_flow : out.drop_red) = *b;
    } else if (key == "green_dscp" || key == "yellow_dscp" || key == "red_dscp") {
      if (!num || *num < -1 || *num > 63)
        return fail("expected 0..63, or -1 to leave DSCP unchanged");
      (key == "green_dscp"    ? out.green_dscp
       : key == "yellow_dscp" ? out.yellow_dscp
                              : out.red_dscp) = int(*num);
    } else if (key == "cir" || key == "pir" || key == "cbs" || key == "ebs" || key == "pbs" ||
               key == "max_flows") {
      if (!num || *num < 0) return fail("expected a non-negative integer (bytes/s or bytes)");
      uint64_t n = uint64_t(*num);
      if (key == "cir")
        out.cir = n;
      else if (key == "pir")
        out.pir = n;
      else if (key == "cbs")
        out.cbs = n;
      else if (key == "ebs")
        out.ebs = n;
      else if (key == "pbs")
        out.pbs = n;
      else
        out.max_flows = uint32_t(std::min<uint64_t>(n, 1u << 30));
    } else {
      error = "unknown key '" + std::string(key) +
              "' (known: mode, cir, cbs, ebs, pir, pbs, per_flow, max_flows, green_dscp, "
              "yellow_dscp, red_dscp, drop_red)";
      return false;
    }
  }
  return out.validate(error);
}

Meter::Meter(const MeterConfig& cfg) : cfg_(cfg) {
  global_.reset(cfg_, 0);
  if (cfg_.per_flow) {
    size_t sets = 1;
    while (sets * 4 < cfg_.max_flows) sets <<= 1;
    table_.resize(sets * 4);
    seen_.assign(sets * 4, 0);
    set_mask_ = sets - 1;
  }
}

std::unique_ptr<Meter> Meter::create(const MeterConfig& cfg, std::string& error) {
  if (!cfg.validate(error)) return nullptr;
  return std::unique_ptr<Meter>(new Meter(cfg));
}

TcmBuckets& Meter::flow_buckets(const FlowKey& k, uint64_t h, Nanos now) {
  const size_t base = (size_t(h) & set_mask_) * 4;
  size_t victim = base;
  for (size_t w = base; w < base + 4; ++w) {
    Entry& e = table_[w];
    if (e.used && e.key == k) {
      seen_[w] = now;
      return e.b;
    }
    if (!e.used) {
      if (table_[victim].used) victim = w;
    } else if (table_[victim].used && seen_[w] < seen_[victim]) {
      victim = w;
    }
  }
  Entry& e = table_[victim];
  evicted_ += e.used;
  e.used = true;
  e.key = k;
  e.b.reset(cfg_, now);
  seen_[victim] = now;
  return e.b;
}

void Meter::set_dscp(PacketView& p, int dscp) {
  if (dscp < 0) return;
  uint8_t* ip = p.data + p.layout.l3_off;
  if (p.layout.ip_version == 4) {
    uint16_t old_w = load_be16(ip);
    ip[1] = uint8_t(dscp << 2 | (ip[1] & 3));
    store_be16(ip + 10, csum_update16(load_be16(ip + 10), old_w, load_be16(ip)));  // RFC 1624
  } else {
    uint8_t tc = uint8_t((ip[0] & 0x0F) << 4 | ip[1] >> 4);
    tc = uint8_t(dscp << 2 | (tc & 3));
    ip[0] = uint8_t((ip[0] & 0xF0) | tc >> 4);
    ip[1] = uint8_t((ip[1] & 0x0F) | (tc & 0x0F) << 4);
  }
}

void Meter::mark(PacketView& p, Verdict& v, TcmBuckets& b, Nanos now) {
  ++rx_;
  const Colour c = b.mark(cfg_, now, p.wire_len);
  ++colours_[int(c)];
  if (c == Colour::kRed && cfg_.drop_red) {
    v = Verdict::kDrop;
    ++dropped_;
    return;
  }
  const int dscp[3] = {cfg_.green_dscp, cfg_.yellow_dscp, cfg_.red_dscp};
  if (p.layout.ok() && p.layout.ip_version != 0) set_dscp(p, dscp[int(c)]);
}

void Meter::process(std::span<PacketView> pkts, std::span<Verdict> verdicts, Nanos now) {
  for (size_t i = 0; i < pkts.size(); ++i) {
    if (verdicts[i] != Verdict::kPass) continue;
    PacketView& p = pkts[i];
    TcmBuckets* b = &global_;
    FlowKey k;
    if (cfg_.per_flow && extract_flow_key(p.data, p.layout, k))
      b = &flow_buckets(k, FlowKeyHash64{}(k), now);
    mark(p, verdicts[i], *b, now);
  }
}

void Meter::process_runs(std::span<PacketView> pkts, std::span<Verdict> verdicts,
                         const FlowRuns& runs, Nanos now) {
  for (size_t r = 0; r < runs.count; ++r) {
    const size_t b = runs.begin(r), n = runs.end(r) - b;
    if (runs.solo[r]) {
      process(pkts.subspan(b, n), verdicts.subspan(b, n), now);
      continue;
    }
    TcmBuckets* tb = nullptr;  // the run's buckets: a probe again would find the same way
    for (size_t i = b; i < b + n; ++i) {
      if (verdicts[i] != Verdict::kPass) continue;
      if (!tb) tb = &flow_buckets(runs.keys[r], runs.hashes[r], now);
      mark(pkts[i], verdicts[i], *tb, now);
    }
  }
}

void Meter::export_state(std::vector<uint8_t>& out) const {
  global_.export_state(out);
  for (size_t w = 0; w < table_.size(); ++w) {
    put_state(out, table_[w].key);
    put_state(out, table_[w].used);
    put_state(out, seen_[w]);
    table_[w].b.export_state(out);
  }
  for (uint64_t v : {rx_, colours_[0], colours_[1], colours_[2], dropped_, evicted_})
    put_state(out, v);
}

void Meter::counters(const CounterSink& sink) const {
  sink("rx", rx_);
  sink("green", colours_[0]);
  sink("yellow", colours_[1]);
  sink("red", colours_[2]);
  sink("drop.red", dropped_);
  sink("flows_evicted", evicted_);
}

}  // namespace nfpark::nf
