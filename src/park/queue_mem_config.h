// QueueMemConfig and QueueMemCounters: the settings and the counters of the QUEUE-MEM mode
// (queue_mem.h). The mechanism's defaults follow the public P4 code (Queue-Mem/queue-mem-p4,
// setup.py and defines.p4); the store's size and the two timers are nfpark's (a software switch
// must hold what can be in flight); docs/queuemem.md gives each value's source.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "core/counters.h"
#include "core/time.h"
#include "park/no_split.h"

namespace nfpark::park {

struct QueueMemConfig {
  uint8_t ports = 1;       // output ports, each with its own set of payload queues
  uint16_t queues = 1600;  // payload queues per port, shared by its slices (P4: 31 hardware
                           // queues; 1600 x 20 = 32000 payloads: more than the NF side can
                           // hold in flight, 2 x 4096 ring slots + Reframer's 16384)
  uint16_t slices = 6;     // ordering domains per port: a flow's batches leave in creation
                           // order within its slice (P4 setup.py: 6 slices of 5-6 queues)
  uint16_t batch = 20;     // payloads per batch (setup.py default 120; experiments 20; App. D 5)
  uint32_t header_array = 94000;  // header-array entries, all ports (HEADER_REGISTER_SIZE); a
                                  // payload waiting holds one, so it also bounds the store
  uint32_t min_payload = 64;      // bytes of L4 payload needed to split (P4: -DSPLIT=64)
  // A batch missing a header is recovered (its payloads without a header dropped) once its last
  // header has been out this long AND a header sent after it has come back: an NF that is only
  // slow (FIFO) never triggers it. Must exceed the longest time the NF side lets later headers
  // overtake one (Reframer's T_buff, in the clock the engine passes).
  Nanos lost_after = 50 * kMilli;
  // A batch that is not full is closed this long after it opened, so its payloads leave once its
  // headers are back (the P4 code waits for later traffic to fill it). 0: never by time.
  Nanos seal_after = 200 * kMicro;
  std::optional<std::array<uint8_t, 16>> key;  // SipHash key for keyed tags (else CRC-32C)
  NoSplitFilter no_split;  // traffic sent whole (P4: dst_ip_blacklist, l4_blacklist)
  // Ports are NF servers (a switch with several NF ports): a packet comes back on the NF link
  // of the port its tag names, or it is dropped (wrong_port).
  bool port_per_server = false;

  // Empty when the config is usable, else what is wrong and how to fix it.
  std::string validate() const;
  // Most packets that can wait at once: every queue of every port holding a full batch, and
  // each holding a header-array entry.
  uint64_t max_held() const {
    const uint64_t q = uint64_t(ports) * queues * batch;
    return q < header_array ? q : header_array;
  }
};

// Packet outcomes (each packet split() takes ends in exactly one of them, or is still held) and
// header events (what happened to header packets; their payload's outcome is counted apart).
struct QueueMemCounters {
  // split side
  uint64_t rx = 0;                    // packets split() took
  uint64_t splits = 0;                // payload queued, header sent to the NF
  uint64_t joined_whole = 0;          // sent whole but queued behind its flow's waiting payloads
  uint64_t not_split_small = 0;       // L4 payload below min_payload: sent whole
  uint64_t not_split_filtered = 0;    // matched the no_split filter: sent whole
  uint64_t not_split_untaggable = 0;  // not IPv4/IPv6 TCP/UDP unfragmented: sent as is
  uint64_t not_split_no_queue = 0;    // output port outside config.ports: sent whole
  uint64_t not_split_no_buffer = 0;   // no buffer for the header packet: sent whole
  uint64_t not_split_store_full = 0;  // no queue or header-array entry free: sent whole
  uint64_t not_split_large = 0;       // frame above kMaxTaggedFrame (tag's 16-bit length): whole
  uint64_t refused = 0;  // split() declined a packet for now (back-pressure; offered again)
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
  uint64_t headers_returned = 0;   // valid headers (or queued whole packets) stored at their idx
  uint64_t bad_tag = 0;            // tag missing, cut short or failing its check: dropped
  uint64_t stale_headers = 0;      // valid tag but idx holds another id (late, replayed)
  uint64_t duplicate_headers = 0;  // a second header for an idx already returned
  uint64_t wrong_port = 0;  // came back on another NF server's link than its tag names: dropped
  uint64_t whole_lost = 0;  // a queued whole packet never came back (lost where it was dropped)
  // batches
  uint64_t batches_complete = 0;  // released because every header was back
  uint64_t batches_sealed = 0;    // closed before full (seal_after, back-pressure)
  uint64_t batches_waited = 0;    // complete while an older batch of the slice still waited
  uint64_t recoveries = 0;        // released with a header missing (lost_after or NF idle)
  uint64_t recoveries_idle = 0;   // of which: the engine said the NF side holds nothing
  uint64_t recoveries_down = 0;   // of which: their NF server went down (release_port)
  uint64_t batches_drained = 0;   // released by drain() at the end of the run
  // buffer occupancy (packets waiting: payloads, and queued whole packets back from the NF)
  uint64_t held_pkts = 0, held_bytes = 0, peak_pkts = 0, peak_bytes = 0;

  uint64_t sent_whole() const {
    return not_split_small + not_split_filtered + not_split_untaggable + not_split_no_queue +
           not_split_no_buffer + not_split_store_full + not_split_large;
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
    return drop_id_mismatch + drop_no_headroom + bad_tag + stale_headers + duplicate_headers +
           wrong_port;
  }
  // NF drops that came back as notices and found what they named (see ParkCounters).
  uint64_t nf_drops_returned() const { return drop_explicit + drop_explicit_whole; }
  void drop_reasons(const CounterSink& s) const {
    s("id_mismatch", drop_id_mismatch);
    s("no_headroom", drop_no_headroom);
    s("bad_tag", bad_tag);
    s("stale_header", stale_headers);
    s("duplicate_header", duplicate_headers);
    s("wrong_port", wrong_port);
  }
  void report(const CounterSink& s) const;
};

}  // namespace nfpark::park
