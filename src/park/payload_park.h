// Element:  PayloadPark — split on the way to the NF, merge on the way back (software switch).
// Ports:    traffic in -> split -> NF slice s ; NF slice s -> merge -> traffic out
// Config:   min_payload (160 B) · park_bytes (160 B; 352 = recirculation variant; 0 = all)
//           slots per slice (65536) · max_exp (1) · tag format (nfpark | payloadpark) · tag key
//           (16 bytes: keyed tags, what every run uses — --tag-key or drawn from the run's
//           secret; none: unkeyed, unit tests only; tag.h) · no_split filter · slices (1)
// Time:     none: eviction is by probe count (EXP), as in the paper, not by timers.
// State:    one SlotTable per slice holding parked packets (see slot_table.h).
// Counters: ParkCounters (PayloadPark's eight + nfpark's own).
// Refs:     PayloadPark (CoNEXT'20) §3–§5, Algorithms 1–2; shared/research/seed001_payloadpark.md.
//
// Theory of operation
//  Split (traffic port): a packet is taggable if it parses as IPv4/IPv6 + TCP/UDP and is not a
//  fragment. Taggable packets get a tag right after their L4 header:
//   - eligible (payload >= min_payload, not filtered) and a slot claimed: the NF receives a
//     header packet = headers + tag + the payload bytes past the parked range (referenced, not
//     copied); the original's payload waits in the slot. The engine may lend the original itself
//     to the header packet (B::make_header: in place when nothing of the payload travels, or as
//     its tail segment) and takes it back at the merge (B::rejoin); how it lent it (B::Lent) is
//     kept in the slot beside the handle, a line the split and the merge touch anyway.
//   - otherwise the whole packet goes with a tag saying "not parked" (ENB=0), inserted by moving
//     the headers into headroom — the payload is never moved.
//  Untaggable packets (ARP, ICMP, fragments, malformed) go to the NF as they are. Taggable at
//  split ⇔ taggable at merge (the same parse of headers the NF keeps), and every taggable packet
//  carries a tag in front of its payload, so payload bytes are never read as a tag: DSCP,
//  lengths and tag-like payloads of ordinary traffic change nothing.
//  Merge (NF port): the tag is found after the returning packet's L4 header and validated; a
//  parked payload is taken from its slot only if index, generation and slice match, and then the
//  (possibly rewritten) headers are put back onto the parked original, which leaves. Everything
//  else is counted and dropped, never spliced. A packet that physically carries its own parked
//  payload back (lent by the engine) is merged without a parse: its tag ends its first segment,
//  and the slot's identity proves it. A copy of a header packet that comes back while the lent
//  original is still out is dropped (duplicate_header); the payload waits for the original.
//  Differences from the paper: the parked packet keeps its own headers and payload in place, so
//  "re-attaching" is a header copy; the whole payload can be parked (park_bytes = 0); tags are
//  checked (the P4 code computes the checksum but never verifies it); an NF may change the header
//  length (e.g. push a VLAN tag) and the merge follows it.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "core/hot_path.h"
#include "core/parse.h"
#include "park/buffer_ops.h"
#include "park/no_split.h"
#include "park/park_counters.h"
#include "park/slot_table.h"
#include "park/tag.h"

namespace nfpark::park {

struct ParkConfig {
  uint32_t min_payload = 160;  // bytes of L4 payload needed to park
  uint32_t park_bytes = 160;   // bytes parked per packet; 0 = the whole payload
  uint32_t slots = 65536;      // per slice
  uint8_t max_exp = 1;         // EXP: table traversals a payload survives
  uint8_t slices = 1;          // NF servers, each with its own slice
  TagFormat format = TagFormat::kNfpark;
  std::optional<Key128> key;  // tag key (tag.h); nullopt: unkeyed tags
  NoSplitFilter no_split;
};

// True for packets that carry a parking tag: IPv4/IPv6, TCP/UDP, headers complete, unfragmented.
inline bool taggable(const PacketLayout& L) {
  return L.ok() && L.has_ports() && !L.fragment;
}

template <BufferOps B>
class PayloadPark {
 public:
  using Handle = typename B::Handle;
  struct Parked {
    Handle pkt;
    uint16_t hdr_len;
    typename B::Lent lent{};  // how the engine lent pkt to the header packet, if it did
  };

  explicit PayloadPark(const ParkConfig& c) : cfg_(c), codec_(c.format, c.key) {
    uint32_t slots = uint32_t(std::min<uint64_t>(c.slots, codec_.index_limit()));
    for (uint8_t s = 0; s < std::max<uint8_t>(c.slices, 1); ++s)
      tables_.emplace_back(slots, c.max_exp, codec_.generation_limit());
  }
  const TagCodec& codec() const { return codec_; }
  const ParkCounters& counters() const { return ctr_; }
  uint32_t parked() const {
    uint32_t n = 0;
    for (auto& t : tables_) n += t.occupied();
    return n;
  }

  // Traffic port -> NF slice. Returns what to send to the NF, or B::null() if the packet had to
  // be dropped (no headroom to insert a tag: counted; cannot happen with nfpark's own pools).
  // The common case (parked) is inline; every other outcome is out of line.
  NFPARK_HOT_INLINE Handle split(Handle pkt, uint8_t slice) {
    uint8_t* d = B::data(pkt);
    const uint32_t len = B::pkt_len(pkt);
    PacketLayout L;
    parse_handle<B>(pkt, L);
    if (!taggable(L)) return split_untaggable(pkt);
    const uint32_t hdr = L.payload_off;
    const uint32_t payload = std::min(L.ip_end, len) - hdr;
    if (payload < cfg_.min_payload || payload == 0)
      return send_whole(pkt, L, slice, ctr_.not_split_small);
    if (len > kMaxTaggedFrame) [[unlikely]]
      return send_whole(pkt, L, slice, ctr_.not_split_large);
    if (!cfg_.no_split.empty() && cfg_.no_split.match(d, L))
      return send_whole(pkt, L, slice, ctr_.not_split_filtered);
    SlotTable<Parked>& table = tables_[slice];
    const auto c = table.claim(Parked{pkt, uint16_t(hdr)});
    if (c.evicted) [[unlikely]]
      evict(c.evicted->pkt);
    if (!c.ok) [[unlikely]]
      return send_whole(pkt, L, slice, ctr_.not_split_busy);
    const uint32_t park = cfg_.park_bytes ? std::min(cfg_.park_bytes, payload) : payload;
    Handle h = B::make_header(pkt, hdr, codec_.size(), hdr + park, len - hdr - park,
                              &table.at(c.index).lent);
    if (h == B::null()) [[unlikely]] {  // give the slot back and send whole
      table.take(c.index, c.generation);
      return send_whole(pkt, L, slice, ctr_.not_split_no_buffer);
    }
    ParkTag tag;
    tag.parked = true;
    tag.slice = slice;
    tag.index = c.index;
    tag.generation = c.generation;
    tag.orig_len = uint16_t(len);
    tag.parked_len = uint16_t(park);
    codec_.encode(tag, B::data(h) + hdr);
    carry_layout<B>(h, L);  // its headers are pkt's: the NF side need not parse them
    ++ctr_.splits;
    return h;
  }

  // NF slice -> traffic port. Returns the packet to forward, or B::null() when dropped (counted).
  // Fast path (inline): a header packet that comes back carrying its own parked payload (the
  // engine lent the original to it, in place or as its tail) ends its first segment with the
  // tag, so no parse is needed — and no check either: the slot's payload being the very one this
  // packet carries proves index, generation and slice; a tag changed on the way fails that and
  // takes the slow path, where the check rejects it. nfpark tags only.
  NFPARK_HOT_INLINE Handle merge(Handle pkt, uint8_t slice) {
    const uint32_t head = B::head_len(pkt);
    if (cfg_.format == TagFormat::kNfpark && head >= codec_.size() && slice < tables_.size()) {
      const uint32_t at = head - codec_.size();
      ParkTag tag;
      if (codec_.peek(B::data(pkt) + at, tag) && tag.parked && tag.slice == slice) {
        SlotTable<Parked>& table = tables_[slice];
        Parked* p = table.find(tag.index, tag.generation);
        if (p && B::carries(pkt, p->pkt)) [[likely]]
          return merge_parked(pkt, table, *p, tag, at);
      }
    }
    return merge_slow(pkt, slice);
  }

  // NF server `slice` went down: frees every payload parked in its slice (counted reclaimed;
  // their headers are lost with the server). A header that still comes back finds its slot
  // free or reused under another generation and is dropped (premature_evictions).
  void reclaim(uint8_t slice) {
    if (slice >= tables_.size()) return;
    tables_[slice].drain([&](const Parked& p) {
      ++ctr_.reclaimed;
      B::free(p.pkt);
    });
  }

  // Frees every payload still parked (headers that never came back). Call at shutdown.
  void drain() {
    for (auto& t : tables_)
      t.drain([&](const Parked& p) {
        ++ctr_.stranded_at_exit;
        B::free(p.pkt);
      });
  }

 private:
  NFPARK_COLD Handle split_untaggable(Handle pkt) {
    ++ctr_.not_split_untaggable;
    return pkt;
  }
  NFPARK_COLD void evict(Handle parked) {
    ++ctr_.evictions;
    B::free(parked);
  }
  // A taggable packet that goes whole (counted in `why`): tag "not parked" after its headers.
  NFPARK_COLD Handle send_whole(Handle pkt, const PacketLayout& L, uint8_t slice, uint64_t& why) {
    const uint32_t hdr = L.payload_off;
    ++why;
    ParkTag tag;
    tag.slice = slice;
    tag.orig_len = uint16_t(std::min<uint32_t>(B::pkt_len(pkt), kMaxTaggedFrame));
    uint8_t* gap = B::open_gap(pkt, hdr, codec_.size());
    if (!gap) return drop(pkt, ctr_.no_headroom);
    codec_.encode(tag, gap);
    carry_layout<B>(pkt, L);  // a tag after the headers changes no offset
    return pkt;
  }

  // merge() for everything the fast path does not take: parse, find and check the tag.
  NFPARK_COLD Handle merge_slow(Handle pkt, uint8_t slice) {
    uint8_t* d = B::data(pkt);
    const uint32_t head = B::head_len(pkt);
    PacketLayout L;
    parse_handle<B>(pkt, L);
    if (!taggable(L)) {
      ++ctr_.untagged_returned;
      return pkt;
    }
    const uint32_t at = L.payload_off;
    const uint32_t avail = head > at ? head - at : 0;
    ParkTag tag;
    if (codec_.decode(d + at, avail, tag, slice) != TagError::kNone) return drop(pkt, ctr_.bad_tag);
    if (cfg_.format == TagFormat::kNfpark && tag.slice != slice) return drop(pkt, ctr_.wrong_slice);
    if (!tag.parked) {
      if (tag.drop) return drop(pkt, ctr_.explicit_drops_whole);
      B::close_gap(pkt, at, codec_.size());
      ++ctr_.returned_unsplit;
      return pkt;
    }
    SlotTable<Parked>& table = tables_[slice];
    Parked* p = table.find(tag.index, tag.generation);
    if (!p) return drop(pkt, ctr_.premature_evictions);
    return merge_parked(pkt, table, *p, tag, at);
  }

  // A header packet with a valid tag for the payload `p` parked in `table`; its headers are
  // pkt[0, at).
  // The slot `p` of `table` stays occupied until its payload leaves (or is dropped) here.
  NFPARK_HOT_INLINE Handle merge_parked(Handle pkt, SlotTable<Parked>& table, Parked& p,
                                        const ParkTag& tag, uint32_t at) {
    if (tag.drop) [[unlikely]]
      return explicit_drop(pkt, table, p.pkt, tag.index);
    const Rejoin r = B::rejoin(p.pkt, p.hdr_len, p.lent, pkt, at);
    if (r == Rejoin::kOk) [[likely]] {
      table.release(tag.index);
      ++ctr_.merges;
      return p.pkt;
    }
    if (r == Rejoin::kLent)  // a duplicate while the header packet it copies is still out:
      return drop(pkt, ctr_.duplicate_headers);  // the payload waits for that one
    table.release(tag.index);
    return drop(p.pkt, ctr_.no_headroom);
  }
  NFPARK_COLD Handle explicit_drop(Handle pkt, SlotTable<Parked>& table, Handle parked,
                                   uint32_t index) {
    table.release(index);
    B::free(parked);
    return drop(pkt, ctr_.explicit_drops);
  }

  NFPARK_COLD Handle drop(Handle pkt, uint64_t& counter) {
    ++counter;
    B::free(pkt);
    return B::null();
  }

  ParkConfig cfg_;
  TagCodec codec_;
  std::vector<SlotTable<Parked>> tables_;  // one per slice
  ParkCounters ctr_;
};

}  // namespace nfpark::park
