// Counters of the NFSlicer shim (slicer.h). Every packet into split() ends in to_host or in a
// split_drops() counter; every packet into merge() ends in to_wire or in a merge_drops() counter;
// every sliced payload ends spliced, expired, dropped at splice (merge_no_headroom) or stranded.
#pragma once
#include <cstdint>

#include "core/counters.h"

namespace nfpark::park {

struct SlicerCounters {
  // Slice (wire -> host)
  uint64_t rx = 0;                   // packets into split()
  uint64_t sliced = 0;               // payload kept in a ring entry, header packet + token sent
  uint64_t unsliced_small = 0;       // frame <= THR, or nothing after the headers worth a token
  uint64_t unsliced_ineligible = 0;  // IP but not TCP/UDP, or a fragment: sent whole
  uint64_t unsliced_unparsed = 0;    // not IP, truncated or malformed headers: sent as is
  uint64_t unsliced_busy = 0;        // entry at the index still live (its TTL was decremented)
  uint64_t unsliced_no_buffer = 0;   // no buffer for the header packet: sent whole
  uint64_t unsliced_bad_core = 0;    // core id >= configured cores: sent whole (engine bug)
  uint64_t unsliced_large = 0;       // unsliced tail above 65535 B (16-bit entry field): whole
  uint64_t escaped = 0;              // whole TCP/UDP packet that could pass for a sliced one
                                     // (shorter than its IP length, payload starting with the
                                     // escape token) or with DSCP 63: escape token added
  uint64_t expired = 0;              // entries discarded when their TTL reached 0 (paper §III-D)
  uint64_t split_no_headroom = 0;    // no headroom to insert the escape token: dropped
  // Splice (host -> wire)
  uint64_t returned = 0;           // packets into merge()
  uint64_t spliced = 0;            // payload re-attached, DSCP restored
  uint64_t passed = 0;             // no token (carries_token false): forwarded unchanged
  uint64_t unescaped = 0;          // escape token stripped, forwarded
  uint64_t drop_bad_token = 0;     // token naming no configured core (forged or corrupted)
  uint64_t drop_expired = 0;       // entry empty: expired by TTL, already spliced, or forged
  uint64_t drop_generation = 0;    // entry live with another generation: reused or forged
  uint64_t drop_bad_length = 0;    // header packet shorter than header + token + unsliced tail
  uint64_t drop_duplicate = 0;     // valid token, payload lent to another header packet in flight
  uint64_t merge_no_headroom = 0;  // could not write the new headers onto the payload: dropped
  uint64_t stranded_at_exit = 0;   // payloads still in the rings at drain()

  uint64_t split_drops() const { return split_no_headroom; }
  uint64_t merge_drops() const {
    return drop_bad_token + drop_expired + drop_generation + drop_bad_length + drop_duplicate +
           merge_no_headroom;
  }
  // Packets the shim dropped (each once), for in = out + Σ drops across the whole system.
  uint64_t packet_drops() const { return split_drops() + merge_drops(); }
  // Payloads waiting in the rings now.
  uint64_t held() const { return sliced - spliced - expired - stranded_at_exit; }
  void drop_reasons(const CounterSink& s) const {
    s("no_headroom", split_no_headroom + merge_no_headroom);
    s("bad_token", drop_bad_token + drop_bad_length);
    s("expired", drop_expired);
    s("generation_mismatch", drop_generation);
    s("duplicate_header", drop_duplicate);
  }
  void report(const CounterSink& s) const;
};

}  // namespace nfpark::park
