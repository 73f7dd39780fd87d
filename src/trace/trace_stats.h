// Trace analysis: volume, mix and locality of a packet sequence, computed in one pass.
//
// Definitions (docs/traces.md has the long form; locality follows Reframer, seed003 §7.2):
//   flow        5-tuple (core/flow_key.h, direction-sensitive) of a packet that parses; packets
//               that do not parse (non-IP, truncated, malformed) count in `unparsed` and, for
//               SLF only, as one pseudo-flow.
//   slf         packets / number of maximal runs of consecutive same-flow packets.
//   spatial     for consecutive packets k, k+1 of the same flow: index(k+1) - index(k) (1 =
//               back-to-back). Single-packet flows contribute nothing.
//   temporal    for the same pairs: ts(k+1) - ts(k), in ns.
//   size        the wire length (original frame length, no FCS); `bytes` sums it.
// Percentiles are nearest-rank. Cost: ~100 ns/packet; memory O(packets) for the distances.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/flow_key.h"
#include "core/time.h"
#include "trace/flat_index.h"

namespace nfpark::trace {

struct DistSummary {
  uint64_t count = 0;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
  double share_gt1 = 0;  // fraction of samples > 1 (meaningful for spatial distance)
};

// Size histogram bins, by wire length: <=64, 65-127, 128-255, 256-511, 512-1023, 1024-1518, >1518.
constexpr size_t kSizeBins = 7;
extern const std::array<const char*, kSizeBins> kSizeBinNames;
size_t size_bin(uint32_t wire_len);

struct TraceStats {
  uint64_t packets = 0, bytes = 0, captured_bytes = 0, flows = 0;
  uint64_t ipv4 = 0, ipv6 = 0, tcp = 0, udp = 0, icmp = 0, unparsed = 0, with_id = 0;
  uint64_t runs = 0, max_flow_packets = 0;
  double mean_size = 0, slf = 0, mean_flow_packets = 0;
  Nanos first_ts = 0, last_ts = 0;
  std::array<uint64_t, kSizeBins> size_hist{};
  DistSummary spatial, temporal;  // temporal in ns

  std::string to_json() const;
  std::string to_text() const;
};

class StatsBuilder {
 public:
  explicit StatsBuilder(size_t expected_packets = 1 << 16);
  void add(Nanos ts, const uint8_t* data, uint32_t len, uint32_t wire_len);
  TraceStats finish();

 private:
  TraceStats s_;
  FlatIndex<FlowKey> index_;
  std::vector<uint64_t> last_idx_;
  std::vector<Nanos> last_ts_;
  std::vector<uint32_t> count_;
  std::vector<uint32_t> spatial_;
  std::vector<int64_t> temporal_;
  int64_t prev_flow_ = -2;  // -1 = the unparsed pseudo-flow
};

// Analyses a pcap/pcapng file. False with `*error` set on failure.
bool stats_file(const std::string& path, TraceStats& out, std::string* error);

// Summary of a sample (reorders `v`).
template <class T>
DistSummary summarize(std::vector<T>& v);

}  // namespace nfpark::trace
