#include "sim/frames.h"

#include <algorithm>
#include <cstring>

#include "core/bytes.h"
#include "core/checksum.h"
#include "core/flow_key.h"
#include "core/hot_path.h"
#include "core/packet_builder.h"
#include "core/parse.h"
#include "trace/pcap_reader.h"

namespace nfpark::sim {

std::shared_ptr<const FlowTemplates> FlowTemplates::build(const trace::GenConfig& cfg,
                                                          uint16_t ports, std::string& err,
                                                          bool compact) {
  trace::GenConfig g = cfg;
  g.flows = cfg.flows * ports;
  g.packets = g.flows;  // uniform popularity: the first round visits every flow once
  g.slf = 1;
  g.zipf = 0;
  g.active = 0;
  g.size = trace::SizeSpec{trace::SizeKind::kFixed, 1500};
  if (std::string e = g.validate(); !e.empty()) {
    err = e;
    return nullptr;
  }
  auto t = std::make_shared<FlowTemplates>();
  const size_t n = g.flows;
  t->flows.assign(n, FlowTemplates::Flow{});
  trace::Generator gen(g);
  Nanos ts;
  const std::vector<uint8_t>* frame;
  uint32_t f;
  while (gen.next(ts, frame, f)) {
    const PacketLayout L = parse_packet(frame->data(), uint32_t(frame->size()));
    if (!L.ok() || L.payload_off > kMax) {
      err = "the generator made a frame the simulator cannot template";
      return nullptr;
    }
    FlowTemplates::Flow& t_f = t->flows[f];
    std::memcpy(t_f.bytes, frame->data(), L.payload_off);
    t_f.hdr = L.payload_off;
    t_f.l3 = L.l3_off;
    t_f.l4 = L.l4_off;
    t_f.ip_version = L.ip_version;
    t_f.l4_proto = L.l4_proto;
    if (!t_f.layout.keep(L) || L.ip_end != frame->size()) t_f.layout = CarriedLayout{};
    FlowKey k;
    if (t_f.layout.ip_version != 0 && extract_flow_key(frame->data(), L, k))
      t_f.key_hash = k.hash();
  }
  // one cache line a flow when every flow's template fits one
  const auto fits = [&](const FlowTemplates::Flow& x) {
    return x.layout.ip_version != 0 && x.hdr <= FlowTemplates::kMacs + FlowTemplates::kSmallBytes &&
           std::memcmp(x.bytes, t->flows[0].bytes, FlowTemplates::kMacs) == 0;
  };
  if (compact && std::all_of(t->flows.begin(), t->flows.end(), fits)) {
    std::memcpy(t->macs, t->flows[0].bytes, FlowTemplates::kMacs);
    t->small.assign(n, FlowTemplates::Small{});
    for (size_t i = 0; i < n; ++i) {
      const FlowTemplates::Flow& x = t->flows[i];
      FlowTemplates::Small& y = t->small[i];
      y.key_hash = x.key_hash;
      y.vlans = x.layout.vlans;
      y.ip_version = x.layout.ip_version;
      y.l4_proto = x.layout.l4_proto;
      y.l3 = uint8_t(x.layout.l3_off);
      y.l4 = uint8_t(x.layout.l4_off);
      y.hdr = uint8_t(x.hdr);
      std::memcpy(y.bytes, x.bytes + FlowTemplates::kMacs, x.hdr - FlowTemplates::kMacs);
    }
    t->flows = {};
  }
  return t;
}

SyntheticFrames::SyntheticFrames(std::shared_ptr<const FlowTemplates> t,
                                 const trace::GenConfig& cfg, uint16_t port, bool full_bytes)
    : t_(std::move(t)),
      size_(cfg.size),
      picker_(uint32_t(cfg.flows), cfg.slf, cfg.zipf, mix64(cfg.seed ^ (uint64_t(port) << 32))),
      rng_(mix64(cfg.seed * 31 + port + 1)),
      first_flow_(uint32_t(cfg.flows) * port),
      port_(port),
      full_(full_bytes) {
  next_flow_ = first_flow_ + picker_.next();
}

bool SyntheticFrames::next(Packet* p, Picos& trace_gap) {
  trace_gap = -1;
  // the flow was picked one frame ahead and its template prefetched (random flows: a miss each)
  const uint32_t f = next_flow_;
  next_flow_ = first_flow_ + picker_.next();
  uint8_t* d = p->data();
  uint32_t hdr, l3, l4;
  bool ipv4, udp;
  CarriedLayout& c = p->layout();
  // fixed-size copies (inline moves, no call); a record has room for kMax bytes
  static_assert(FlowTemplates::kMax == 128 && FlowTemplates::kMax <= PacketPool::kHeaderBytes);
  if (!t_->small.empty()) {
    prefetch_line(&t_->small[next_flow_]);
    const FlowTemplates::Small& t = t_->small[f];
    hdr = t.hdr, l3 = t.l3, l4 = t.l4;
    ipv4 = t.ip_version == 4;
    udp = t.l4_proto == 17;
    // what the 128 B form writes: the headers, zeros to byte 64
    std::memcpy(d, t_->macs, FlowTemplates::kMacs);
    std::memcpy(d + FlowTemplates::kMacs, t.bytes, FlowTemplates::kSmallBytes);
    store_be16(d + FlowTemplates::kMacs + FlowTemplates::kSmallBytes, 0);
    // every field restore() hands back: a kOk, unfragmented IP parse (CarriedLayout::keep's)
    c.status_ = ParseStatus::kOk;
    c.fragment_ = false;
    c.first_fragment_ = true;
    c.ethertype_ = t.ip_version == 4 ? 0x0800 : 0x86DD;
    c.vlans = t.vlans;
    c.ip_version = t.ip_version;
    c.l4_proto = t.l4_proto;
    c.l3_off = t.l3;
    c.l4_off = t.l4;
    c.payload_off = t.hdr;
    p->key_hash() = t.key_hash;  // valid while the parse is (SimBuffer::take_flow_hash)
  } else {
    const uint8_t* ahead = reinterpret_cast<const uint8_t*>(&t_->flows[next_flow_]);
    prefetch_line(ahead);
    prefetch_line(ahead + 64);
    const FlowTemplates::Flow& t = t_->flows[f];
    hdr = t.hdr, l3 = t.l3, l4 = t.l4;
    ipv4 = t.ip_version == 4;
    udp = t.l4_proto == 17;
    if (hdr <= 64)
      std::memcpy(d, t.bytes, 64);
    else
      std::memcpy(d, t.bytes, 128);
    c = t.layout;  // ip_version 0 (none) if the template's could not be carried
    p->key_hash() = t.key_hash;
  }
  const uint32_t len = std::max(size_.sample(rng_), hdr + kPacketIdBytes);
  if (ipv4) {
    // the template's checksum, updated for the new total length (RFC 1624)
    const uint16_t old_total = load_be16(d + l3 + 2), total = uint16_t(len - l3);
    store_be16(d + l3 + 2, total);
    store_be16(d + l3 + 10, csum_update16(load_be16(d + l3 + 10), old_total, total));
  } else {
    store_be16(d + l3 + 4, uint16_t(len - l3 - 40));
  }
  if (udp) store_be16(d + l4 + 4, uint16_t(len - l4));
  p->len = len;
  p->head = std::min(hdr, p->pool()->bytes());
  p->flow = (uint64_t(port_) << 32 | f) + 1;
  c.ip_end = len;
  if (p->head < c.payload_off) c.ip_version = 0;
  if (full_ && len <= p->pool()->bytes()) {  // the payload and a valid L4 checksum
    std::memset(d + hdr, uint8_t(f), len - hdr);
    std::memcpy(d + hdr, kPacketIdMagic.data(), 4);
    store_be64(d + hdr + 4, uint64_t(port_) << 48 | count_);
    const uint32_t csum_at = l4 + (udp ? 6 : 16);
    store_be16(d + csum_at, 0);
    p->head = len;
    const PacketLayout L = parse_packet(d, len);
    store_be16(d + csum_at, l4_checksum(d, L));
  }
  ++count_;
  return true;
}

std::shared_ptr<const LoadedTrace> LoadedTrace::load(const std::string& path, std::string& err) {
  auto t = std::make_shared<LoadedTrace>();
  if (!trace::load_trace(path, t->trace, &err)) return nullptr;
  if (t->trace.empty()) {
    err = path + ": the capture holds no packets";
    return nullptr;
  }
  t->flow.resize(t->trace.size());
  for (size_t i = 0; i < t->trace.size(); ++i) {
    const uint8_t* d = t->trace.data(i);
    const PacketLayout L = parse_packet(d, t->trace[i].len);
    FlowKey k;
    t->flow[i] = extract_flow_key(d, L, k) ? k.hash() : 0;
  }
  return t;
}

Picos capture_gap(Nanos prev, Nanos ts) {
  if (ts < prev) return -1;  // a capture's clock that went back: no gap
  // in unsigned arithmetic: pcapng times span all of int64, and a gap of more than 106 days
  // does not fit picoseconds (it wrapped, often negative: the frame went at once)
  const uint64_t ns = uint64_t(ts) - uint64_t(prev);
  return ns >= uint64_t(kNever / kNs) ? kNever : from_nanos(Nanos(ns));
}

PcapFrames::PcapFrames(std::shared_ptr<const LoadedTrace> t, uint16_t port, uint64_t loops)
    : t_(std::move(t)), port_(port), loops_(loops) {}

bool PcapFrames::next(Packet* p, Picos& trace_gap) {
  if (i_ == t_->trace.size()) {
    if (loops_ && ++loop_ >= loops_) return false;
    i_ = 0;
  }
  const trace::TracePacket& r = t_->trace[i_];
  trace_gap = i_ ? capture_gap(t_->trace[i_ - 1].ts, r.ts) : -1;
  p->head = std::min({r.len, r.wire_len, p->pool()->bytes()});
  std::memcpy(p->data(), t_->trace.data(i_), p->head);
  p->len = r.wire_len;
  p->flow = mix64(t_->flow[i_] ^ (uint64_t(port_) << 56 | 0xF10Dull)) | 1;
  ++i_;
  return true;
}

}  // namespace nfpark::sim
