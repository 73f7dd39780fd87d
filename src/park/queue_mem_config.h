// QueueMemConfig and QueueMemCounters: the settings and the counters of the QUEUE-MEM mode
// (queue_mem.h). Defaults follow the public P4 code (Queue-Mem/queue-mem-p4, setup.py and
// defines.p4); see docs/queuemem.md for each value's source.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "core/counters.h"
#include "park/no_split.h"

namespace nfpark::park {

struct QueueMemConfig {
  uint8_t ports = 1;     // output ports, each with its own set of payload queues
  uint16_t queues = 31;  // payload queues per port (P4: 32 queues, #31 carries headers)
  uint16_t slices = 6;   // queue slices per port (P4 setup.py: 5 queues a slice over 31
                         // queues = 6 slices, the last one takes the remainder: 5x5 + 6)
  uint16_t batch = 20;   // payloads per batch (setup.py default 120; experiments 20; App. D 5)
  uint32_t header_array =
      94000;                  // header-array entries, shared by all ports (HEADER_REGISTER_SIZE)
  uint32_t min_payload = 64;  // bytes of L4 payload needed to split (P4: -DSPLIT=64)
  std::optional<std::array<uint8_t, 16>> key;  // SipHash key for keyed tags (else CRC-32C)
  NoSplitFilter no_split;  // traffic sent whole (P4: dst_ip_blacklist, l4_blacklist)

  // Empty when the config is usable, else what is wrong and how to fix it.
  std::string validate() const;
  // Most payloads that can wait at once (every queue of every port holding a full batch).
  uint64_t max_held() const { return uint64_t(ports) * queues * batch; }
};

// Packet outcomes (each packet into split() ends in exactly one of them, or is still held) and
// header events (what happened to header packets; their payload's outcome is counted apart).
struct QueueMemCounters {
  // split side
  uint64_t rx = 0;                    // packets into split()
  uint64_t splits = 0;                // payload queued, header sent to the NF
  uint64_t not_split_small = 0;       // L4 payload below min_payload: sent whole
  uint64_t not_split_filtered = 0;    // matched the no_split filter: sent whole
  uint64_t not_split_untaggable = 0;  // not IPv4/IPv6 TCP/UDP unfragmented: sent as is
  uint64_t not_split_no_queue = 0;    // output port outside config.ports: sent whole
  uint64_t not_split_no_buffer = 0;   // no buffer for the header packet: sent whole
  uint64_t not_split_large = 0;       // frame above kMaxTaggedFrame (tag's 16-bit length): whole
  uint64_t recoveries = 0;            // a batch head found its queue still PAUSED (§3.3)
  uint64_t slot_reuses = 0;           // header-array slot reassigned while still in use
  // merge side: packet outcomes
  uint64_t released = 0;             // payloads rebuilt with their header and sent out
  uint64_t returned_whole = 0;       // whole packets back from the NF (tag removed), sent out
  uint64_t untagged_returned = 0;    // untaggable packets back from the NF, sent out
  uint64_t drop_id_mismatch = 0;     // payload's id != id stored at its idx: dropped (§3.3)
  uint64_t drop_header_lost = 0;     // header never came back before a recovery: dropped
  uint64_t drop_explicit = 0;        // NF flagged the header "drop": payload dropped
  uint64_t drop_explicit_whole = 0;  // NF flagged a whole packet "drop": dropped
  uint64_t drop_no_headroom = 0;     // could not insert a tag or rewrite headers: dropped
  uint64_t stranded_at_exit = 0;     // drain(): payload whose header never came back: freed
  // merge side: header events
  uint64_t headers_returned = 0;   // valid headers stored at their idx
  uint64_t bad_tag = 0;            // tag missing, cut short or failing its check: dropped
  uint64_t stale_headers = 0;      // valid tag but idx holds another id (late, replayed)
  uint64_t duplicate_headers = 0;  // a second header for an idx already returned
  // batches
  uint64_t batches_complete = 0;   // released because all `batch` headers were back
  uint64_t batches_recovered = 0;  // released by a recovery (a header was lost)
  uint64_t batches_drained = 0;    // released by drain() at the end of the run
  // buffer occupancy (payloads waiting in queues)
  uint64_t held_pkts = 0, held_bytes = 0, peak_pkts = 0, peak_bytes = 0;

  uint64_t sent_whole() const {
    return not_split_small + not_split_filtered + not_split_untaggable + not_split_no_queue +
           not_split_no_buffer + not_split_large;
  }
  // Packets dropped by the switch (each counted once).
  uint64_t drops() const {
    return drop_id_mismatch + drop_header_lost + drop_explicit + drop_explicit_whole +
           drop_no_headroom + stranded_at_exit;
  }
  uint64_t out() const { return released + returned_whole + untagged_returned; }
  // Packets whose fate the switch is the first to decide (for in = out + Σ drops across the
  // whole system). A payload dropped because its header was lost (header_lost, stranded) or
  // dropped by the NF (explicit) was counted where that happened, so it is not counted here.
  uint64_t packet_drops() const {
    return drop_id_mismatch + drop_no_headroom + bad_tag + stale_headers + duplicate_headers;
  }
  void drop_reasons(const CounterSink& s) const {
    s("id_mismatch", drop_id_mismatch);
    s("no_headroom", drop_no_headroom);
    s("bad_tag", bad_tag);
    s("stale_header", stale_headers);
    s("duplicate_header", duplicate_headers);
  }
  void report(const CounterSink& s) const;
};

}  // namespace nfpark::park
