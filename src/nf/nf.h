// Nf: the interface every shallow network function implements.
//
// An NF gets a burst of up to kBurst packet views and a verdict per packet. It acts on every
// packet whose verdict is kPass (rewriting header bytes in place, updating checksums
// incrementally) and may set kDrop. It never reads a clock: `now` is read once per burst by the
// engine. It never allocates on the per-packet path and never touches bytes past
// `layout.payload_off` (they may be a parking tag or nothing at all). It rewrites fields, never
// the headers' structure (lengths, protocols, options): every NF of a chain reads the one
// `layout` parsed before it, and the engine may carry that parse on past the chain.
//
// Run-aware processing (run_burst.h). A chain splits its burst into runs of consecutive
// same-flow packets once and hands them to each NF's process_runs(); an NF that keys on the
// flow decides once per run (one lookup) and applies the decision to every packet of the run,
// with results identical to process() packet by packet: verdicts, rewrites, counters and state
// (tests/nf/run_equivalence_test.cc). An NF without a run path keeps the default, process().
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/counters.h"
#include "core/packet_view.h"
#include "core/shard.h"
#include "core/time.h"

namespace nfpark::nf {

constexpr size_t kBurst = 32;
enum class Verdict : uint8_t { kPass = 0, kDrop = 1 };
// One sentence a user should read after a run: what went wrong and how to fix it.
using WarningSink = std::function<void(std::string_view)>;
struct FlowRuns;  // run_burst.h
struct RunHints;  // run_burst.h

// Appends the bytes of a trivially copyable value (NF state exports, for tests).
template <class T>
void put_state(std::vector<uint8_t>& out, const T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  const auto* b = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), b, b + sizeof v);
}

class Nf {
 public:
  virtual ~Nf() = default;
  virtual std::string_view name() const = 0;
  // pkts.size() == verdicts.size() <= kBurst.
  virtual void process(std::span<PacketView> pkts, std::span<Verdict> verdicts, Nanos now) = 0;
  // The same burst split into runs (runs.build(pkts, verdicts) with the NF's input). Must give
  // exactly what process() gives. Called only when run_aware().
  virtual void process_runs(std::span<PacketView> pkts, std::span<Verdict> verdicts,
                            const FlowRuns& runs, Nanos now) {
    (void)runs;
    process(pkts, verdicts, now);
  }
  virtual bool run_aware() const { return false; }
  // Stage 1 of the NF's lookups, issued by the chain as soon as it has the runs of the segment
  // this NF belongs to (nf.h's Chain): the lines the NF will read for each shared run's flow
  // prefetched, so that they arrive while the NFs before it work (memory-level parallelism
  // across the chain). A hint: it must not change state. Called only when run_aware().
  virtual void prefetch_runs(const FlowRuns& runs) const { (void)runs; }
  // After process_runs() of an NF that rewrites flow keys: updates `runs` so that it describes
  // the packets as they are now (each shared run's new key and hash) and returns true, or returns
  // false and the chain finds the runs again. A run may be left split where two runs now have
  // one key (a finer split gives the same results); a run must never hold two keys.
  virtual bool remap_runs(std::span<const PacketView> pkts, std::span<const Verdict> verdicts,
                          FlowRuns& runs) const {
    (void)pkts;
    (void)verdicts;
    (void)runs;
    return false;
  }
  // False when the NF's per-packet decision costs less than finding the runs (~8-10 ns/packet:
  // the router's LPM): it then uses runs only when the chain has them already.
  virtual bool finds_runs() const { return true; }
  // What of each packet's view the NF reads (core/packet_view.h): below kHeaders it never reads
  // `layout`, and the engine then does not parse the packet for it. A run-aware NF keys on flows:
  // kHeaders.
  virtual ViewNeed reads() const { return ViewNeed::kHeaders; }
  // False when the NF never changes a packet's flow key (addresses, ports, protocol, ICMP
  // identifier): the chain then keeps its runs for the next NF instead of finding them again.
  virtual bool rewrites_flow_key() const { return true; }
  // False when the NF never sets kDrop (forward, macswap, busy): a chain none of whose NFs drops
  // passes every packet on, so the engine may skip its per-packet verdicts and survivors
  // (park/nf_burst.h). NFs never change a packet's length either (above): such a chain's
  // output is its input, in order, byte counts unchanged.
  virtual bool may_drop() const { return true; }
  // True when all the NF takes of a burst is how many packets pass and their wire bytes, and it
  // neither drops nor rewrites a packet (forward): a chain of such NFs is handed those two sums
  // (count_sums()) instead of views, and the engine builds no view (park/nf_burst.h).
  virtual bool counts_only() const { return false; }
  // A counts_only() NF's burst: `packets` packets, all kPass, of `wire_bytes` wire bytes in all.
  // Must count exactly what process() counts for the same burst (tests/nf/simple_test.cc).
  virtual void count_sums(uint64_t packets, uint64_t wire_bytes, Nanos now) {
    (void)packets;
    (void)wire_bytes;
    (void)now;
  }
  // The NF's state as bytes (tables in slot order, pools, buckets), for tests that compare two
  // runs; stateless NFs append nothing.
  virtual void export_state(std::vector<uint8_t>& out) const { (void)out; }
  virtual void counters(const CounterSink& sink) const { (void)sink; }
  // Conditions the user should hear about (a pool ran out, say), judged from the counters; an
  // NF has no stderr, so the engine asks at the end of a run and prints them. Never per packet.
  virtual void warnings(const WarningSink& sink) const { (void)sink; }
  // Many workers (core/shard.h): this instance is worker `w` of `n`, each with state of its own.
  // Called once, before any packet. An NF that hands out something unique (a NAT's external
  // ports) takes only its share.
  virtual void set_worker(uint32_t w, uint32_t n) {
    (void)w;
    (void)n;
  }
  // The steering rules that bring both directions of this NF's flows to one worker, when the
  // symmetric hash alone does not (an address it rewrites).
  virtual void steering(std::vector<SteerRule>& rules) const { (void)rules; }
};

// A chain runs its NFs in order over the same burst; a packet dropped by one NF is skipped by
// the ones after it. Counters are reported as "<nf name>.<counter>". Run-aware (the default),
// the NFs between two that rewrite flow keys form a segment: the chain finds the burst's runs at
// the start of a segment in which some NF finds runs (finds_runs()), has every run-aware NF of
// the segment prefetch its lines (prefetch_runs), and after a rewriting NF takes its remapped
// runs (remap_runs) or finds them again (chain.cc); per-packet (set_run_aware(false)) every NF
// runs process().
class Chain {
 public:
  Chain();
  ~Chain();
  void add(std::unique_ptr<Nf> nf) { nfs_.push_back(std::move(nf)); }
  // `hints`: the packets' flow ids as the engine's Reframer computed them from these bytes
  // (run_burst.h); the chain's first runs then start where the ids change, without key compares.
  void process(std::span<PacketView> pkts, std::span<Verdict> verdicts, Nanos now,
               const RunHints* hints = nullptr);
  void set_run_aware(bool on) { run_aware_ = on; }
  bool run_aware() const { return run_aware_; }
  void export_state(std::vector<uint8_t>& out) const {
    for (const auto& nf : nfs_) nf->export_state(out);
  }
  void counters(const CounterSink& sink) const {
    for (const auto& nf : nfs_) {
      std::string prefix(nf->name());
      nf->counters([&](std::string_view n, uint64_t v) { sink(prefix + "." + std::string(n), v); });
    }
  }
  void warnings(const WarningSink& sink) const {
    for (const auto& nf : nfs_) {
      std::string prefix(nf->name());
      nf->warnings([&](std::string_view w) { sink(prefix + ": " + std::string(w)); });
    }
  }
  void set_worker(uint32_t w, uint32_t n) {
    for (auto& nf : nfs_) nf->set_worker(w, n);
  }
  void steering(std::vector<SteerRule>& rules) const {
    for (const auto& nf : nfs_) nf->steering(rules);
  }
  size_t size() const { return nfs_.size(); }
  // The most any NF reads of a view (kHeaders when run-aware processing would find runs, which
  // reads the parse): what the engine must give the chain (core/packet_view.h).
  ViewNeed reads() const;
  // True when some NF of the chain may drop a packet (Nf::may_drop()).
  bool may_drop() const {
    for (const auto& nf : nfs_)
      if (nf->may_drop()) return true;
    return false;
  }
  // True when every NF of the chain is Nf::counts_only(): count_sums() may replace process() for a
  // burst whose verdicts are all kPass.
  bool counts_only() const {
    for (const auto& nf : nfs_)
      if (!nf->counts_only()) return false;
    return true;
  }
  void count_sums(uint64_t packets, uint64_t wire_bytes, Nanos now) {
    for (auto& nf : nfs_) nf->count_sums(packets, wire_bytes, now);
  }
  const Nf& at(size_t i) const { return *nfs_[i]; }

 private:
  bool segment_finds_runs(size_t k) const;
  void prefetch_segment(size_t k) const;

  std::vector<std::unique_ptr<Nf>> nfs_;
  std::unique_ptr<FlowRuns> runs_;
  bool run_aware_ = true;
};

}  // namespace nfpark::nf
