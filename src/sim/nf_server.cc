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
    : NfServer(
          e, c,
          std::make_unique<park::NfBurst<SimBuffer>>(std::move(chain), format, c.notify_drops)) {}

NfServer::NfServer(Engine& e, const NfServerConfig& c,
                   std::unique_ptr<park::NfBurst<SimBuffer>> step)
    : e_(e), cfg_(c), step_(std::move(step)), cores_(c.cores), rng_(c.seed ^ 0x5EEDF00Dull) {
  for (auto& core : cores_) core.out.reserve(nf::kBurst);
}

void NfServer::set_index(uint16_t server) {
  index_ = server;
  rf_poll_.set_tie(Rank::kNfPoll, server);
  if (faults_) faults_->set_server(server);
  if (box_) box_->set_server(server);
}

Picos NfServer::pcie_time(const PcieCost& c) const {
  const uint64_t desc = nic_ ? nic_->boundary().desc_bytes() : 0;
  return serialization(uint64_t(c.bytes) + cfg_.pcie_overhead_bytes + (c.descriptors - 1u) * desc,
                       cfg_.pcie_gbps);
}

void NfServer::free_host(Packet* p) {
  if (nic_ && nic_->nic_holds(p)) nic_->host_freed(1);
  p->pool()->free(p);
}

void NfServer::arrive(Packet* p, Picos at, uint16_t) {
  ++ctr_.rx;
  const uint16_t c = uint16_t(p->flow % cores_.size());  // RSS (to_core, or the box's release)
  PcieCost cost{p->len, 1};
  if (nic_) {
    p = nic_->rx(p, c, cost);
    if (!p) return;  // the NIC dropped it (counted by its program)
  }
  // bytes still waiting for the PCIe channel when this frame has arrived
  const double backlog = rx_free_ > at ? double(rx_free_ - at) * cfg_.pcie_gbps / 8000.0 : 0;
  if (backlog + cost.bytes > double(cfg_.nic_buffer_bytes)) {
    ++ctr_.drop_nic_buffer;
    free_host(p);
    return;
  }
  rx_free_ = std::max(at, rx_free_) + pcie_time(cost);
  p->due = rx_free_;
  if (box_)
    box_->arrive(p);  // Reframer's core first; what it releases comes to_core()
  else
    to_core(p);
}

void NfServer::to_core(Packet* p) {
  const uint16_t c = uint16_t(p->flow % cores_.size());  // RSS
  Core& core = cores_[c];
  core.dma.push(p);
  if (!core.busy && !core.event) {
    core.event = true;
    e_.schedule_tie(p->due, core_tie(c), this, c);
  }
}

// In-chain Reframer holds packets and the core has nothing to read: the dataplane's NF lcore
// polls on; the model wakes the core at Reframer's next deadline (one NF core: scenario check).
void NfServer::arm_reframer() {
  const auto* rf = step_->reframer();
  if (!rf || rf->held_packets() == 0) return;
  const Nanos d = rf->next_deadline();
  if (d == reframe::kNever) return;
  const Picos at = std::max(from_nanos(d), e_.now());
  if (rf_poll_.armed <= at) return;
  rf_poll_.armed = at;
  e_.schedule(at, &rf_poll_);
}

void NfServer::ReframerPoll::on_event(uint64_t) {
  if (s->e_.now() < armed) return;  // superseded by an earlier one
  armed = kNever;
  Core& core = s->cores_[0];
  if (core.busy || core.event) return;  // the core looks again when its event comes
  s->fill_ring(core);
  s->start_burst(0);  // an empty burst polls Reframer: due batches leave
}

// Puts the packets whose DMA has completed by now into the ring (or drops them: ring full).
void NfServer::fill_ring(Core& core) {
  const Picos now = e_.now();
  while (core.dma.head && core.dma.head->due <= now) {
    Packet* p = core.dma.pop();
    if (core.ring.count >= cfg_.rx_ring) {
      ++ctr_.drop_rx_ring;
      free_host(p);
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
  uint16_t n = 0;
  while (core.ring.head && n < cfg_.burst) pkts[n++] = core.ring.pop();
  core.out.clear();
  Sink sink{this, &core, Picos(cfg_.service.burst_ns * double(kNs) + 0.5)};
  step_->run(pkts.data(), n, to_nanos(e_.now()), sink);
  // NIC buffers of what the chain saw: those it (or `drop`) did not pass come back
  if (sink.nic_viewed > sink.nic_held) nic_->host_freed(sink.nic_viewed - sink.nic_held);
  ctr_.nf_drops = step_->nf_drops;
  ctr_.nf_freed = step_->endpoint().drop_freed;
  ctr_.reframe_coalesced = step_->coalesced() + (box_ ? box_->stage().coalesced : 0);
  if (faults_) {
    ctr_.fault_injected = faults_->counters().dropped;
    ctr_.duplicates = faults_->counters().duplicated;
  }
  core.busy = true;
  core.busy_ps += sink.service;
  core.event = true;
  e_.schedule_tie(e_.now() + sink.service, core_tie(c), this, c);
}

void NfServer::Sink::viewed(Packet* p, bool header_only) {
  // a payload the NIC kept (nicmem) is never in host memory: the host handles a header
  const bool in_nic = s->nic_ && s->nic_->nic_holds(p);
  nic_viewed += in_nic;
  header_only = header_only || in_nic;
  service += s->cfg_.service.sample(header_only, s->rng_);
}

// The survivors of the chain: notices go back as they are; the `drop` fault loses a fraction of
// the others silently; then `[faults]` (if set) acts on the burst, as the dataplane's does.
void NfServer::Sink::burst(Packet** pkts, const uint32_t* tag_at, const bool* notice, uint16_t n,
                           Nanos) {
  std::array<uint32_t, nf::kBurst> tags;
  uint16_t keep = 0;
  for (uint16_t i = 0; i < n; ++i) {
    Packet* p = pkts[i];
    if (notice[i]) {
      ++s->ctr_.drop_notices;
    } else if (s->cfg_.drop > 0 && s->rng_.uniform() < s->cfg_.drop) {
      ++s->ctr_.drop_fault;
      // (not counted in nic_held: start_burst returns its NIC buffer with the chain's drops)
      SimBuffer::free(p);
      continue;
    }
    // (the fault stage's drops return their own NIC buffers: fault_lose)
    if (s->nic_ && s->nic_->nic_holds(p)) ++nic_held;
    pkts[keep] = p;
    tags[keep++] = tag_at[i];
  }
  if (s->faults_)
    s->faults_->apply(pkts, tags.data(), keep, core->out);
  else
    core->out.insert(core->out.end(), pkts, pkts + keep);
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
  const auto* rf = step_->reframer();
  if (core.ring.head || (rf && rf->held_packets() && rf->next_deadline() <= to_nanos(e_.now()))) {
    start_burst(uint16_t(c));  // (an empty burst polls in-chain Reframer: due batches leave)
    return;
  }
  if (core.dma.head) {  // idle: wake at the next completion
    core.event = true;
    e_.schedule_tie(core.dma.head->due, core_tie(c), this, c);
  }
  arm_reframer();
}

void NfServer::send_back(Packet* p) {
  ++ctr_.tx;
  const Picos ready = e_.now() + cfg_.latency;
  PcieCost cost{p->len, 1};
  p = nic_ ? nic_->tx(p, cost) : p;  // the NIC reads `cost` over PCIe, then makes the frame
  tx_free_ = std::max(ready, tx_free_) + pcie_time(cost);
  if (!p) return;  // the splice dropped it (counted by the NIC's program)
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
  if (faults_) faults_->report(s);
  if (const auto* rf = reframer())
    rf->counters([&](std::string_view k, uint64_t v) { s("reframe." + std::string(k), v); });
  s("nf_server.header_only", step_->endpoint().header_only);
  s("nf_server.whole", step_->endpoint().whole);
  step_->chain().counters([&](std::string_view k, uint64_t v) { s("nf." + std::string(k), v); });
  if (nic_) nic_->report([&](std::string_view k, uint64_t v) { s("park." + std::string(k), v); });
}

}  // namespace nfpark::sim
