#include "dp/switch_mode.h"

#include <algorithm>

#include "dp/mbuf_ops.h"
#include "dp/pools.h"
#include "dp/port.h"
#include "park/emitter.h"
#include "park/host_boundary.h"
#include "park/nic_split.h"
#include "park/payload_park.h"
#include "park/queue_mem.h"
#include "park/slicer.h"
#include "park/slicer_nic.h"

namespace nfpark::dp {

namespace {

// The packet's NF server as its slice / port of a store with `n` of them; 0 for a packet whose
// server the engine did not set (benchmarks calling a mode directly).
uint8_t server_of(rte_mbuf* m, uint32_t n) {
  const uint32_t s = MbufMeta::server(m);
  return uint8_t(s < n ? s : 0);
}

// Baseline ("host" for the NIC modes): packets go whole to the NF server and back.
class Baseline final : public SwitchMode {
 public:
  Baseline() : hb_(park::HostMode::kHost) {}
  bool passes_whole() const override { return true; }
  uint16_t to_nf(rte_mbuf** p, uint16_t n, std::vector<rte_mbuf*>& nf,
                 std::vector<rte_mbuf*>&) override {
    to_nf_whole(p, n, Port::measure(p, n));
    nf.insert(nf.end(), p, p + n);
    return n;
  }
  // The burst's sums: one counter update per burst; its bytes are the caller's `len`.
  void to_nf_whole(rte_mbuf* const* p, uint16_t n, const BurstLen& len) override {
    uint64_t touched = 0;
    const ViewNeed need = hb_.reads();
    if (need != ViewNeed::kLengths) {  // the bytes the chain reads (none for kLengths)
      for (uint16_t i = 0; i < n; ++i) rte_prefetch0(rte_pktmbuf_mtod(p[i], void*));
      for (uint16_t i = 0; i < n; ++i)
        touched += park::nf_read_len(need, rte_pktmbuf_mtod(p[i], uint8_t*), p[i]->data_len);
    }
    hb_.rx_host_burst(n, len.bytes);
    hb_.nf_burst(n, touched);
  }
  void from_nf(rte_mbuf** p, uint16_t n, uint8_t, std::vector<rte_mbuf*>& out) override {
    from_nf_whole(n, Port::measure(p, n));
    out.insert(out.end(), p, p + n);
  }
  void from_nf_whole(uint16_t n, const BurstLen& len) override { hb_.tx_host_burst(n, len.bytes); }
  void drain(std::vector<rte_mbuf*>&) override {}
  void set_reads(ViewNeed r) override { hb_.set_reads(r); }
  void report(const CounterSink& s) const override {
    hb_.report([&](std::string_view k, uint64_t v) { s("host_boundary." + std::string(k), v); });
  }
  uint64_t drops() const override { return 0; }
  uint64_t held() const override { return 0; }
  void drop_reasons(const CounterSink&) const override {}

 private:
  park::HostBoundary hb_;
};

class PayloadParkMode final : public SwitchMode {
 public:
  explicit PayloadParkMode(const park::ParkConfig& c)
      : pp_(c), tail_(c.park_bytes != 0), slices_(std::max<uint32_t>(c.slices, 1)) {}
  uint16_t to_nf(rte_mbuf** p, uint16_t n, std::vector<rte_mbuf*>& nf,
                 std::vector<rte_mbuf*>&) override {
    for (uint16_t i = 0; i < n; ++i) {  // headers, and the headroom the tag's gap moves them into
      uint8_t* d = rte_pktmbuf_mtod(p[i], uint8_t*);
      rte_prefetch0(d);
      rte_prefetch0(d - 32);
      if (tail_) rte_prefetch0(&p[i]->next);  // a header mbuf copies the dynamic fields (line 1)
    }
    for (uint16_t i = 0; i < n; ++i) {
      if (rte_mbuf* h = pp_.split(p[i], server_of(p[i], slices_))) nf.push_back(h);
    }
    return n;
  }
  void from_nf(rte_mbuf** p, uint16_t n, uint8_t server, std::vector<rte_mbuf*>& out) override {
    for (uint16_t i = 0; i < n; ++i) {
      if (rte_mbuf* m = pp_.merge(p[i], server)) out.push_back(m);
    }
  }
  void server_down(uint8_t server, std::vector<rte_mbuf*>&) override { pp_.reclaim(server); }
  void drain(std::vector<rte_mbuf*>&) override { pp_.drain(); }
  void report(const CounterSink& s) const override { pp_.counters().report(s); }
  uint64_t drops() const override { return pp_.counters().packet_drops(); }
  uint64_t held() const override { return pp_.parked(); }
  void drop_reasons(const CounterSink& s) const override { pp_.counters().drop_reasons(s); }
  uint64_t nf_drops_returned() const override { return pp_.counters().nf_drops_returned(); }

 private:
  park::PayloadPark<MbufOps> pp_;
  bool tail_;  // part of the payload may travel: split allocates a header mbuf
  uint32_t slices_;
};

// Moves what a park mode emitted into the engine's vector.
void move_out(park::Emitter<rte_mbuf*>& e, std::vector<rte_mbuf*>& v) {
  v.insert(v.end(), e.data(), e.data() + e.size());
  e.clear();
}

class QueueMemMode final : public SwitchMode {
 public:
  explicit QueueMemMode(const park::QueueMemConfig& c)
      : qm_(c), nf_(4 * kBurst), out_(c.max_held() + 4 * kBurst), ports_(c.ports) {}
  uint16_t to_nf(rte_mbuf** p, uint16_t n, std::vector<rte_mbuf*>& nf,
                 std::vector<rte_mbuf*>& out) override {
    uint16_t i = 0;
    while (i < n && qm_.split(p[i], server_of(p[i], ports_), nf_, out_))
      ++i;  // stops at a refusal (back-pressure)
    move_out(nf_, nf);
    move_out(out_, out);  // a refusal closes a batch, which may leave at once
    return i;
  }
  void from_nf(rte_mbuf** p, uint16_t n, uint8_t server, std::vector<rte_mbuf*>& out) override {
    for (uint16_t i = 0; i < n; ++i) qm_.merge(p[i], server, out_);
    move_out(out_, out);
  }
  void server_down(uint8_t server, std::vector<rte_mbuf*>& out) override {
    qm_.release_port(server, out_);
    move_out(out_, out);
  }
  bool polls() const override { return true; }
  void poll(Nanos now, bool settled, std::vector<rte_mbuf*>& out) override {
    qm_.poll(now, out_, settled);
    move_out(out_, out);
  }
  void nf_idle(std::vector<rte_mbuf*>& out) override {
    qm_.nf_idle(out_);
    move_out(out_, out);
  }
  void drain(std::vector<rte_mbuf*>& out) override {
    qm_.drain(out_);
    move_out(out_, out);
  }
  void report(const CounterSink& s) const override {
    qm_.report(s);
    s("paused_queues_at_exit", qm_.paused_queues());
  }
  uint64_t drops() const override { return qm_.counters().packet_drops(); }
  uint64_t held() const override { return qm_.counters().held_pkts; }
  void drop_reasons(const CounterSink& s) const override { qm_.counters().drop_reasons(s); }
  uint64_t nf_drops_returned() const override { return qm_.counters().nf_drops_returned(); }

 private:
  park::QueueMem<MbufOps> qm_;
  park::Emitter<rte_mbuf*> nf_, out_;
  uint32_t ports_;
};

// NFSlicer: the NIC shim in front of the NF server slices large packets on the way to the host
// and splices them on the way back.
class SlicerMode final : public SwitchMode {
 public:
  // `core`: the worker's ring, and the core id its tokens carry (run/worker_config.h).
  SlicerMode(const park::SlicerConfig& c, uint8_t core)
      : core_(core), sl_(c), host_(4 * kBurst), wire_(4 * kBurst) {}
  uint16_t to_nf(rte_mbuf** p, uint16_t n, std::vector<rte_mbuf*>& nf,
                 std::vector<rte_mbuf*>&) override {
    for (uint16_t i = 0; i < n; ++i) sl_.to_host(p[i], core_, host_, wire_);
    move_out(host_, nf);
    return n;
  }
  void from_nf(rte_mbuf** p, uint16_t n, uint8_t, std::vector<rte_mbuf*>& out) override {
    for (uint16_t i = 0; i < n; ++i) sl_.to_wire(p[i], wire_);
    move_out(wire_, out);
  }
  void drain(std::vector<rte_mbuf*>&) override { sl_.drain(); }
  void set_reads(ViewNeed r) override { sl_.set_reads(r); }
  void report(const CounterSink& s) const override { sl_.report(s); }
  uint64_t drops() const override { return sl_.slicer().counters().packet_drops(); }
  uint64_t held() const override { return sl_.slicer().counters().held(); }
  void drop_reasons(const CounterSink& s) const override {
    sl_.slicer().counters().drop_reasons(s);
  }

 private:
  uint8_t core_;
  park::SlicerNic<MbufOps> sl_;  // the Slicer and its host-boundary bytes (park/slicer_nic.h)
  park::Emitter<rte_mbuf*> host_, wire_;
};

// nicmem and split: the NIC splits each received frame into a header segment in host memory and
// a payload segment (in NIC memory for nicmem, in host memory for split); the NF touches only
// the first segment; TX gathers both. Ports that offer RTE_ETH_RX_OFFLOAD_BUFFER_SPLIT do the
// split in hardware; here the shim does it in software with the same result: the header bytes
// are written into a host buffer and the payload stays where it was received. The decisions (the
// cut, the boundary bytes, the counters) are park::NicSplit's (park/nic_split.h); this adapter
// does the mbuf mechanics (a header segment from the header pool chained in front of the frame).
class NicSplitMode final : public SwitchMode {
 public:
  NicSplitMode(park::HostMode m, uint32_t hdr_bytes, rte_mempool* nic_pool)
      : ns_(m, hdr_bytes), nic_pool_(nic_pool) {}
  uint16_t to_nf(rte_mbuf** p, uint16_t n, std::vector<rte_mbuf*>& nf,
                 std::vector<rte_mbuf*>&) override {
    for (uint16_t i = 0; i < n; ++i) {
      rte_mbuf* m = p[i];
      if (m->nb_segs > 1 && m->pool == MbufOps::pools.headers) {  // split by the NIC already
        const uint32_t hdr = m->data_len, data = m->pkt_len - hdr;
        ns_.rx(hdr, data, m->next->pool == nic_pool_, ns_.touched(m));
        nf.push_back(m);
        continue;
      }
      nf.push_back(ns_.to_nf(m, m->pool == nic_pool_,
                             [this](rte_mbuf* f, uint32_t hdr) { return split_head(f, hdr); }));
    }
    return n;
  }
  void from_nf(rte_mbuf** p, uint16_t n, uint8_t, std::vector<rte_mbuf*>& out) override {
    for (uint16_t i = 0; i < n; ++i) {
      rte_mbuf* m = p[i];
      ns_.from_nf(m->data_len, m->pkt_len - m->data_len, m->next && m->next->pool == nic_pool_);
      out.push_back(m);  // multi-segment: the port gathers header + payload
    }
  }
  void drain(std::vector<rte_mbuf*>&) override {}
  void set_reads(ViewNeed r) override { ns_.set_reads(r); }
  void report(const CounterSink& s) const override { ns_.report(s); }
  uint64_t drops() const override { return 0; }
  uint64_t held() const override { return 0; }
  void drop_reasons(const CounterSink&) const override {}

 private:
  // A header segment from the header pool holding m's first `hdr` bytes, chained to m with those
  // bytes removed. The payload is not moved.
  rte_mbuf* split_head(rte_mbuf* m, uint32_t hdr) {
    static_assert(kHeaderRoom - RTE_PKTMBUF_HEADROOM >= park::kMaxHeaderSegment);
    rte_mbuf* h = rte_pktmbuf_alloc(MbufOps::pools.headers);
    if (!h) return nullptr;
    uint8_t* to = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(h, uint16_t(hdr)));
    if (!to) {  // longer than a header buffer (NicSplit cuts at most kMaxHeaderSegment)
      rte_pktmbuf_free(h);
      return nullptr;
    }
    std::memcpy(to, rte_pktmbuf_mtod(m, uint8_t*), hdr);
    MbufMeta::copy(h, m);
    h->port = m->port;
    rte_pktmbuf_adj(m, uint16_t(hdr));
    if (rte_pktmbuf_chain(h, m) != 0) {  // too many segments: undo
      rte_pktmbuf_prepend(m, uint16_t(hdr));
      rte_pktmbuf_free(h);
      return nullptr;
    }
    return h;
  }
  park::NicSplit<MbufOps> ns_;
  rte_mempool* nic_pool_;
};

}  // namespace

std::unique_ptr<SwitchMode> make_switch_mode(const RunConfig& cfg, rte_mempool* nic_pool,
                                             std::string& err) {
  switch (cfg.mode) {
    case Mode::kBaseline:
      return std::make_unique<Baseline>();
    case Mode::kPayloadPark:
      return std::make_unique<PayloadParkMode>(cfg.park);
    case Mode::kQueueMem: {
      if (std::string e = cfg.queuemem.validate(); !e.empty()) {
        err = "queuemem: " + e;
        return nullptr;
      }
      return std::make_unique<QueueMemMode>(cfg.queuemem);
    }
    case Mode::kNfSlicer: {
      if (auto e = park::check(cfg.slicer)) {
        err = "nfslicer: " + *e;
        return nullptr;
      }
      return std::make_unique<SlicerMode>(cfg.slicer, uint8_t(cfg.worker));
    }
    case Mode::kNicmem:
      return std::make_unique<NicSplitMode>(park::HostMode::kNicmem, cfg.header_segment, nic_pool);
    case Mode::kSplit:
      return std::make_unique<NicSplitMode>(park::HostMode::kSplit, cfg.header_segment, nic_pool);
  }
  err = "unknown mode";
  return nullptr;
}

}  // namespace nfpark::dp
