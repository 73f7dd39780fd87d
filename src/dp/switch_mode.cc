#include "dp/switch_mode.h"

#include "dp/mbuf_ops.h"
#include "park/payload_park.h"

namespace nfpark::dp {

namespace {

// Baseline: no split, packets go whole to the NF and come back whole.
class Baseline final : public SwitchMode {
 public:
  void to_nf(rte_mbuf** p, uint16_t n, std::vector<rte_mbuf*>& nf, std::vector<rte_mbuf*>&) override {
    nf.insert(nf.end(), p, p + n);
  }
  void from_nf(rte_mbuf** p, uint16_t n, std::vector<rte_mbuf*>& out) override {
    out.insert(out.end(), p, p + n);
  }
  void drain(std::vector<rte_mbuf*>&) override {}
  void report(const CounterSink&) const override {}
  uint64_t drops() const override { return 0; }
  uint64_t held() const override { return 0; }
  void drop_reasons(const CounterSink&) const override {}
};

class PayloadParkMode final : public SwitchMode {
 public:
  explicit PayloadParkMode(const park::ParkConfig& c) : pp_(c) {}
  void to_nf(rte_mbuf** p, uint16_t n, std::vector<rte_mbuf*>& nf, std::vector<rte_mbuf*>&) override {
    for (uint16_t i = 0; i < n; ++i) {
      if (i + 1 < n) rte_prefetch0(rte_pktmbuf_mtod(p[i + 1], void*));
      if (rte_mbuf* h = pp_.split(p[i], 0)) nf.push_back(h);
    }
  }
  void from_nf(rte_mbuf** p, uint16_t n, std::vector<rte_mbuf*>& out) override {
    for (uint16_t i = 0; i < n; ++i) {
      if (i + 1 < n) rte_prefetch0(rte_pktmbuf_mtod(p[i + 1], void*));
      if (rte_mbuf* m = pp_.merge(p[i], 0)) out.push_back(m);
    }
  }
  void drain(std::vector<rte_mbuf*>&) override { pp_.drain(); }
  void report(const CounterSink& s) const override { pp_.counters().report(s); }
  uint64_t drops() const override {
    // Explicit drops are the NF's drops (counted by the NF server), not the switch's.
    const auto& c = pp_.counters();
    return c.drops() - c.explicit_drops - c.explicit_drops_whole;
  }
  uint64_t held() const override { return pp_.parked(); }
  void drop_reasons(const CounterSink& s) const override {
    const auto& c = pp_.counters();
    s("premature_eviction", c.premature_evictions);
    s("bad_tag", c.bad_tag);
    s("wrong_slice", c.wrong_slice);
    s("no_headroom", c.no_headroom);
  }

 private:
  park::PayloadPark<MbufOps> pp_;
};

}  // namespace

std::unique_ptr<SwitchMode> make_switch_mode(const RunConfig& cfg, std::string& err) {
  switch (cfg.mode) {
    case Mode::kBaseline: return std::make_unique<Baseline>();
    case Mode::kPayloadPark: return std::make_unique<PayloadParkMode>(cfg.park);
    default:
      err = "mode '" + std::string(to_string(cfg.mode)) + "' is not available in this build yet";
      return nullptr;
  }
}

}  // namespace nfpark::dp
