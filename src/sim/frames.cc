#include "sim/frames.h"

#include <algorithm>
#include <cstring>

#include "core/bytes.h"
#include "core/checksum.h"
#include "core/flow_key.h"
#include "core/packet_builder.h"
#include "core/parse.h"
#include "trace/pcap_reader.h"

namespace nfpark::sim {

std::shared_ptr<const FlowTemplates> FlowTemplates::build(const trace::GenConfig& cfg,
                                                          uint16_t ports, std::string& err) {
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
  t->bytes.assign(n * kMax, 0);
  t->hdr.assign(n, 0);
  t->l3.assign(n, 0);
  t->l4.assign(n, 0);
  t->ip_version.assign(n, 0);
  t->l4_proto.assign(n, 0);
  t->layout.assign(n, CarriedLayout{});
  t->key_hash.assign(n, 0);
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
    std::memcpy(&t->bytes[size_t(f) * kMax], frame->data(), L.payload_off);
    t->hdr[f] = L.payload_off;
    t->l3[f] = L.l3_off;
    t->l4[f] = L.l4_off;
    t->ip_version[f] = L.ip_version;
    t->l4_proto[f] = L.l4_proto;
    if (!t->layout[f].keep(L) || L.ip_end != frame->size()) t->layout[f] = CarriedLayout{};
    FlowKey k;
    if (t->layout[f].ip_version != 0 && extract_flow_key(frame->data(), L, k))
      t->key_hash[f] = k.hash();
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
  __builtin_prefetch(&t_->bytes[size_t(next_flow_) * FlowTemplates::kMax]);
  const uint32_t hdr = t_->hdr[f], l3 = t_->l3[f], l4 = t_->l4[f];
  const uint32_t len = std::max(size_.sample(rng_), hdr + kPacketIdBytes);
  uint8_t* d = p->data;
  const uint8_t* tpl = &t_->bytes[size_t(f) * FlowTemplates::kMax];
  // fixed-size copies (inline moves, no call); a record has room for kMax bytes
  static_assert(FlowTemplates::kMax == 128);
  if (hdr <= 64)
    std::memcpy(d, tpl, 64);
  else
    std::memcpy(d, tpl, 128);
  if (t_->ip_version[f] == 4) {
    // the template's checksum, updated for the new total length (RFC 1624)
    const uint16_t old_total = load_be16(d + l3 + 2), total = uint16_t(len - l3);
    store_be16(d + l3 + 2, total);
    store_be16(d + l3 + 10, csum_update16(load_be16(d + l3 + 10), old_total, total));
  } else {
    store_be16(d + l3 + 4, uint16_t(len - l3 - 40));
  }
  const bool udp = t_->l4_proto[f] == 17;
  if (udp) store_be16(d + l4 + 4, uint16_t(len - l4));
  p->len = len;
  p->head = std::min(hdr, p->pool->bytes());
  p->flow = (uint64_t(port_) << 32 | f) + 1;
  p->layout = t_->layout[f];  // ip_version 0 (none) if the template's could not be carried
  p->layout.ip_end = len;
  if (p->head < p->layout.payload_off) p->layout.ip_version = 0;
  p->key_hash = t_->key_hash[f];           // valid while the parse is (SimBuffer::take_flow_hash)
  if (full_ && len <= p->pool->bytes()) {  // the payload and a valid L4 checksum
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

PcapFrames::PcapFrames(std::shared_ptr<const LoadedTrace> t, uint16_t port, uint64_t loops)
    : t_(std::move(t)), port_(port), loops_(loops) {}

bool PcapFrames::next(Packet* p, Picos& trace_gap) {
  if (i_ == t_->trace.size()) {
    if (loops_ && ++loop_ >= loops_) return false;
    i_ = 0;
  }
  const trace::TracePacket& r = t_->trace[i_];
  trace_gap = i_ ? from_nanos(r.ts - t_->trace[i_ - 1].ts) : -1;
  p->head = std::min({r.len, r.wire_len, p->pool->bytes()});
  std::memcpy(p->data, t_->trace.data(i_), p->head);
  p->len = r.wire_len;
  p->flow = mix64(t_->flow[i_] ^ (uint64_t(port_) << 56 | 0xF10Dull)) | 1;
  ++i_;
  return true;
}

}  // namespace nfpark::sim
