// Element:  NfBurst — the NF server's burst step, written once for every engine: the dataplane's
//           NF lcore (src/dp/nf_server.*) and the simulator's NF server model
//           (src/sim/nf_server.*) are thin adapters over it.
// Ports:    run(burst) / flush() -> Sink (burst of survivors, with their tag offsets)
// Config:   the chain (nf::build_chain), the tag format (nullopt: whole packets), notify_drops
//           (true: a tagged packet the chain drops goes back as PayloadPark's explicit-drop
//           notice), slicer (packets carry NFSlicer's token), Reframer in-chain (optional,
//           park/reframe_stage.h; the box placement runs the same stage on its own lcore and
//           this step then has none), trace time (optional).
// Time:     passed in (`now`); replaying a trace, the clock is the newest packet's trace time,
//           which the engine reads from its handle (clock(); park/trace_clock.h). The chain
//           itself then runs each
//           burst in segments of packets whose trace times lie within kTraceSegment (1 ms) of
//           each other, at the segment's newest time (needs `B::trace_ts(h)`): a packet meets
//           the chain at (about) its own trace time, whichever packets share its burst — see
//           "Trace time" below.
// Counters: rx, nf_drops (the chain's verdicts), coalesced (pure ACKs Reframer removed; freed),
//           the endpoint's (park/nf_endpoint.h: header_only, whole, drop_notified, drop_freed).
// Paper:    PayloadPark §4 (the NF server returns headers with their tag; an NF drop is an
//           explicit drop so the slot frees at once), Reframer (flows held up to t_buff, then fed
//           to the chain flow by flow).
//
// Theory of operation
//  A burst is viewed (NfEndpoint: where the tag is, the original's length), run through the chain
//  at once at `now`, and the chain's drops become notices or are freed. The survivors (and the
//  notices, flagged) go to the Sink in input order, one call per chain burst, so an engine can
//  apply its own per-burst step (the dataplane's fault injector) and send them; a survivor
//  carries the chain's parse (park/buffer_ops.h) when the engine can keep it. A chain that
//  reads no parse (nf::Chain::reads() below kHeaders: forward, macswap) on untagged packets
//  gets views without one: nothing is parsed, nothing carried (a carried parse stays valid); one
//  that also drops nothing and takes only a burst's sums (nf::Chain::counts_only(): forward)
//  gets those and no view at all. With Reframer, the packets read are held per flow and what
//  Reframer releases runs through the chain in bursts of kBurst, flows kept together; each released
//  packet brings the parse Reframer's classify() made of it (ReframeStage::Released), which its
//  view takes instead of parsing again (one parse per packet in-chain, whatever the engine's
//  handles can carry). Nothing here allocates per packet.
//
//  Trace time. A replay runs faster than the trace, so one burst can span seconds of trace time
//  where a capture is sparse, and a parking mode (QUEUE-MEM's batches, Reframer) or a separate NF
//  lcore changes which packets share a burst. Were the chain's clock the newest trace time seen,
//  a packet held behind a later one would meet the chain seconds late in trace time (a fragment
//  1 ms after its first would find the NAT's fragment state expired, in one run and not the
//  next). So with trace time the chain's clock for a packet is the newest time of its segment:
//  decisions follow the packets' own times, the same in every mode and timing. That clock may go
//  back between segments (a held packet after a newer one); the NFs take `now` as a packet's
//  time, not as a monotonic clock (a meter never refills backwards; a flow table's refresh and
//  expiry compare times). clock() (the engine's: fault delays, flush) stays the newest seen.
//
//  Sink:  void viewed(Handle, bool header_only)   each packet as the endpoint sees it (the
//                                                 simulator charges its service time here)
//         void burst(Handle* pkts, const uint32_t* tag_at, const bool* notice, uint16_t n,
//                    Nanos now)                   survivors of one chain burst, in order
#pragma once
#include <algorithm>
#include <array>
#include <climits>
#include <memory>
#include <optional>
#include <vector>

#include "core/hot_path.h"
#include "core/parse.h"
#include "core/time.h"
#include "nf/nf.h"
#include "nf/run_burst.h"
#include "park/buffer_ops.h"
#include "park/nf_endpoint.h"
#include "park/reframe_stage.h"
#include "park/trace_clock.h"

namespace nfpark::park {

template <BufferOps B>
class NfBurst {
 public:
  using Handle = typename B::Handle;
  static constexpr uint16_t kMax = uint16_t(nf::kBurst);
  // Replaying a trace: the most trace time one chain call spans (see "Trace time").
  static constexpr Nanos kTraceSegment = kMilli;

  NfBurst(std::unique_ptr<nf::Chain> chain, std::optional<TagFormat> format, bool notify,
          bool slicer = false)
      : chain_(std::move(chain)),
        ep_(format, notify, slicer),
        unparsed_(ep_.untagged() && chain_->reads() < ViewNeed::kHeaders),
        short_(unparsed_ && !chain_->may_drop()),
        sums_(short_ && chain_->counts_only()) {
    pass_.fill(nf::Verdict::kPass);
    no_tag_.fill(0);
    no_notice_.fill(false);
  }

  // Puts Reframer in front of the chain: packets are held per flow for up to t_buff and reach
  // the chain flow by flow.
  void set_reframer(const reframe::ReorderConfig& cfg, const reframe::BypassRules& rules = {}) {
    reorder_ = std::make_unique<ReframeStage<B>>(cfg, rules);
    ready_.reserve(reorder_->reserve_hint());
  }
  // Replaying a trace: the chain's `now` is the trace time of the newest packet seen, not the
  // engine's clock, so results do not depend on the replay speed.
  void use_trace_time(bool on) { clock_.use_trace_time(on); }
  bool trace_time() const { return clock_.trace_time(); }

  // The clock a poll that read `pkts` at `now` runs on: `now`, or with trace time the newest
  // trace time seen (`ts(h)`); nullopt while no packet has been seen.
  template <class Ts>
  std::optional<Nanos> clock(const Handle* pkts, uint16_t n, Nanos now, Ts&& ts) {
    return clock_.advance(pkts, n, now, std::forward<Ts>(ts));
  }
  // The clock the last poll ran on (INT64_MIN before it has one).
  Nanos clock() const { return clock_.last(); }

  // Runs up to kMax packets read at `now` (clock()'s) through Reframer (if set) and the chain.
  // `wire_bytes`: the sum of the packets' wire lengths (pkt_len + cut_len) when the engine knows
  // it already; a chain that takes sums only (counts_only) then reads no packet.
  template <class Sink>
  void run(Handle* pkts, uint16_t n, Nanos now, Sink& sink, const uint64_t* wire_bytes = nullptr) {
    rx += n;
    whole_ = false;
    if (!reorder_) {
      const uint64_t drops = nf_drops;
      // with trace time the burst may run in segments, each summed on its own
      wire_ = wire_bytes && !clock_.trace_time() ? wire_bytes : nullptr;
      if (n) process(pkts, n, now, sink);
      wire_ = nullptr;
      whole_ = nf_drops == drops;
      return;
    }
    reorder_->run(pkts, n, now, ready_);
    // A full read means more packets wait at the port: a partial chain burst left over waits
    // for the next call's releases (the chain's per-burst work and its 32 lookups in flight
    // are shared by 32 packets, as without Reframer). Only while Reframer holds packets, so
    // an engine that polls Reframer at next_deadline() (the simulator) comes back for it.
    run_ready(now, sink, n == kMax && reorder_->held() > 0);
  }

  // End of a run: everything Reframer holds goes through the chain now.
  template <class Sink>
  void flush(Nanos now, Sink& sink) {
    if (!reorder_) return;
    reorder_->flush(now, ready_);
    run_ready(now, sink);
  }
  // The time flush() should run at when replaying a trace (the newest trace time, 0 if none).
  Nanos flush_time(Nanos now) const { return clock_.flush_time(now); }

  // The last run() sent the Sink exactly the packets it was given, in order, each as long as it
  // came (no drop, no notice, no Reframer): byte counts of its input are its output's.
  bool passed_whole() const { return whole_; }
  // Packets Reframer holds, and released ones waiting for a full chain burst.
  size_t held() const { return reorder_ ? reorder_->held() + ready_.size() : 0; }
  const nf::Chain& chain() const { return *chain_; }
  const NfEndpointCounters& endpoint() const { return ep_.counters(); }
  const typename ReframeStage<B>::Reorder* reframer() const {
    return reorder_ ? &reorder_->reframer() : nullptr;
  }
  uint64_t coalesced() const { return reorder_ ? reorder_->coalesced : 0; }
  // Starts a fresh self-bypass probe of Reframer (if set), e.g. after a warm-up.
  void reframe_probe_now() {
    if (reorder_) reorder_->probe_now();
  }

  uint64_t rx = 0, nf_drops = 0;

 private:
  // Replaying a trace, runs pkts through the chain in segments at their own trace times (see
  // "Trace time"); otherwise at once at `now`.
  // `rel` (Reframer's releases, in-chain): rel[i] is pkts[i] with its parse; nullptr: none.
  using Released = typename ReframeStage<B>::Released;
  template <class Sink>
  void process(Handle* pkts, uint16_t n, Nanos now, Sink& sink, const Released* rel = nullptr) {
    if constexpr (requires(Handle h) { Nanos(B::trace_ts(h)); }) {
      if (clock_.trace_time()) {
        for (uint16_t b = 0; b < n;) {
          Nanos lo = B::trace_ts(pkts[b]), hi = lo;
          uint16_t e = b + 1;
          for (; e < n; ++e) {
            const Nanos t = B::trace_ts(pkts[e]);
            if (std::max(hi, t) - std::min(lo, t) > kTraceSegment) break;
            lo = std::min(lo, t);
            hi = std::max(hi, t);
          }
          process_at(pkts + b, uint16_t(e - b), hi, now, sink, rel ? rel + b : nullptr);
          b = e;
        }
        return;
      }
    }
    process_at(pkts, n, now, now, sink, rel);
  }

  // The chain at `chain_now`; the sink's burst at the engine's `now`.
  template <class Sink>
  void process_at(Handle* pkts, uint16_t n, Nanos chain_now, Nanos now, Sink& sink,
                  const Released* rel) {
    if (sums_ && !rel) {  // the chain takes the burst's sums only: no view at all
      uint64_t wire = 0;
      for (uint16_t i = 0; i < n; ++i) sink.viewed(pkts[i], false);
      if (wire_)  // the engine's sum of the whole burst (run(): no segments)
        wire = *wire_;
      else
        for (uint16_t i = 0; i < n; ++i) wire += NfEndpoint<B>::wire_len(pkts[i]);
      ep_.count_unparsed(n);
      chain_->count_sums(n, wire, chain_now);
      sink.burst(pkts, no_tag_.data(), no_notice_.data(), n, now);
      return;
    }
    auto& views = views_;  // a member: a local array would be zeroed (32 views) every burst
    if (short_ && !rel) {  // the chain drops nothing and reads no parse: Theory of operation
      ep_.view_unparsed(pkts, views.data(), n);
      for (uint16_t i = 0; i < n; ++i) sink.viewed(pkts[i], false);
      chain_->process({views.data(), n}, {pass_.data(), n}, chain_now);
      sink.burst(pkts, no_tag_.data(), no_notice_.data(), n, now);
      return;
    }
    std::array<nf::Verdict, kMax> verdicts;
    std::array<uint32_t, kMax> tag_at;
    std::array<bool, kMax> notice;
    for (uint16_t i = 0; i < n; ++i) {
      if (unparsed_) {  // the chain reads no parse and no packet carries a tag: none is made
        ep_.view_unparsed(pkts[i], views[i], tag_at[i]);
        sink.viewed(pkts[i], false);
        verdicts[i] = nf::Verdict::kPass;
        continue;
      }
      if (i + 1 < n) prefetch_line(B::data(pkts[i + 1]));
      const uint64_t hdr_before = ep_.counters().header_only;
      ep_.view(pkts[i], views[i], tag_at[i],
               rel && rel[i].layout.ip_version ? &rel[i].layout : nullptr);
      views[i].user = 0;
      sink.viewed(pkts[i], ep_.counters().header_only != hdr_before);
      verdicts[i] = nf::Verdict::kPass;
    }
    // Reframer's flow ids (of these bytes: no NF has run yet) tell the chain where runs start
    std::array<uint64_t, kMax> flows;
    if (rel)
      for (uint16_t i = 0; i < n; ++i) flows[i] = rel[i].flow;
    const nf::RunHints hints{flows.data()};
    chain_->process({views.data(), n}, {verdicts.data(), n}, chain_now, rel ? &hints : nullptr);
    uint16_t keep = 0;
    for (uint16_t i = 0; i < n; ++i) {
      Handle h = pkts[i];
      bool is_notice = false;
      if (verdicts[i] == nf::Verdict::kDrop) {
        ++nf_drops;
        h = ep_.on_drop(h, tag_at[i]);
        if (h == B::null()) continue;
        is_notice = true;
      } else if (!unparsed_) {
        // NFs rewrite header fields in place, never where the headers are (they share this
        // one parse; nf/nf.h): the view's parse is still the packet's, for the next stage
        carry_layout<B>(h, views[i].layout);
      }
      pkts[keep] = h;
      tag_at[keep] = tag_at[i];
      notice[keep] = is_notice;
      ++keep;
    }
    if (keep) sink.burst(pkts, tag_at.data(), notice.data(), keep, now);
  }

  // Runs what Reframer released through the chain, a burst at a time, flows kept together;
  // with keep_tail a last partial burst stays in ready_ for the next call.
  template <class Sink>
  void run_ready(Nanos now, Sink& sink, bool keep_tail = false) {
    std::array<Handle, kMax> pkts;
    const size_t total = ready_.size(), end = keep_tail ? total / kMax * kMax : total;
    for (size_t i = 0; i < end; i += kMax) {
      const uint16_t n = uint16_t(std::min<size_t>(kMax, end - i));
      for (uint16_t j = 0; j < n; ++j) pkts[j] = ready_[i + j].h;
      process(pkts.data(), n, now, sink, ready_.data() + i);
    }
    ready_.erase(ready_.begin(), ready_.begin() + ptrdiff_t(end));
  }

  std::unique_ptr<nf::Chain> chain_;
  NfEndpoint<B> ep_;
  std::unique_ptr<ReframeStage<B>> reorder_;
  std::vector<Released> ready_;         // what Reframer released, with parses (ReframeStage)
  std::array<PacketView, kMax> views_;  // process()'s burst (see there)
  TraceClock clock_;
  bool unparsed_;  // views without the parse (the chain reads none; nothing tagged)
  bool short_;     // unparsed_ and the chain drops nothing: the short step
  bool sums_;      // short_ and the chain takes only the burst's sums (counts_only)
  const uint64_t* wire_ = nullptr;      // run()'s wire_bytes while it runs
  bool whole_ = false;                  // passed_whole()
  std::array<nf::Verdict, kMax> pass_;  // the short step's verdicts: all kPass, never written
  std::array<uint32_t, kMax> no_tag_;   // the short step's tag offsets: none
  std::array<bool, kMax> no_notice_;
};

}  // namespace nfpark::park
