// Reordering, loss and duplication between a sent and a received packet sequence (RFC 4737).
//
// Packets are matched by a 64-bit key: the generator's packet id (core/packet_builder.h) when
// every packet of both traces carries one, else a hash of the whole captured frame (so matching
// then assumes nothing rewrote the bytes; the result says which was used).
//
// Theory of operation. Each received packet is mapped to the send position s of the first
// not-yet-matched sent packet with its key; a key received more often than sent is a duplicate,
// a key never sent is `unmatched`. Over the matched arrivals (in arrival order) RFC 4737 §3.3
// applies: a packet is reordered when s < NextExp, NextExp being 1 + the largest s seen so
// far. Its reordering extent (§4.2) is i - j, where i is its arrival position and j the
// earliest arrival position holding a larger s (found by binary search on the prefix maxima).
// Cost: O(n log n), flat arrays and one open-addressing table; no per-packet allocation.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace nfpark::trace {

struct ReorderStats {
  uint64_t sent = 0, received = 0, matched = 0, lost = 0, duplicated = 0, unmatched = 0;
  uint64_t reordered = 0;
  double out_of_order_pct = 0;  // 100 * reordered / matched
  uint64_t extent_max = 0;
  double extent_mean = 0;  // over reordered packets
  bool by_id = true;       // false: matched by frame hash
  // The same metrics within each flow (flows taken from the sent trace, so NAT rewrites do not
  // matter): what the papers report, since only reordering within a flow harms TCP.
  uint64_t flows = 0, flow_reordered = 0, flow_extent_max = 0;
  double flow_out_of_order_pct = 0, flow_extent_mean = 0;

  std::string to_json() const;
  std::string to_text() const;
};

ReorderStats compute_reorder(const std::vector<uint64_t>& sent_keys,
                             const std::vector<uint64_t>& received_keys);

// Match keys of every packet of a file: ids (with `missing_ids` = packets without one) and
// frame hashes. False with `*error` set on failure.
struct MatchKeys {
  std::vector<uint64_t> ids, hashes;
  std::vector<uint64_t> flows;  // flow hash of each packet (0: no flow key)
  uint64_t missing_ids = 0;
};

// Per-flow reordering: each received packet belongs to the flow of the sent packet it matches.
// Fills the flow_* fields of `out`.
void compute_flow_reorder(const std::vector<uint64_t>& sent_keys,
                          const std::vector<uint64_t>& sent_flows,
                          const std::vector<uint64_t>& received_keys, ReorderStats& out);
bool read_match_keys(const std::string& path, MatchKeys& out, std::string* error);

// Reads both files and compares them. False with `*error` set on failure.
bool reorder_files(const std::string& sent, const std::string& received, ReorderStats& out,
                   std::string* error);

}  // namespace nfpark::trace
