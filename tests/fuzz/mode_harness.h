// ModeHarness: one parking mode between a traffic side and an NF, driven by the fuzz input.
//
//   traffic frames --split--> [NF inbox] --NF--> merge --> out        (drain at the end)
//
// The NF is one of three, chosen by the input:
//   kPrompt   honest (nf_model.h HonestNf), returns every burst before the next one arrives,
//             in order; bursts never exceed what the store holds without evicting
//   kSlow     honest, but holds up to `lag` packets (delays past the slot lifetime, TTL, batches)
//   kHostile  anything, step by step: returns in or out of order, drops silently or with the
//             drop flag, duplicates, corrupts bytes, forges tags (random bytes, a tag replayed
//             from an earlier packet, another packet's tag), returns other packets' headers,
//             truncates, pushes bytes, rewrites headers
//   kFaults   honest, behind the engine's own fault injector (park/fault_injector.h) with
//             every fault at a rate the input picks
// The merge check (World::on_rejoin) runs inside every rejoin; everything else is checked at the
// end by fuzz_modes.cc from what this records.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "core/flow_key.h"
#include "core/parse.h"
#include "fuzz/input.h"
#include "fuzz/modes.h"
#include "fuzz/nf_model.h"
#include "fuzz/track_buffer.h"
#include "fuzz/traffic.h"
#include "park/fault_injector.h"
#include "park/nf_endpoint.h"

namespace nfpark::fuzz {

enum class Regime : uint8_t { kPrompt, kSlow, kHostile, kFaults };

// NFPARK_FUZZ_TRACE=1: every event of an input on stderr (to read a reproducer).
inline bool tracing() {
  static const bool t = std::getenv("NFPARK_FUZZ_TRACE") != nullptr;
  return t;
}
#define FUZZ_TRACE(...)                               \
  do {                                                \
    if (tracing()) std::fprintf(stderr, __VA_ARGS__); \
  } while (0)

class ModeHarness {
 public:
  struct Held {
    TPkt* p;
    uint8_t lane;  // the lane it was split on (the NF returns it on the same one)
  };

  ModeHarness(Input& in, std::unique_ptr<Mode> m, Regime r, HonestNf nf, uint32_t lag,
              const park::FaultConfig& faults = {})
      : mode(std::move(m)),
        regime(r),
        honest(nf),
        in_(in),
        lag_(lag),
        ep_(mode->nf_format(), r == Regime::kHostile || nf.notify, mode->slicer()),
        faults_(mode->lanes(), park::FaultInjector<TrackBuffer>(faults, shape_of(*mode))) {
    World::current() = &world;
  }
  ~ModeHarness() { World::current() = nullptr; }

  // Runs the input to its end, then lets the NF return what it holds and drains the mode.
  void run() {
    for (uint32_t step = 0; !in_.empty() && step < 512 && frames.size() < 3000; ++step) {
      if (regime == Regime::kHostile && in_.flag()) {
        hostile_step();
        continue;
      }
      inject(in_.range(1, regime == Regime::kPrompt ? std::min(32u, mode->capacity()) : 32));
      if (regime == Regime::kFaults) {
        through_faults(Nanos(step) * kMicro, false);
      } else if (regime != Regime::kHostile) {
        while (inbox.size() > (regime == Regime::kPrompt ? 0 : lag_)) nf_process(pop(0));
      }
    }
    if (regime == Regime::kFaults) through_faults(0, true);
    for (;;) {  // the NF returns what it holds; what was refused is offered again
      while (!inbox.empty()) nf_process(pop(0));
      offer();
      if (!inbox.empty()) continue;
      if (backlog_.empty()) break;
      mode->nf_idle(to_out_);  // refused, and nothing is at the NF any more
      emit();
      offer();
      FUZZ_CHECK(!inbox.empty() || backlog_.empty(),
                 "%s: %zu packets refused with nothing at the NF", mode->name().c_str(),
                 backlog_.size());
    }
    mode->drain(to_out_);
    emit();
    for (const auto& f : faults_) {
      copies += f.counters().duplicated;
      nf_drops += f.counters().dropped;
    }
  }
  park::FaultCounters fault_counters() const {
    park::FaultCounters c;
    for (const auto& f : faults_) {
      c.forged += f.counters().forged;
      c.corrupted += f.counters().corrupted;
    }
    return c;
  }

  World world;
  std::unique_ptr<Mode> mode;
  const Regime regime;
  const HonestNf honest;
  std::vector<std::vector<uint8_t>> frames;         // every traffic frame as sent, by id
  std::vector<uint32_t> heads;                      // its first segment's length
  std::map<uint32_t, std::vector<uint8_t>> issued;  // frame id -> tag/token issued for it
  std::deque<Held> inbox;                           // at the NF
  std::vector<std::vector<uint8_t>> out;            // what left the switch, in order
  std::vector<Kind> out_kind;
  uint64_t copies = 0, nf_drops = 0;
  uint64_t notified = 0;  // NF drops sent back to the switch with the drop flag

 private:
  void inject(uint32_t n) {
    for (uint32_t k = 0; k < n; ++k) {
      const uint32_t id = uint32_t(frames.size());
      frames.push_back(traffic_frame(in_, id, history_));
      TPkt* p = world.make(frames.back(), id, Kind::kFrame);
      const uint8_t seg = in_.u8();  // most frames in one segment, some in several
      if (seg >= 0xF0)
        p->head = std::min<uint32_t>(p->head, 14 + (seg & 0x0F) * 12);
      else if (seg >= 0xE0)
        p->head = std::min<uint32_t>(p->head, 2048);
      if (mode->by_flow() && p->head < frames.back().size()) {
        // QUEUE-MEM finds a packet's flow in its first segment: nfpark's engines always hold
        // L2-L4 there (2 KB data rooms; nicmem's header segment is at least L2-L4), so a head
        // cut inside the headers is not a frame its per-flow order is checked on.
        const PacketLayout F =
            parse_packet(frames.back().data(), uint32_t(frames.back().size()));
        if (F.ok() && p->head < F.payload_off) p->head = F.payload_off;
      }
      heads.push_back(p->head);
      const uint8_t fail = in_.u8();
      world.fail_alloc = fail >= 0xF8;
      world.fail_gap = regime != Regime::kPrompt && (fail & 0xF7) == 0xF7;  // drops: counted
      const bool fail_alloc = world.fail_alloc, fail_gap = world.fail_gap;
      world.fail_alloc = world.fail_gap = false;
      uint8_t lane = uint8_t(in_.range(0, mode->lanes() - 1u));
      if (mode->by_flow()) {  // QUEUE-MEM's lane is the output port: a flow's is always the same
        PacketLayout L = parse_packet(frames.back().data(), uint32_t(frames.back().size()));
        FlowKey k;
        if (L.ok() && L.has_ports() && extract_flow_key(frames.back().data(), L, k))
          lane = flow_lane_.emplace(k.hash(), lane).first->second;
      }
      FUZZ_TRACE("frame %u: %u bytes (head %u), lane %u\n", id, p->size(), p->head, lane);
      backlog_.push_back({p, lane, fail_alloc, fail_gap});
      offer();
    }
  }
  // Offers the refused packets, then the new ones, in order, until the mode refuses one
  // (QUEUE-MEM's back-pressure: the engine keeps it in its ring and offers it again later).
  void offer() {
    while (!backlog_.empty()) {
      const Waiting w = backlog_.front();
      world.fail_alloc = w.fail_alloc;
      world.fail_gap = w.fail_gap;
      const bool taken = mode->split(w.p, w.lane, to_nf_, to_out_);
      world.fail_alloc = world.fail_gap = false;
      if (taken) {
        backlog_.pop_front();
      } else {
        TRACK_LIVE(w.p, "refused packet");
        FUZZ_TRACE("  refused: frame %u\n", w.p->id);
      }
      for (size_t i = 0; i < to_nf_.size(); ++i) take(to_nf_[i], w.lane);
      to_nf_.clear();
      emit();
      if (!taken) return;
    }
  }
  // A packet the switch sent to the NF.
  void take(TPkt* h, uint8_t lane) {
    TRACK_LIVE(h, "split output");
    for (const Held& x : inbox) FUZZ_CHECK(x.p != h, "a packet sent to the NF twice");
    if (h->kind == Kind::kHeader) {  // a record issued: remember its tag or token
      uint32_t at = 0;
      while (at < h->size() && h->from[at].src != Src::kTag) ++at;
      const uint32_t ts = mode->tag_size();
      FUZZ_CHECK(at + ts <= h->size(), "header packet without its tag");
      issued[h->id].assign(h->bytes.begin() + at, h->bytes.begin() + at + ts);
      history_.push_back(issued[h->id]);
      if (history_.size() > 64) history_.erase(history_.begin());
    }
    FUZZ_TRACE("  to NF: #%llu (%s of frame %u, %u bytes)\n", (unsigned long long)h->serial,
               h->kind == Kind::kHeader ? "header"
               : h->kind == Kind::kCopy ? "copy"
                                        : "frame",
               h->id, h->size());
    h->lane = lane;
    inbox.push_back({h, lane});
  }

  Held pop(size_t i) {
    Held h = inbox[i];
    inbox.erase(inbox.begin() + long(i));
    return h;
  }
  void back_to_switch(TPkt* p, uint8_t lane) {
    FUZZ_TRACE("  back: #%llu (frame %u, %u bytes) lane %u\n", (unsigned long long)p->serial, p->id,
               p->size(), lane);
    mode->merge(p, lane, to_out_);
    if (tracing()) FUZZ_TRACE("    [%s]\n", mode->counters().c_str());
    emit();
    if (!offering_) {  // a merge may have made room for what was refused
      offering_ = true;
      offer();
      offering_ = false;
    }
  }
  static park::TagShape shape_of(const Mode& m) {
    if (m.slicer()) return {park::TagShape::kSlicerToken};
    if (!m.nf_format()) return {};
    return {*m.nf_format() == park::TagFormat::kNfpark ? park::TagShape::kNfpark
                                                       : park::TagShape::kPayloadPark};
  }
  // The honest NF on the whole inbox, then each lane's fault injector (an NF server's, on its own
  // link) on what it passed (`all`: the end, every delayed packet too), then the switch.
  void through_faults(Nanos now, bool all) {
    for (uint8_t lane = 0; lane < faults_.size(); ++lane) through_faults(now, all, lane);
  }
  void through_faults(Nanos now, bool all, uint8_t lane) {
    std::vector<TPkt*> pass, back;
    std::vector<uint32_t> tags;
    for (size_t i = 0; i < inbox.size();) {
      if (inbox[i].lane != lane) {
        ++i;
        continue;
      }
      Held h = pop(i);
      PacketView v;
      uint32_t tag_at = 0;
      ep_.view(h.p, v, tag_at);
      if (honest.apply(*h.p)) {
        ep_.view(h.p, v, tag_at);  // where the tag is now (the NF may have pushed a VLAN tag)
        pass.push_back(h.p);
        tags.push_back(tag_at);
      } else {
        drop_notified(h, tag_at);
      }
    }
    park::FaultInjector<TrackBuffer>& fi = faults_[lane];
    fi.release(now, all, back);
    for (size_t i = 0; i < pass.size(); i += 32) {
      const uint16_t n = uint16_t(std::min<size_t>(32, pass.size() - i));
      fi.apply(pass.data() + i, tags.data() + i, n, now, back,
               [this](TPkt* p) { return world.copy(*p); });
    }
    if (all) fi.release(now, true, back);
    for (TPkt* p : back) back_to_switch(p, lane);
  }
  // The honest NF's turn on one packet: its view, its verdict, back to the switch.
  void nf_process(Held h) {
    PacketView v;
    uint32_t tag_at = 0;
    ep_.view(h.p, v, tag_at);
    if (regime == Regime::kHostile || honest.apply(*h.p)) return back_to_switch(h.p, h.lane);
    drop_notified(h, tag_at);
  }
  void drop_notified(Held h, uint32_t tag_at) {
    ++nf_drops;
    if (TPkt* d = ep_.on_drop(h.p, tag_at)) {
      ++notified;
      back_to_switch(d, h.lane);
    }
  }
  void hostile_step();
  void emit() {
    for (size_t i = 0; i < to_out_.size(); ++i) {
      TPkt* p = to_out_[i];
      TRACK_LIVE(p, "switch output");
      FUZZ_TRACE("  out: #%llu (frame %u, %u bytes)\n", (unsigned long long)p->serial, p->id,
                 p->size());
      out.push_back(p->bytes);
      out_kind.push_back(p->kind);
      TrackBuffer::free(p);
    }
    to_out_.clear();
  }

  struct Waiting {  // a traffic frame the mode has not taken yet
    TPkt* p;
    uint8_t lane;
    bool fail_alloc, fail_gap;
  };
  std::deque<Waiting> backlog_;
  std::map<uint64_t, uint8_t> flow_lane_;  // by_flow modes: flow hash -> its lane
  bool offering_ = false;
  Input& in_;
  const uint32_t lag_;
  park::NfEndpoint<TrackBuffer> ep_;
  Em to_nf_{64}, to_out_{4096};
  std::vector<park::FaultInjector<TrackBuffer>> faults_;  // one per lane
  std::vector<std::vector<uint8_t>> history_;
};

// One step of the hostile NF.
inline void ModeHarness::hostile_step() {
  if (inbox.empty()) return;
  const uint8_t op = in_.u8() % 12;
  const size_t i = in_.u8() % inbox.size(), j = in_.u8() % inbox.size();
  TPkt& p = *inbox[i].p;
  PacketView v;
  uint32_t tag_at = 0;
  ep_.view(&p, v, tag_at);
  const uint32_t at = tag_at ? tag_at : (v.layout.ok() ? v.layout.payload_off : 0);
  const uint8_t lane = uint8_t(in_.range(0, mode->lanes() - 1u));
  FUZZ_TRACE("  NF op %u on #%llu (j #%llu)\n", op, (unsigned long long)p.serial,
             (unsigned long long)inbox[j].p->serial);
  switch (op) {
    case 0: {  // return the oldest
      Held h = pop(0);
      return back_to_switch(h.p, h.lane);
    }
    case 1: {  // return any, maybe on another lane
      Held h = pop(i);
      return back_to_switch(h.p, mode->any_lane_back() ? lane : h.lane);
    }
    case 2:  // drop silently
      ++nf_drops;
      TrackBuffer::free(pop(i).p);
      return;
    case 3:  // drop, with the drop flag when the packet is tagged
      return drop_notified(pop(i), tag_at);
    case 4:  // duplicate
      ++copies;
      inbox.push_back({world.copy(p), inbox[i].lane});
      return;
    case 5: {  // corrupt a byte anywhere
      if (!p.size()) return;
      const uint8_t b = in_.u8();
      return nf_write(p, in_.u16() % p.size(), &b, 1);
    }
    case 6: {  // forge the tag: random bytes, a tag issued earlier, or another packet's tag
      const uint8_t how = in_.u8() % 3;
      if (how == 0) {
        std::vector<uint8_t> b = in_.bytes(in_.range(1, mode->tag_size()));
        return nf_write(p, at, b.data(), uint32_t(b.size()));
      }
      if (how == 1 && !history_.empty()) {
        const auto& t = history_[in_.u8() % history_.size()];
        return nf_write(p, at, t.data(), uint32_t(t.size()));
      }
      PacketView vj;
      uint32_t tj = 0;
      ep_.view(inbox[j].p, vj, tj);
      return nf_copy(p, at, *inbox[j].p, tj ? tj : at, mode->tag_size());
    }
    case 7: {  // another packet's headers (and maybe its tag) over this one's
      const uint32_t n = in_.range(0, 96);
      return nf_copy(p, 0, *inbox[j].p, 0, n);
    }
    case 8:  // truncate
      return nf_truncate(p, in_.u16() % (p.size() + 1));
    case 9: {  // push bytes anywhere in the first segment
      std::vector<uint8_t> b = in_.bytes(in_.range(1, 8));
      return nf_insert(p, in_.u16() % (p.head + 1), b.data(), uint32_t(b.size()));
    }
    case 10:  // what an honest NF does (rewrites, VLAN push), whatever its verdict
      (void)HonestNf{0, uint16_t(in_.u16() | 1), true, true}.apply(p);
      return;
    default:  // return everything, in order
      while (!inbox.empty()) {
        Held h = pop(0);
        back_to_switch(h.p, h.lane);
      }
  }
}

}  // namespace nfpark::fuzz
