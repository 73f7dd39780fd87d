// Fuzz target `modes`: each parking mode's split -> NF -> merge on arbitrary traffic against an
// honest, a slow or an arbitrarily misbehaving NF (mode_harness.h), over the engine-neutral
// templates with the checking TrackBuffer.
//
// Input: mode and its config (modes.h), the NF regime and the honest NF's parameters, then a
// stream of traffic bursts and NF steps.
//
// Properties, every input:
//  - never a payload on the wrong header. At every rejoin the returned header must be entitled to
//    the parked payload: a header packet the switch made for that very frame, its tag untouched
//    (honest NF, or any packet no NF byte touched); and under a hostile NF, whose tag region
//    holds exactly the tag the switch issued for that frame (a replayed, stale, forged or
//    another packet's tag is never merged, even when it decodes);
//  - in + NF copies = out + the mode's drops + NF drops; every buffer freed once and only once
//    (TrackBuffer), nothing held after drain(), nothing handed out twice.
// Honest NF behind the fault injector: every frame that leaves is one the baseline sends.
// Honest NF (baseline = the same NF applied to the whole frames, in order):
//  - prompt (bursts within the store's capacity, returned at once): no drop, and the output is
//    the baseline, byte for byte and in order (QUEUE-MEM: the same packets, in order per flow);
//  - slow: whatever was dropped was counted, and the output is the baseline minus those, in
//    order (QUEUE-MEM: in order per flow).
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/flow_key.h"
#include "core/parse.h"
#include "fuzz/check.h"
#include "fuzz/input.h"
#include "fuzz/mode_harness.h"

namespace nfpark::fuzz {
namespace {

// The merge check: is `r`, returned by the NF with its headers in r[0, at), entitled to the
// payload of `parked`?
void check_rejoin(const ModeHarness& h, const TPkt& parked, const TPkt& r, uint32_t at) {
  const uint32_t ts = h.mode->tag_size();
  FUZZ_CHECK(uint64_t(at) + ts <= r.size(), "rejoin with no room for a tag at %u of %u", at,
             r.size());
  bool touched = r.reshaped;
  for (const Origin& o : r.from) touched |= o.src == Src::kNf;
  if (h.regime != Regime::kHostile || !touched) {
    bool own = r.kind != Kind::kFrame && r.id == parked.id;
    for (uint32_t i = at; i < at + ts; ++i)
      own &= r.from[i].src == Src::kTag && r.from[i].id == parked.id;
    FUZZ_CHECK(own, "payload of frame %u merged under %s %u (not its own header packet)", parked.id,
               r.kind == Kind::kFrame ? "traffic frame" : "a packet of frame", r.id);
  }
  if (h.regime == Regime::kHostile) {
    auto it = h.issued.find(parked.id);
    FUZZ_CHECK(it != h.issued.end(), "payload of frame %u merged but never issued a tag",
               parked.id);
    FUZZ_CHECK(std::equal(it->second.begin(), it->second.end(), r.bytes.begin() + at),
               "payload of frame %u merged under a tag the switch did not issue for it (%s)",
               parked.id, h.mode->name().c_str());
  }
}

// The honest NF over the whole frames, in order: what a baseline run sends out.
std::vector<std::vector<uint8_t>> baseline(const ModeHarness& h) {
  std::vector<std::vector<uint8_t>> b;
  for (size_t id = 0; id < h.frames.size(); ++id) {
    TPkt p;
    p.bytes = h.frames[id];
    p.from.resize(p.bytes.size());
    p.head = h.heads[id];
    if (h.honest.apply(p)) b.push_back(std::move(p.bytes));
  }
  return b;
}

// Flow of an output frame (0: no ports — all such frames form one sequence).
uint64_t flow_of(const std::vector<uint8_t>& f) {
  const PacketLayout L = parse_packet(f.data(), uint32_t(f.size()));
  FlowKey k;
  if (!L.ok() || !L.has_ports() || !extract_flow_key(f.data(), L, k)) return 0;
  return k.hash() | 1;
}

using Frames = std::vector<std::vector<uint8_t>>;

// Index in `out` of the first frame that breaks "out is a subsequence of `base`", or -1.
long not_subsequence(const Frames& out, const Frames& base) {
  size_t j = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    while (j < base.size() && base[j] != out[i]) ++j;
    if (j == base.size()) return long(i);
    ++j;
  }
  return -1;
}

std::map<uint64_t, Frames> by_flow(const Frames& f) {
  std::map<uint64_t, Frames> m;
  for (const auto& x : f) m[flow_of(x)].push_back(x);
  return m;
}

void check_against_baseline(const ModeHarness& h) {
  const Frames base = baseline(h);
  const bool prompt = h.regime == Regime::kPrompt;
  const std::string mode = h.mode->name();
  if (!h.mode->by_flow()) {
    const long bad = not_subsequence(h.out, base);
    FUZZ_CHECK(bad < 0, "%s: output %ld is not in the baseline's order (%zu out, %zu base)",
               mode.c_str(), bad, h.out.size(), base.size());
    if (prompt)
      FUZZ_CHECK(h.out == base, "%s: %zu packets out, baseline %zu", mode.c_str(), h.out.size(),
                 base.size());
    return;
  }
  // QUEUE-MEM: batches leave in their own order; each flow keeps its order.
  const auto out = by_flow(h.out), want = by_flow(base);
  for (const auto& [flow, frames] : out) {
    auto w = want.find(flow);
    FUZZ_CHECK(w != want.end(), "%s: a frame of a flow the baseline never sent", mode.c_str());
    const long bad = not_subsequence(frames, w->second);
    if (bad >= 0) {
      Frames a = frames, b = w->second;
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      FUZZ_CHECK(std::includes(b.begin(), b.end(), a.begin(), a.end()),
                 "%s: a frame the baseline never sent", mode.c_str());
      FUZZ_CHECK(false, "%s: flow out of order at its packet %ld", mode.c_str(), bad);
    }
  }
  if (prompt)
    FUZZ_CHECK(h.out.size() == base.size(), "%s: %zu out, baseline %zu", mode.c_str(), h.out.size(),
               base.size());
}

void check_end(ModeHarness& h) {
  const std::string mode = h.mode->name() + " [" + h.mode->counters() + "]";
  const uint64_t in = h.frames.size(), drops = h.mode->packet_drops();
  // Two ways to count. Today's (the runner's balance): the NF counts every packet it drops,
  // the switch the packets it drops first. It breaks when a drop notification finds nothing
  // (evicted payload, batch gone, tag corrupted on the way): the switch counts the notification
  // again — open finding "drop_notice_twice". The rule that always holds: a packet the NF sends
  // back, notification or not, is counted where it ends, by the switch (explicit drops
  // included); the NF counts only what it frees itself.
  const uint64_t explicit_drops =
      h.mode->counter("explicit_drops") + h.mode->counter("explicit_drops_whole") +
      h.mode->counter("drop.explicit") + h.mode->counter("drop.explicit_whole");
  const bool ends =
      in + h.copies == h.out.size() + drops + explicit_drops + h.nf_drops - h.notified;
  const bool today = in + h.copies == h.out.size() + drops + h.nf_drops;
  FUZZ_CHECK(ends,
             "%s: in %llu + copies %llu != out %zu + drops %llu + explicit %llu + NF "
             "drops %llu - notified %llu",
             mode.c_str(), (unsigned long long)in, (unsigned long long)h.copies, h.out.size(),
             (unsigned long long)drops, (unsigned long long)explicit_drops,
             (unsigned long long)h.nf_drops, (unsigned long long)h.notified);
  FUZZ_KNOWN("drop_notice_twice", today,
             "%s: in %llu + copies %llu != out %zu + drops %llu "
             "+ NF drops %llu",
             mode.c_str(), (unsigned long long)in, (unsigned long long)h.copies, h.out.size(),
             (unsigned long long)drops, (unsigned long long)h.nf_drops);
  FUZZ_CHECK(h.world.live == 0, "%s: %lld buffers never freed", mode.c_str(),
             (long long)h.world.live);
  FUZZ_CHECK(h.mode->held() == 0, "%s: %llu still held after drain", mode.c_str(),
             (unsigned long long)h.mode->held());
  if (h.regime == Regime::kHostile) return;
  if (h.regime == Regime::kFaults) {  // whatever left is a frame the baseline sends
    std::vector<std::vector<uint8_t>> base = baseline(h);
    std::sort(base.begin(), base.end());
    for (size_t i = 0; i < h.out.size(); ++i) {
      const bool known = std::binary_search(base.begin(), base.end(), h.out[i]);
      FUZZ_CHECK(known,
                 "%s: output %zu is no frame the baseline sends (faults: forged %llu, "
                 "corrupted %llu)",
                 mode.c_str(), i, (unsigned long long)h.fault_counters().forged,
                 (unsigned long long)h.fault_counters().corrupted);
    }
    return;
  }
  if (h.regime == Regime::kPrompt) {
    if (h.mode->by_flow())
      FUZZ_CHECK(drops == 0, "%s: %llu drops", mode.c_str(), (unsigned long long)drops);
    else
      FUZZ_CHECK(drops == 0, "%s: %llu drops though the NF returned everything at once",
                 mode.c_str(), (unsigned long long)drops);
  }
  for (Kind k : h.out_kind)
    FUZZ_CHECK(k == Kind::kFrame, "%s: a header packet left as it was", mode.c_str());
  if (!known_hit()) check_against_baseline(h);
}

}  // namespace
}  // namespace nfpark::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nfpark::fuzz;
  known_hit() = nullptr;
  Input in(data, size);
  auto mode = make_mode(in);
  const uint8_t r = in.u8();
  const Regime regime = r < 0x40   ? Regime::kPrompt
                        : r < 0x80 ? Regime::kSlow
                        : r < 0xC0 ? Regime::kHostile
                                   : Regime::kFaults;
  HonestNf nf;
  nf.drop_level = uint8_t(in.u8() % 20 < 15 ? 0 : in.range(1, 8));
  nf.port_xor = in.u16();
  nf.push_vlan = in.flag();
  nf.notify = !(in.u8() % 4 == 0);
  const uint32_t lag = in.range(0, 255);
  nfpark::park::FaultConfig faults;
  const double rates[] = {0, 0.05, 0.2, 0.5};
  faults.drop = rates[in.u8() % 4];
  faults.dup = rates[in.u8() % 4];
  faults.reorder = rates[in.u8() % 4];
  faults.corrupt_tag = rates[in.u8() % 4];
  faults.forge_tag = rates[in.u8() % 4];
  faults.delay_us = in.range(0, 40);
  faults.delay_share = rates[1 + in.u8() % 3];
  faults.seed = in.u16();
  ModeHarness h(in, std::move(mode), regime, nf, lag, faults);
  h.world.on_rejoin = [&h](const TPkt& parked, const TPkt& ret, uint32_t at) {
    check_rejoin(h, parked, ret, at);
  };
  h.run();
  check_end(h);
  return known_hit() ? -1 : 0;
}
