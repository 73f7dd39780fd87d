#include "trace/generator.h"

#include <algorithm>
#include <cmath>

#include "core/bytes.h"

namespace nfpark::trace {

namespace {
constexpr uint16_t kServerPorts[] = {80, 443, 8080, 8443, 5001, 5201, 9999, 12345};
constexpr uint64_t kMaxFlows = 16000000;
}  // namespace

const char* to_string(GenProto p) {
  switch (p) {
    case GenProto::kUdp:
      return "udp";
    case GenProto::kTcp:
      return "tcp";
    case GenProto::kMix:
      return "mix";
  }
  return "?";
}

std::string GenConfig::validate() const {
  if (packets == 0) return "--packets must be >= 1";
  if (flows == 0 || flows > kMaxFlows) return "--flows must be in 1..16000000";
  if (slf == 0) return "--slf must be >= 1";
  if (!(zipf >= 0) || zipf > 10) return "--zipf must be in 0..10 (0 = uniform)";
  if (!(rate_gbps > 0) || rate_gbps > 1e5) return "--rate-gbps must be > 0";
  if (!(ipv6 >= 0 && ipv6 <= 1)) return "--ipv6 must be a fraction in 0..1";
  if (copies == 0 || copies > 64) return "--copies must be in 1..64";
  if (flows * copies > kMaxFlows) return "--flows x --copies must be <= 16000000";
  if (copy_shift < 0) return "--copy-shift-us must be >= 0";
  if (!(train >= 1 && train <= 1000)) return "--train must be in 1..1000";
  if (pace && active == 0) return "--pace needs --active A (the live flows it paces)";
  if (!flow_sizes.even() && active == 0)
    return "--flow-sizes needs --active A (flows go live one after another)";
  return "";
}

Generator::Generator(const GenConfig& c, uint32_t copy)
    : c_(c),
      rng_(c.seed),
      t_ns_(double(c.start) + double(copy) * double(c.copy_shift)),
      flow_base_(uint32_t(copy * c.flows)) {
  const uint32_t F = uint32_t(c_.flows);
  tcp_seq_.resize(F);
  for (uint32_t f = 0; f < F; ++f) tcp_seq_[f] = uint32_t(mix64(c_.seed ^ (f * 31 + 7)));
  if (c_.zipf > 0) {
    zipf_cdf_.resize(F);
    double s = 0;
    for (uint32_t r = 0; r < F; ++r) zipf_cdf_[r] = s += std::pow(double(r + 1), -c_.zipf);
    for (double& x : zipf_cdf_) x /= s;
  } else {
    perm_.resize(F);
    for (uint32_t f = 0; f < F; ++f) perm_[f] = f;
    perm_pos_ = F;  // shuffle on first use
  }
  if (c_.active > 0) {
    flow_len_ = std::max<uint64_t>(1, (c_.packets + c_.flows - 1) / c_.flows);
    mean_size_ = double(flow_len_);
    for (uint64_t a = 0; a < std::min<uint64_t>(c_.active, c_.flows); ++a) {
      Slot s;
      if (!next_flowlet(s)) break;
      if (c_.pace) {
        pace_start(s, 0);
        heap_.push_back({s.due, uint32_t(slots_.size())});
      }
      slots_.push_back(s);
    }
    std::make_heap(heap_.begin(), heap_.end(), std::greater<>());
  }
}

uint32_t Generator::draw_flow() {
  const uint32_t F = uint32_t(c_.flows);
  if (c_.zipf > 0) {
    for (int tries = 0;; ++tries) {
      double u = rng_.uniform();
      uint32_t r =
          uint32_t(std::upper_bound(zipf_cdf_.begin(), zipf_cdf_.end(), u) - zipf_cdf_.begin());
      if (r >= F) r = F - 1;
      if (F == 1 || c_.active > 0 || int64_t(r) != prev_flow_ || tries == 16) return r;
    }
  }
  if (perm_pos_ == F) {  // new round: Fisher-Yates shuffle
    for (uint32_t i = F - 1; i > 0; --i) std::swap(perm_[i], perm_[rng_.below(i + 1)]);
    if (F > 1 && c_.active == 0 && int64_t(perm_[0]) == prev_flow_) std::swap(perm_[0], perm_[1]);
    perm_pos_ = 0;
  }
  return perm_[perm_pos_++];
}

bool Generator::next_flowlet(Slot& s) {
  const bool even = c_.flow_sizes.even();
  if (c_.zipf > 0) {
    const uint32_t f = draw_flow();
    s = {f, even ? flow_len_ : c_.flow_sizes.sample(rng_, mean_size_, c_.packets)};
    return true;
  }
  // Uniform: each flow of one permutation once, with its exact share of the packets (or a
  // draw from the flow-size distribution).
  if (started_ >= std::min(c_.flows, c_.packets)) return false;
  const uint32_t f = draw_flow();
  s = {f, even ? c_.packets / c_.flows + (started_ < c_.packets % c_.flows ? 1 : 0)
               : c_.flow_sizes.sample(rng_, mean_size_, c_.packets)};
  ++started_;
  return true;
}

void Generator::pace_start(Slot& s, double now) {
  const double life = double(c_.active) * mean_size_ * (0.5 + rng_.uniform());
  s.gap = std::max(1.0, life / double(s.left));  // no flow sends faster than a slot per packet
  s.due = now + rng_.uniform() * s.gap * c_.train;
}

uint32_t Generator::pick_paced_flow() {
  if (heap_.empty()) {  // every flow of the population has finished
    burst_left_ = 1;
    return draw_flow();
  }
  std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
  const auto [now, si] = heap_.back();
  heap_.pop_back();
  Slot& slot = slots_[si];
  const uint32_t f = slot.flow;
  uint64_t k = 1;  // 1 + geometric: mean `train`
  while (k < slot.left && k < 1000000 && rng_.uniform() >= 1.0 / c_.train) ++k;
  burst_left_ = uint32_t(k);
  slot.left -= k;
  slot.due = now + slot.gap * double(k);
  if (slot.left == 0) {
    if (!next_flowlet(slot)) return f;  // population exhausted: the slot closes
    pace_start(slot, now);
  }
  heap_.push_back({slot.due, si});
  std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
  return f;
}

uint32_t Generator::pick_burst_flow() {
  if (c_.pace) return pick_paced_flow();
  if (slots_.empty()) {
    burst_left_ = c_.slf;
    return draw_flow();
  }
  const size_t A = slots_.size();
  size_t s = rng_.below(A);
  if (A > 1 && int64_t(s) == prev_slot_) s = (s + 1 + rng_.below(A - 1)) % A;
  prev_slot_ = int64_t(s);
  Slot& slot = slots_[s];
  uint32_t f = slot.flow;
  burst_left_ = uint32_t(std::min<uint64_t>(c_.slf, slot.left));
  slot.left -= burst_left_;
  if (slot.left == 0 && !next_flowlet(slot)) {  // population exhausted: the slot closes
    slot = slots_.back();
    slots_.pop_back();
    prev_slot_ = -1;
  }
  return f;
}

void Generator::build(uint32_t local, uint64_t id) {
  const uint32_t f = local + flow_base_;
  const uint64_t h = mix64(c_.seed * 0x9E3779B97F4A7C15ULL ^ mix64(f + 1));
  const bool v6 = double(h & 0xFFFFFFFF) * 0x1.0p-32 < c_.ipv6;
  const bool tcp = c_.proto == GenProto::kTcp || (c_.proto == GenProto::kMix && (h >> 32 & 1));
  const uint16_t sport = uint16_t(1024 + (h >> 33) % 64000);
  const uint16_t dport = kServerPorts[(h >> 50) % 8];
  const uint32_t server = uint32_t(1 + (h >> 40) % 254);
  PacketBuilder b;
  if (c_.vlan) b.vlan(uint16_t(1 + (h >> 20) % 4094));
  if (v6) {
    std::array<uint8_t, 16> s{0xfd}, d{0xfd, 0, 0, 1};
    store_be32(s.data() + 12, f + 1);
    d[15] = uint8_t(server);
    b.ipv6(s, d);
  } else {
    b.ipv4(0x0A000000u + f + 1, 0xC0A80000u | server);
  }
  if (tcp)
    b.tcp(sport, dport, 0x18, tcp_seq_[local], 1);
  else
    b.udp(sport, dport);
  uint32_t size = c_.size.sample(rng_);
  const uint32_t min = b.header_bytes() + kPacketIdBytes;
  if (size < min) size = min;
  b.frame_size(size).packet_id(id).fill(uint8_t(f));
  if (tcp) tcp_seq_[local] += size - b.header_bytes();
  frame_ = b.build();
}

Nanos Generator::peek() const {
  return Nanos(std::llround(t_ns_));
}

bool Generator::next(Nanos& ts, const std::vector<uint8_t>*& frame, uint32_t& flow, uint64_t id) {
  if (i_ == c_.packets) return false;
  if (burst_left_ == 0) {
    cur_flow_ = pick_burst_flow();
    prev_flow_ = cur_flow_;
  }
  --burst_left_;
  build(cur_flow_, id);
  ts = Nanos(std::llround(t_ns_));
  t_ns_ += double(frame_.size() + 24) * 8.0 / c_.rate_gbps;
  frame = &frame_;
  flow = cur_flow_ + flow_base_;
  ++i_;
  return true;
}

CopyMerger::CopyMerger(const GenConfig& c) {
  gens_.reserve(c.copies);
  for (uint32_t k = 0; k < c.copies; ++k) gens_.emplace_back(c, k);
}

bool CopyMerger::next(Nanos& ts, const std::vector<uint8_t>*& frame, uint32_t& flow) {
  Generator* best = cur_ && cur_->in_train() && !cur_->done() ? cur_ : nullptr;
  if (!best)
    for (Generator& g : gens_)
      if (!g.done() && (!best || g.peek() < best->peek())) best = &g;
  if (!best || !best->next(ts, frame, flow, id_)) return false;
  cur_ = best;
  ++id_;
  ts = last_ts_ = std::max(ts, last_ts_);
  return true;
}

bool generate_pcap(const GenConfig& c, const std::string& path, Precision p, std::string* error) {
  PcapWriter w;
  bool ok = w.open(path, p);
  CopyMerger g(c);
  Nanos ts;
  const std::vector<uint8_t>* f;
  uint32_t flow;
  while (ok && g.next(ts, f, flow))
    ok = w.write(ts, f->data(), uint32_t(f->size()), uint32_t(f->size()));
  ok = w.close() && ok;
  if (!ok && error) *error = w.error();
  return ok;
}

void generate_trace(const GenConfig& c, Trace& out) {
  CopyMerger g(c);
  const size_t n = c.packets * c.copies;
  out.reserve(out.size() + n, out.arena_bytes() + n * size_t(c.size.mean() + 16));
  Nanos ts;
  const std::vector<uint8_t>* f;
  uint32_t flow;
  while (g.next(ts, f, flow)) out.add(ts, f->data(), uint32_t(f->size()), uint32_t(f->size()));
}

}  // namespace nfpark::trace
