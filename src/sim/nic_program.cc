#include "sim/nic_program.h"

#include <algorithm>

#include "park/emitter.h"
#include "park/nic_split.h"
#include "park/slicer_nic.h"

namespace nfpark::sim {

namespace {

// Baseline: whole frames cross, one descriptor each way (what dp's Baseline accounts).
class HostNic final : public NicProgram {
 public:
  HostNic() : hb_(park::HostMode::kHost) {}
  Packet* rx(Packet* p, uint16_t, PcieCost& cost) override {
    hb_.rx_host(p->len);
    hb_.nf(park::nf_read_len(hb_.reads(), p->data(), p->head));
    cost = {p->len, 1};
    return p;
  }
  Packet* tx(Packet* p, PcieCost& cost) override {
    hb_.tx_host(p->len);
    cost = {p->len, 1};
    return p;
  }
  void report(const CounterSink& s) const override {
    hb_.report([&](std::string_view k, uint64_t v) { s("host_boundary." + std::string(k), v); });
  }
  const park::HostBoundary& boundary() const override { return hb_; }
  void set_reads(ViewNeed r) override { hb_.set_reads(r); }

 private:
  park::HostBoundary hb_;
};

// NFSlicer: park::SlicerNic on the records; the header packet (or the whole frame) crosses.
class SlicerNicProgram final : public NicProgram {
 public:
  explicit SlicerNicProgram(const park::SlicerConfig& c) : nic_(c), host_(4), wire_(4) {}
  Packet* rx(Packet* p, uint16_t core, PcieCost& cost) override {
    nic_.to_host(p, uint8_t(core % nic_.slicer().config().cores), host_, wire_);
    Packet* h = host_.empty() ? nullptr : host_[0];
    host_.clear();
    wire_.clear();  // NFSlicer never answers the wire from the slice side
    if (h) cost = {h->len, 1};
    return h;
  }
  Packet* tx(Packet* p, PcieCost& cost) override {
    cost = {p->len, 1};  // the NIC reads the host's packet whatever the splice then decides
    nic_.to_wire(p, wire_);
    Packet* out = wire_.empty() ? nullptr : wire_[0];
    wire_.clear();
    return out;
  }
  void drain() override { nic_.drain(); }
  uint64_t drops() const override { return nic_.slicer().counters().packet_drops(); }
  uint64_t held() const override { return nic_.slicer().counters().held(); }
  void drop_reasons(const CounterSink& s) const override {
    nic_.slicer().counters().drop_reasons(s);
  }
  void report(const CounterSink& s) const override {
    nic_.report(s);
    s("live_at_end", nic_.slicer().live());
  }
  const park::HostBoundary& boundary() const override { return nic_.boundary(); }
  void set_reads(ViewNeed r) override { nic_.set_reads(r); }

 private:
  park::SlicerNic<SimBuffer> nic_;
  park::Emitter<Packet*> host_, wire_;
};

// A record as the NIC's receive buffer: one segment spanning the whole frame as far as the
// record's buffer reaches. A record that holds only a frame's headers (records are 192 B unless
// [sim] full_bytes) still gets the cut a NIC makes (max(header_segment, L2-L4)), not one at the
// end of the bytes the simulator bothered to write; the headers it parses are always there.
struct NicView : SimBuffer {
  static uint32_t head_len(Handle p) { return std::min(p->len, p->reach()); }
};
static_assert(park::BufferOps<NicView>);

// nicmem / split: park::NicSplit decides the cut and the bytes; a record stays one record (its
// `user` field remembers the header segment and where the payload is until it leaves).
class NicSplitNic final : public NicProgram {
 public:
  NicSplitNic(park::HostMode m, const NicConfig& c)
      : ns_(m, c.header_segment), mem_(c.nicmem_pool) {}
  Packet* rx(Packet* p, uint16_t, PcieCost& cost) override {
    const bool nicmem = ns_.mode() == park::HostMode::kNicmem;
    const bool in_nic = nicmem && ns_.cut_at(p) != 0 && mem_.take();
    peak_ = std::max(peak_, mem_.used());
    uint32_t cut = 0;
    const uint64_t before = ns_.boundary().rx().data_bytes;
    Packet* out = ns_.to_nf(p, in_nic, [&](Packet* f, uint32_t hdr) {
      cut = hdr;  // the record is the header segment chained to its payload: nothing moves
      return f;
    });
    out->user = uint16_t((in_nic ? kInNic : 0) | cut);
    cost = {uint32_t(ns_.boundary().rx().data_bytes - before), 2};
    return out;
  }
  Packet* tx(Packet* p, PcieCost& cost) override {
    const uint32_t cut = p->user & kCutMask;
    const bool in_nic = p->user & kInNic;
    const uint64_t before = ns_.boundary().tx().data_bytes;
    if (cut)
      ns_.from_nf(cut, p->len - cut, in_nic);
    else
      ns_.from_nf(p->len, 0, false);  // one segment
    cost = {uint32_t(ns_.boundary().tx().data_bytes - before), uint16_t(cut ? 2 : 1)};
    release(p);
    return p;
  }
  void host_freed(uint32_t n) override {
    for (uint32_t i = 0; i < n; ++i) mem_.give();
  }
  bool nic_holds(Packet* p) const override { return p->user & kInNic; }
  void report(const CounterSink& s) const override {
    ns_.report(s);
    s("nic_memory_slots", mem_.slots());
    s("nic_memory_peak", peak_);
    s("nic_memory_used_at_end", mem_.used());
  }
  bool all_back() const override { return mem_.all_back(); }
  const park::HostBoundary& boundary() const override { return ns_.boundary(); }
  void set_reads(ViewNeed r) override { ns_.set_reads(r); }

 private:
  static constexpr uint16_t kInNic = 0x8000, kCutMask = 0x7FFF;
  void release(Packet* p) {
    if (p->user & kInNic) mem_.give();
    p->user = 0;
  }
  park::NicSplit<NicView> ns_;
  park::NicMemory mem_;
  uint32_t peak_ = 0;
};

}  // namespace

std::unique_ptr<NicProgram> make_nic_program(park::HostMode mode, const NicConfig& c,
                                             std::string& err) {
  switch (mode) {
    case park::HostMode::kHost:
      return std::make_unique<HostNic>();
    case park::HostMode::kNfslicer:
      if (auto e = park::check(c.slicer)) return err = "[nfslicer] " + *e, nullptr;
      return std::make_unique<SlicerNicProgram>(c.slicer);
    case park::HostMode::kNicmem:
    case park::HostMode::kSplit:
      if (c.header_segment < 1) return err = "[nicmem] header_segment must be >= 1", nullptr;
      if (c.nicmem_pool < 1) return err = "[nicmem] pool must be >= 1", nullptr;
      return std::make_unique<NicSplitNic>(mode, c);
  }
  err = "unknown NIC mode";
  return nullptr;
}

}  // namespace nfpark::sim
