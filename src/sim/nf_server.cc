#include "sim/nf_server.h"

#include <array>

namespace nfpark::sim {

std::string NfServerConfig::validate() const {
  if (!(link_gbps > 0) || !(pcie_gbps > 0)) return "link_gbps and pcie_gbps must be > 0";
  if (cores < 1 || cores > 1024) return "cores must be 1..1024";
  if (rx_ring < 1) return "rx_ring must be >= 1";
  if (burst < 1 || burst > nf::kBurst) return "burst must be 1..32";
  if (!(drop >= 0 && drop <= 1)) return "drop must be a fraction from 0 to 1";
  if (latency < 0) return "latency_us must be >= 0";
  return service.validate();
}

NfServer::NfServer(Engine& e, const NfServerConfig& c, std::unique_ptr<nf::Chain> chain,
                   std::optional<park::TagFormat> format)
    : e_(e),
      cfg_(c),
      chain_(std::move(chain)),
      ep_(format, c.notify_drops),
      cores_(c.cores),
      rng_(c.seed ^ 0x5EEDF00Dull) {
  for (auto& core : cores_) core.out.reserve(nf::kBurst);
}

void NfServer::arrive(Packet* p, Picos at, uint16_t) {
  ++ctr_.rx;
  // bytes still waiting for the PCIe channel when this frame has arrived
  const double backlog = rx_free_ > at ? double(rx_free_ - at) * cfg_.pcie_gbps / 8000.0 : 0;
  if (backlog + p->len > double(cfg_.nic_buffer_bytes)) {
    ++ctr_.drop_nic_buffer;
    p->pool->free(p);
    return;
  }
  rx_free_ = std::max(at, rx_free_) +
             serialization(uint64_t(p->len) + cfg_.pcie_overhead_bytes, cfg_.pcie_gbps);
  p->due = rx_free_;
  const uint16_t c = uint16_t(p->flow % cores_.size());  // RSS
  Core& core = cores_[c];
  core.dma.push(p);
  if (!core.busy && !core.event) {
    core.event = true;
    e_.schedule(rx_free_, this, c);
  }
}

// Puts the packets whose DMA has completed by now into the ring (or drops them: ring full).
void NfServer::fill_ring(Core& core) {
  const Picos now = e_.now();
  while (core.dma.head && core.dma.head->due <= now) {
    Packet* p = core.dma.pop();
    if (core.ring.count >= cfg_.rx_ring) {
      ++ctr_.drop_rx_ring;
      p->pool->free(p);
      continue;
    }
    core.ring.push(p);
  }
}

// Takes up to `burst` packets off the ring and runs the endpoint and the chain on them now; the
// core is busy for their service time.
void NfServer::start_burst(uint16_t c) {
  Core& core = cores_[c];
  std::array<Packet*, nf::kBurst> pkts;
  std::array<PacketView, nf::kBurst> views;
  std::array<nf::Verdict, nf::kBurst> verdicts;
  std::array<uint32_t, nf::kBurst> tag_at;
  uint32_t n = 0;
  Picos service = Picos(cfg_.service.burst_ns * double(kNs) + 0.5);
  while (core.ring.head && n < cfg_.burst) {
    Packet* p = core.ring.pop();
    const uint64_t hdr_before = ep_.counters().header_only;
    ep_.view(p, views[n], tag_at[n]);
    service += cfg_.service.sample(ep_.counters().header_only != hdr_before, rng_);
    verdicts[n] = nf::Verdict::kPass;
    pkts[n++] = p;
  }
  chain_->process({views.data(), n}, {verdicts.data(), n}, to_nanos(e_.now()));
  core.out.clear();
  for (uint32_t i = 0; i < n; ++i) {
    Packet* p = pkts[i];
    if (verdicts[i] == nf::Verdict::kDrop) {
      ++ctr_.nf_drops;
      p = ep_.on_drop(p, tag_at[i]);
      if (!p) continue;
      ++ctr_.drop_notices;
    } else if (cfg_.drop > 0 && rng_.uniform() < cfg_.drop) {
      ++ctr_.drop_fault;
      SimBuffer::free(p);
      continue;
    }
    core.out.push_back(p);
  }
  core.busy = true;
  core.busy_ps += service;
  core.event = true;
  e_.schedule(e_.now() + service, this, c);
}

void NfServer::on_event(uint64_t c) {
  Core& core = cores_[c];
  core.event = false;
  if (core.busy) {  // the burst is done
    for (Packet* p : core.out) send_back(p);
    core.out.clear();
    core.busy = false;
  }
  fill_ring(core);
  if (core.ring.head) {
    start_burst(uint16_t(c));
  } else if (core.dma.head) {  // idle: wake at the next completion
    core.event = true;
    e_.schedule(core.dma.head->due, this, c);
  }
}

void NfServer::send_back(Packet* p) {
  ++ctr_.tx;
  const Picos ready = e_.now() + cfg_.latency;
  tx_free_ = std::max(ready, tx_free_) +
             serialization(uint64_t(p->len) + cfg_.pcie_overhead_bytes, cfg_.pcie_gbps);
  link_free_ =
      std::max(tx_free_, link_free_) + serialization(p->len + kWireOverhead, cfg_.link_gbps);
  back_->arrive(p, link_free_ + cfg_.link_delay, back_link_);
}

Picos NfServer::busy_time() const {
  Picos t = 0;
  for (auto& c : cores_) t += c.busy_ps;
  return t;
}

void NfServer::report(const CounterSink& s) const {
  s("nf_server.rx", ctr_.rx);
  s("nf_server.tx", ctr_.tx);
  s("nf_server.drop_nic_buffer", ctr_.drop_nic_buffer);
  s("nf_server.drop_rx_ring", ctr_.drop_rx_ring);
  s("nf_server.drop_fault", ctr_.drop_fault);
  s("nf_server.nf_drops", ctr_.nf_drops);
  s("nf_server.drop_notices", ctr_.drop_notices);
  s("nf_server.header_only", ep_.counters().header_only);
  s("nf_server.whole", ep_.counters().whole);
  chain_->counters([&](std::string_view k, uint64_t v) { s("nf." + std::string(k), v); });
}

}  // namespace nfpark::sim
