// Counters of the parking switch. The first eight are PayloadPark's (§5); the rest name every
// other way a packet can leave the normal path, so that in = out + Σ drops can be checked.
#pragma once
#include <cstdint>

#include "core/counters.h"

namespace nfpark::park {

struct ParkCounters {
  // PayloadPark's eight
  uint64_t splits = 0;               // payloads parked
  uint64_t merges = 0;               // payloads merged back
  uint64_t explicit_drops = 0;       // NF said "dropped": slot freed, header discarded
  uint64_t evictions = 0;            // parked payloads evicted by EXP reaching 0
  uint64_t premature_evictions = 0;  // header came back after its payload was evicted: dropped
  uint64_t returned_unsplit = 0;     // ENB=0 packets back from the NF (tag stripped, forwarded)
  uint64_t not_split_small = 0;      // payload below min_payload
  uint64_t not_split_busy = 0;       // probed slot occupied: sent whole (store full ⇒ whole)
  // nfpark's own
  uint64_t not_split_filtered = 0;    // matched the no_split filter
  uint64_t not_split_untaggable = 0;  // not IPv4/IPv6 TCP/UDP first fragment: sent untagged
  uint64_t not_split_no_buffer = 0;   // no buffer for the header packet: sent whole
  uint64_t not_split_large = 0;       // frame above kMaxTaggedFrame (tag's 16-bit length): whole
  uint64_t bad_tag = 0;               // tag missing, cut short, failed its check: dropped
  uint64_t wrong_slice = 0;           // tag names another NF server's slice: dropped
  uint64_t duplicate_headers = 0;     // valid tag, but its payload is lent to another header
                                      // packet still in flight (an NF duplicated it): dropped
  uint64_t untagged_returned = 0;     // untaggable packet back from the NF: forwarded
  uint64_t explicit_drops_whole = 0;  // NF dropped a packet that went whole (tag ENB=0)
  uint64_t no_headroom = 0;           // could not insert a tag or rewrite headers: dropped
  uint64_t stranded_at_exit = 0;      // payloads still parked at shutdown (headers never came back)
  uint64_t reclaimed = 0;  // payloads freed when their NF server went down (reclaim()); their
                           // headers are counted where they were lost (the NF link)

  // Packets the switch dropped (split or merge side), each counted once.
  uint64_t drops() const {
    return explicit_drops + premature_evictions + bad_tag + wrong_slice + duplicate_headers +
           explicit_drops_whole + no_headroom;
  }
  // Packets whose fate the switch decides and counts first (for in = out + Σ drops across the
  // whole system): explicit drops are the NF's own drops, counted where the NF dropped them.
  uint64_t packet_drops() const {
    return premature_evictions + bad_tag + wrong_slice + duplicate_headers + no_headroom;
  }
  // NF drops that came back as drop notices and found the payload they named: counted as the
  // NF's drops (the NF counts only the drops it frees itself). A notice that finds nothing —
  // late (evicted), duplicated, corrupted — is counted above under its reason instead, so each
  // packet is counted once whatever happens on the way back (fuzz finding drop_notice_twice).
  uint64_t nf_drops_returned() const { return explicit_drops + explicit_drops_whole; }
  // The same, by reason.
  void drop_reasons(const CounterSink& s) const {
    s("premature_eviction", premature_evictions);
    s("bad_tag", bad_tag);
    s("wrong_slice", wrong_slice);
    s("duplicate_header", duplicate_headers);
    s("no_headroom", no_headroom);
  }
  void report(const CounterSink& s) const;
};

}  // namespace nfpark::park
