// Element:  Slicer — NFSlicer's Slice & Splice in front of an NF server (NIC shim or middlebox).
// Ports:    wire -> split(pkt, core) -> to_host ; host -> merge(pkt) -> to_wire
//           (split's to_wire is unused: NFSlicer never answers the wire itself; it is there so the
//           engine drives every mode through the same signature.)
// Config:   thr (500 B, frame bytes; sliced iff frame > thr, == thr is not sliced) · slice_bytes
//           (0 = the whole payload; 160/320 = partial slicing) · entries N per core (4096, rounded
//           up to a power of two) · ttl (10 wrap-arounds) · cores (1, <= 255) · dscp (63) ·
//           key (all zero; every run sets one drawn from its secret: the generations' key)
// Time:     none: entries expire by TTL counted in ring wrap-arounds, as in the paper.
// State:    one SliceRing per core; each live entry holds the original packet (zero copy) plus
//           its header length, unsliced tail length and original DSCP.
// Counters: SlicerCounters (slicer_counters.h).
// Cost:     ~170 ns/pkt split+merge 1518 B, ~70 ns pass-through (rough: docs/nfslicer_nicmem.md)
// Refs:     NFSlicer §III (Figs. 3–4), §IV; shared/research/seed000_nfslicer.md §2, §7.
//
// Theory of operation
//  Slice (split): a parsed IPv4/IPv6 TCP/UDP non-fragment frame longer than thr, whose header
//  packet would be shorter than its IP header says, probes its core's ring (the index advances
//  once per such packet). Claimed: the host gets a new header packet = headers + 8-byte token +
//  the payload bytes past slice_bytes (referenced, not copied), with DSCP 63; the original frame
//  waits in the entry untouched. Busy: sent whole. Everything else goes whole and never probes
//  the ring. A whole TCP/UDP packet that could be read as carrying a token on its way back
//  (carries_token: shorter than its IP length says — a truncated capture, a crafted length — or
//  L4 payload starting with the escape token) gets the escape token inserted after its L4
//  header (headers move into headroom; the payload never moves). Nothing else is ever escaped:
//  not DSCP 63 (it means nothing to the splice side), not other protocols (ICMP: a NAT reads
//  the header an ICMP error quotes right after the ICMP header).
//  Splice (merge): carries_token() false ⇒ forwarded unchanged, whatever its DSCP. Else the
//  token is read: escape ⇒ stripped, forwarded; a ring token ⇒ core, index, generation checked
//  against a live entry; only then are the returned headers (the NF may have rewritten them, or
//  changed their length) written onto the waiting original, the original DSCP restored if the
//  header still carries the mark (ECN kept, IPv4 checksum patched; an NF's re-marking wins) and
//  the header packet freed. Anything else is counted and dropped — never spliced onto another
//  packet's payload. The DSCP mark tells the host which packets are sliced (the paper's
//  contract, for TCP/UDP); the splice side never trusts it, so wire DSCP 63 and NFs that
//  re-mark (a meter) cannot make it read a token that is not there, nor miss one that is.
//  Generations: a keyed permutation of the core's insert counter (keyed_perm.h), the key drawn
//  from the run's secret and the core, so tokens cannot be predicted (docs/security.md).
//  Lengths: IP/UDP length fields are never rewritten, so the NF sees the original lengths.
//  NF contract: do not change a packet's length or the bytes from its L4 payload on (the token
//  and what follows it).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "core/parse.h"
#include "park/buffer_ops.h"
#include "park/emitter.h"
#include "park/secret.h"
#include "park/slicer_counters.h"
#include "park/slicer_ring.h"
#include "park/slicer_token.h"

namespace nfpark::park {

struct SlicerConfig {
  uint32_t thr = 500;         // bytes (frame); frames of exactly thr are not sliced
  uint32_t slice_bytes = 0;   // payload bytes sliced per packet; 0 = all of it
  uint32_t entries = 4096;    // N per core
  uint8_t ttl = 10;           // wrap-arounds an entry survives
  uint8_t cores = 1;          // per-core rings; core ids 0..cores-1
  uint8_t dscp = kSliceDscp;  // the mark
  Key128 key{};               // generations' key (a run draws it from its secret)
};
// An error message naming the field and the fix, or nullopt when the config is usable.
std::optional<std::string> check(const SlicerConfig& c);
// N rounded up to a power of two, and its log2.
uint32_t slicer_index_bits(uint32_t entries);

template <BufferOps B>
class Slicer {
 public:
  using Handle = typename B::Handle;
  struct Entry {
    Handle pkt;
    uint16_t hdr_len;         // bytes before the token in the header packet, at slice time
    uint16_t tail_len;        // unsliced payload bytes that travel after the token
    uint8_t dscp;             // original DSCP, restored at splice
    typename B::Lent lent{};  // how the engine lent pkt to the header packet, if it did
  };

  explicit Slicer(const SlicerConfig& c) : cfg_(c), layout_(slicer_index_bits(c.entries)) {
    const uint8_t cores = c.cores ? c.cores : 1;
    for (uint8_t k = 0; k < cores; ++k)
      rings_.push_back(std::make_unique<SliceRing<Entry>>(
          uint32_t(1) << layout_.index_bits(), cfg_.ttl,
          KeyedPermutation(layout_.generation_bits(),
                           derive_key(c.key, "core " + std::to_string(k)))));
  }

  const SlicerConfig& config() const { return cfg_; }
  const TokenLayout& token_layout() const { return layout_; }
  const SlicerCounters& counters() const { return ctr_; }
  void report(const CounterSink& s) const { ctr_.report(s); }
  uint32_t live() const {
    uint32_t n = 0;
    for (auto& r : rings_) n += r->live();
    return n;
  }
  const SliceRing<Entry>& ring(uint8_t core) const { return *rings_[core]; }

  void split(Handle pkt, uint8_t core, Emitter<Handle>& to_host, Emitter<Handle>& /*to_wire*/) {
    ++ctr_.rx;
    uint8_t* d = B::data(pkt);
    PacketLayout L;
    parse_handle<B>(pkt, L);
    if (!L.ok() || L.ip_version == 0) {
      ++ctr_.unsliced_unparsed;
      to_host.push(pkt);
      return;
    }
    const uint8_t dscp = read_dscp(d, L);
    if (try_slice(pkt, core, L, dscp, to_host)) return;
    // Whole. Escaped when the way back would read a token here (carries_token); DSCP plays no
    // part, and other protocols never match (ICMP: a NAT reads the header an ICMP error quotes
    // right after the ICMP header).
    if (carries_token(d, B::head_len(pkt), B::pkt_len(pkt), L)) {
      uint8_t* gap = B::open_gap(pkt, L.payload_off, kTokenBytes);
      if (!gap) {
        ++ctr_.split_no_headroom;
        B::free(pkt);
        return;
      }
      store_be64(gap, kEscapeToken);
      ++ctr_.escaped;
    }
    to_host.push(pkt);
  }

  void merge(Handle h, Emitter<Handle>& to_wire) {
    ++ctr_.returned;
    uint8_t* d = B::data(h);
    const uint32_t head = B::head_len(h);
    PacketLayout L;
    parse_handle<B>(h, L);
    if (!carries_token(d, head, B::pkt_len(h), L)) {  // never read from a packet not ours
      ++ctr_.passed;
      to_wire.push(h);
      return;
    }
    const uint32_t at = L.payload_off;
    const uint64_t tok = load_be64(d + at);
    if (tok == kEscapeToken) {
      B::close_gap(h, at, kTokenBytes);
      ++ctr_.unescaped;
      to_wire.push(h);
      return;
    }
    const uint8_t core = TokenLayout::core(tok);
    if (core >= rings_.size()) return drop(h, ctr_.drop_bad_token);
    SliceRing<Entry>& ring = *rings_[core];
    const uint32_t idx = layout_.index(tok);
    typename SliceRing<Entry>::Lookup why;
    const Entry* e = ring.find(idx, layout_.generation(tok), why);
    if (!e) {
      return drop(
          h, why == SliceRing<Entry>::Lookup::kEmpty ? ctr_.drop_expired : ctr_.drop_generation);
    }
    if (B::pkt_len(h) < at + kTokenBytes + e->tail_len) return drop(h, ctr_.drop_bad_length);
    const bool marked = read_dscp(d, L) == cfg_.dscp;  // before rejoin consumes h
    Entry taken = *e;
    const Rejoin r = B::rejoin(taken.pkt, taken.hdr_len, taken.lent, h, at);
    if (r == Rejoin::kLent) return drop(h, ctr_.drop_duplicate);  // see PayloadPark::merge
    ring.erase(idx);
    if (r == Rejoin::kNoRoom) return drop(taken.pkt, ctr_.merge_no_headroom);
    // Headers copied: same offsets. The mark means "sliced": the original DSCP comes back; an
    // NF that re-marked the packet (a meter) keeps its own.
    if (marked) write_dscp(B::data(taken.pkt), L, taken.dscp);
    ++ctr_.spliced;
    to_wire.push(taken.pkt);
  }

  // Frees every payload still waiting (headers that never came back). Call at shutdown.
  void drain() {
    for (auto& r : rings_)
      r->drain([&](const Entry& e) {
        ++ctr_.stranded_at_exit;
        B::free(e.pkt);
      });
  }

 private:
  bool try_slice(Handle pkt, uint8_t core, const PacketLayout& L, uint8_t dscp,
                 Emitter<Handle>& to_host) {
    const uint32_t len = B::pkt_len(pkt);
    const uint32_t hdr = L.payload_off;
    if (len <= cfg_.thr || len <= hdr + kTokenBytes) {
      ++ctr_.unsliced_small;
      return false;
    }
    if (!token_eligible(L)) {  // TCP/UDP, unfragmented (as PayloadPark's taggable)
      ++ctr_.unsliced_ineligible;
      return false;
    }
    if (core >= rings_.size()) {
      ++ctr_.unsliced_bad_core;
      return false;
    }
    const uint32_t rest = len - hdr;
    const uint32_t cut = cfg_.slice_bytes ? std::min(cfg_.slice_bytes, rest) : rest;
    const uint32_t tail = rest - cut;
    if (tail > 0xFFFF || hdr > 0xFFFF) {  // Entry keeps both in 16 bits
      ++ctr_.unsliced_large;
      return false;
    }
    if (hdr + kTokenBytes + tail >= L.ip_end) {  // the header packet must be short (see merge):
      ++ctr_.unsliced_small;                     // too little payload, or a long trailer
      return false;
    }
    SliceRing<Entry>& ring = *rings_[core];
    auto p = ring.probe(Entry{pkt, uint16_t(hdr), uint16_t(tail), dscp});
    if (p.expired) {
      ++ctr_.expired;
      B::free(p.expired->pkt);
    }
    if (!p.claimed) {
      ++ctr_.unsliced_busy;
      return false;
    }
    Handle h = B::make_header(pkt, hdr, kTokenBytes, hdr + cut, tail, &ring.at(p.index).lent);
    if (h == B::null()) {
      ring.abort(p.index);
      ++ctr_.unsliced_no_buffer;
      return false;
    }
    uint8_t* hd = B::data(h);
    store_be64(hd + hdr, layout_.make(core, p.generation, p.index));
    write_dscp(hd, L, cfg_.dscp);
    ++ctr_.sliced;
    to_host.push(h);
    return true;
  }

  void drop(Handle h, uint64_t& counter) {
    ++counter;
    B::free(h);
  }

  SlicerConfig cfg_;
  TokenLayout layout_;
  std::vector<std::unique_ptr<SliceRing<Entry>>> rings_;
  SlicerCounters ctr_;
};

}  // namespace nfpark::park
