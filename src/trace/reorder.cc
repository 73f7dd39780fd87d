#include "trace/reorder.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "core/flow_key.h"
#include "core/packet_builder.h"
#include "core/parse.h"
#include "trace/flat_index.h"
#include "trace/pcap_reader.h"

namespace nfpark::trace {

ReorderStats compute_reorder(const std::vector<uint64_t>& sent, const std::vector<uint64_t>& recv) {
  constexpr uint32_t kNone = UINT32_MAX;
  ReorderStats r;
  r.sent = sent.size();
  r.received = recv.size();
  FlatIndex<uint64_t> index(sent.size());
  std::vector<uint32_t> next_same(sent.size(), kNone), head, tail;
  for (uint32_t i = 0; i < sent.size(); ++i) {
    bool inserted;
    uint32_t d = index.find_or_insert(sent[i], mix64(sent[i]), inserted);
    if (inserted) {
      head.push_back(i);
      tail.push_back(i);
    } else {
      next_same[tail[d]] = i;
      tail[d] = i;
    }
  }
  std::vector<uint32_t>& cursor = head;  // next unmatched send position per distinct key
  std::vector<uint32_t> arrivals;        // send positions, in arrival order
  arrivals.reserve(recv.size());
  for (uint64_t k : recv) {
    int64_t d = index.find(k, mix64(k));
    if (d < 0) {
      ++r.unmatched;
    } else if (cursor[d] == kNone) {
      ++r.duplicated;
    } else {
      arrivals.push_back(cursor[d]);
      cursor[d] = next_same[cursor[d]];
    }
  }
  r.matched = arrivals.size();
  r.lost = r.sent - r.matched;
  std::vector<uint32_t> prefix_max(arrivals.size());
  uint64_t extent_sum = 0;
  int64_t max_s = -1;
  for (size_t i = 0; i < arrivals.size(); ++i) {
    const uint32_t s = arrivals[i];
    if (int64_t(s) < max_s) {  // s < NextExp - 1 + 1; s == max_s is impossible (matched once)
      ++r.reordered;
      size_t j = size_t(std::upper_bound(prefix_max.begin(), prefix_max.begin() + i, s) -
                        prefix_max.begin());
      uint64_t e = i - j;
      extent_sum += e;
      r.extent_max = std::max(r.extent_max, e);
    } else {
      max_s = s;
    }
    prefix_max[i] = uint32_t(max_s);
  }
  r.out_of_order_pct = r.matched ? 100.0 * double(r.reordered) / double(r.matched) : 0;
  r.extent_mean = r.reordered ? double(extent_sum) / double(r.reordered) : 0;
  return r;
}

bool read_match_keys(const std::string& path, MatchKeys& out, std::string* error) {
  TraceReader rd;
  if (!rd.open(path)) {
    if (error) *error = rd.error();
    return false;
  }
  out = MatchKeys{};
  PacketRecord rec;
  ReadStatus st;
  while ((st = rd.next(rec)) == ReadStatus::kPacket) {
    PacketLayout L = parse_packet(rec.data, rec.len);
    std::optional<uint64_t> id;
    if (L.ok() && L.l4_off) id = read_packet_id(rec.data + L.payload_off, L.captured_payload());
    out.missing_ids += !id;
    out.ids.push_back(id.value_or(0));
    out.hashes.push_back(hash_bytes(rec.data, rec.len, rec.wire_len));
    FlowKey k;
    out.flows.push_back(extract_flow_key(rec.data, L, k) ? k.hash() | 1 : 0);
  }
  if (st == ReadStatus::kError) {
    if (error) *error = rd.error();
    return false;
  }
  return true;
}

bool reorder_files(const std::string& sent, const std::string& received, ReorderStats& out,
                   std::string* error) {
  MatchKeys a, b;
  if (!read_match_keys(sent, a, error) || !read_match_keys(received, b, error)) return false;
  const bool by_id = a.missing_ids == 0 && b.missing_ids == 0;
  out = by_id ? compute_reorder(a.ids, b.ids) : compute_reorder(a.hashes, b.hashes);
  out.by_id = by_id;
  compute_flow_reorder(by_id ? a.ids : a.hashes, a.flows, by_id ? b.ids : b.hashes, out);
  return true;
}

void compute_flow_reorder(const std::vector<uint64_t>& sent_keys,
                          const std::vector<uint64_t>& sent_flows,
                          const std::vector<uint64_t>& received_keys, ReorderStats& out) {
  // Split both sequences by the sent packet's flow (a received key's flow is that of the sent
  // packets with the same key), then apply RFC 4737 within each flow and add up.
  FlatIndex<uint64_t> keys(sent_keys.size()), flows(1024);
  std::vector<uint32_t> key_group;  // per distinct key: its flow's group
  std::vector<std::vector<uint64_t>> fs, fr;
  bool inserted = false;
  for (size_t i = 0; i < sent_keys.size(); ++i) {
    const uint32_t g = flows.find_or_insert(sent_flows[i], mix64(sent_flows[i]), inserted);
    if (inserted) {
      fs.emplace_back();
      fr.emplace_back();
    }
    fs[g].push_back(sent_keys[i]);
    keys.find_or_insert(sent_keys[i], mix64(sent_keys[i]), inserted);
    if (inserted) key_group.push_back(g);
  }
  for (uint64_t k : received_keys) {
    const int64_t d = keys.find(k, mix64(k));
    if (d >= 0) fr[key_group[size_t(d)]].push_back(k);
  }
  uint64_t matched = 0;
  double extent_sum = 0;
  out.flows = fs.size();
  for (size_t g = 0; g < fs.size(); ++g) {
    ReorderStats r = compute_reorder(fs[g], fr[g]);
    matched += r.matched;
    out.flow_reordered += r.reordered;
    out.flow_extent_max = std::max(out.flow_extent_max, r.extent_max);
    extent_sum += r.extent_mean * double(r.reordered);
  }
  out.flow_out_of_order_pct = matched ? 100.0 * double(out.flow_reordered) / double(matched) : 0;
  out.flow_extent_mean = out.flow_reordered ? extent_sum / double(out.flow_reordered) : 0;
}

std::string ReorderStats::to_json() const {
  char b[1024];
  std::snprintf(b, sizeof b,
                "{\n  \"match\": \"%s\",\n  \"sent\": %" PRIu64 ",\n  \"received\": %" PRIu64
                ",\n  \"matched\": %" PRIu64 ",\n  \"lost\": %" PRIu64
                ",\n  \"duplicated\": %" PRIu64 ",\n  \"unmatched\": %" PRIu64
                ",\n  \"reordered\": %" PRIu64
                ",\n  \"out_of_order_pct\": %.4f,\n  \"reordering_extent_max\": %" PRIu64
                ",\n  \"reordering_extent_mean\": %.4f,\n  \"flows\": %" PRIu64
                ",\n  \"flow_reordered\": %" PRIu64
                ",\n  \"flow_out_of_order_pct\": %.4f"
                ",\n  \"flow_reordering_extent_max\": %" PRIu64
                ",\n  \"flow_reordering_extent_mean\": %.4f\n}\n",
                by_id ? "packet_id" : "frame_hash", sent, received, matched, lost, duplicated,
                unmatched, reordered, out_of_order_pct, extent_max, extent_mean, flows,
                flow_reordered, flow_out_of_order_pct, flow_extent_max, flow_extent_mean);
  return b;
}

std::string ReorderStats::to_text() const {
  char b[640];
  std::snprintf(b, sizeof b,
                "matched by     %s\nsent           %" PRIu64 "\nreceived       %" PRIu64
                "\nmatched        %" PRIu64 "\nlost           %" PRIu64 "\nduplicated     %" PRIu64
                "\nunmatched      %" PRIu64
                " (received, never sent)\nout of order   %.3f%% (%" PRIu64
                " packets, RFC 4737)\nextent         max %" PRIu64 ", mean %.2f packets\n",
                by_id ? "packet id (generator payload)"
                      : "hash of the frame bytes (not every packet carries a generator id)",
                sent, received, matched, lost, duplicated, unmatched, out_of_order_pct, reordered,
                extent_max, extent_mean);
  char f[320];
  std::snprintf(f, sizeof f,
                "within flows   %.3f%% out of order (%" PRIu64 " packets in %" PRIu64
                " flows), extent max %" PRIu64 ", mean %.2f\n",
                flow_out_of_order_pct, flow_reordered, flows, flow_extent_max, flow_extent_mean);
  return std::string(b) + f;
}

}  // namespace nfpark::trace
