#include "run/settings.h"

#include <algorithm>

namespace nfpark::run {

std::optional<Mode> parse_mode(std::string_view s) {
  if (s == "baseline" || s == "host") return Mode::kBaseline;
  if (s == "payloadpark") return Mode::kPayloadPark;
  if (s == "queuemem") return Mode::kQueueMem;
  if (s == "nfslicer") return Mode::kNfSlicer;
  if (s == "nicmem") return Mode::kNicmem;
  if (s == "split") return Mode::kSplit;
  return std::nullopt;
}

std::optional<Role> parse_role(std::string_view s) {
  if (s == "all") return Role::kAll;
  if (s == "switch") return Role::kSwitch;
  if (s == "nf") return Role::kNf;
  return std::nullopt;
}

std::optional<Placement> parse_placement(std::string_view s) {
  if (s == "in-chain") return Placement::kInChain;
  if (s == "box") return Placement::kBox;
  return std::nullopt;
}

std::string_view to_string(Mode m) {
  switch (m) {
    case Mode::kBaseline:
      return "baseline";
    case Mode::kPayloadPark:
      return "payloadpark";
    case Mode::kQueueMem:
      return "queuemem";
    case Mode::kNfSlicer:
      return "nfslicer";
    case Mode::kNicmem:
      return "nicmem";
    case Mode::kSplit:
      return "split";
  }
  return "?";
}

std::vector<std::string> nf_ports(const RunConfig& c) {
  std::vector<std::string> v;
  size_t from = 0;
  for (;;) {
    const size_t plus = c.nf_port.find('+', from);
    v.push_back(c.nf_port.substr(from, plus == std::string::npos ? plus : plus - from));
    if (plus == std::string::npos) return v;
    from = plus + 1;
  }
}

bool parse_tag_key(const std::string& hex, std::array<uint8_t, 16>& key) {
  return park::parse_key_hex(hex, key);
}

namespace {

// The largest values this machine (24 GiB, shared) can hold, from the memory each costs
// (run/budget.h): a parked or sliced packet holds an mbuf of ~4.9 KB without hugepages.
constexpr double kMaxHeldPackets = 1 << 22;  // ~20 GB of mbufs
constexpr double kMaxU64 = 18446744073709551615.0;

using R = RunConfig;
using V = Value;

// clang-format off
const Setting kSettings[] = {
  // [run]
  {"run", "mode", "mode", Kind::kChoice, 0, 0, "", "baseline", "what the switch does with payloads (docs/run.md, Modes)",
   "baseline|host|payloadpark|queuemem|nfslicer|nicmem|split", true, "MODE",
   [](R& c, const V& v) { c.mode = *parse_mode(v.s); }},
  {"run", "chain", "chain", Kind::kText, 0, 0, "", "forward", "NF chain, e.g. nat,counter; parameters from [nf.NAME] (docs/nfs.md)",
   "", true, "NFS", [](R& c, const V& v) { c.chain = v.s; }},
  {"run", "in", "in", Kind::kText, 0, 0, "", "", "input pcap/pcapng, replayed through the switch (relative to the config file)",
   "", true, "FILE", [](R& c, const V& v) { c.in_path = v.s; }},
  {"run", "out", "out", Kind::kText, 0, 0, "", "", "output pcap; written to a temporary file beside it and renamed when the run ends",
   "", true, "FILE", [](R& c, const V& v) { c.out_path = v.s; }},
  {"run", "traffic", "traffic", Kind::kPorts, 0, 0, "", "", "live traffic on two DPDK ports instead of in/out: packets in on A leave on B and back",
   "", true, "A+B", [](R& c, const V& v) { c.traffic_ports = v.list; }},
  {"run", "role", "role", Kind::kChoice, 0, 0, "", "all", "all (switch + NF server here), switch or nf (separate processes)",
   "all|switch|nf", true, "R", [](R& c, const V& v) { c.role = *parse_role(v.s); }},
  {"run", "nf_port", "nf-port", Kind::kText, 0, 0, "", "", "role switch: port to the NF server, e.g. vdev:net_memif0,role=server,socket=/tmp/nf.sock",
   "", true, "SPEC", [](R& c, const V& v) { c.nf_port = v.s; }},
  {"run", "port", "port", Kind::kText, 0, 0, "", "", "role nf: port to the switch, e.g. vdev:net_memif0,role=client,socket=/tmp/nf.sock",
   "", true, "SPEC", [](R& c, const V& v) { c.port = v.s; }},
  {"run", "idle_exit_s", "idle-exit", Kind::kReal, 0, 86400, "s", "0", "live ports and role nf: end this long after traffic stopped (0: at the timeout or a signal)",
   "", true, "S", [](R& c, const V& v) { c.idle_exit_s = v.d; }},
  {"run", "timeout_s", "timeout", Kind::kReal, 0.001, 1e6, "s", "600", "end the run after this long (a replay still running then is cut short)",
   "", true, "S", [](R& c, const V& v) { c.timeout_s = v.d; }},
  {"run", "nf_lcore", "nf-lcore", Kind::kBool, 0, 0, "", "false", "run the NF server on a second lcore (else inline)",
   "", true, "", [](R& c, const V& v) { c.nf_lcore = v.b; }},
  {"run", "nf_ring", "nf-ring", Kind::kBool, 0, 0, "", "false", "one process, NF server inline: hand it bursts through an in-process ring pair instead of a direct call (docs/run.md, NF link)",
   "", true, "", [](R& c, const V& v) { c.nf_ring = v.b; }},
  {"run", "notify_drops", "no-drop-notify", Kind::kBool, 0, 0, "", "true", "NF drops come back as explicit-drop notifications (the flag: freed at the server)",
   "", false, "", [](R& c, const V& v) { c.notify_drops = v.b; }},
  {"run", "reframe_us", "reframe", Kind::kReal, 0, 1e6, "µs", "0", "Reframer in front of the chain with this T_buff (0: off)",
   "", true, "T_US", [](R& c, const V& v) { c.reframe_us = v.d; }},
  {"run", "pace", "pace", Kind::kBool, 0, 0, "", "false", "replay the input at its timestamps (a wire's pace) instead of at once",
   "", true, "", [](R& c, const V& v) { c.pace = v.b; }},
  {"run", "pad", "pad", Kind::kBool, 0, 0, "", "false", "rebuild truncated records (caplen < wire length) to their wire length with a zero filler (docs/traces.md)",
   "", true, "", [](R& c, const V& v) { c.pad = v.b; }},
  {"run", "progress", "no-progress", Kind::kBool, 0, 0, "", "true", "progress line on stderr for runs longer than 2 s (the flag: none)",
   "", false, "", [](R& c, const V& v) { c.progress = v.b; }},
  {"run", "quiet", "quiet", Kind::kBool, 0, 0, "", "false", "live runs and role nf: no rate summary on stderr every 2 s (counters stay readable by dpdk-telemetry.py: docs/testbed.md)",
   "", true, "", [](R& c, const V& v) { c.quiet = v.b; }},
  {"run", "pool_mbufs", "pool-mbufs", Kind::kInt, 0, kMaxHeldPackets, "mbufs", "0", "mbufs per mempool (0: derived from the mode's store and the rings)",
   "", true, "N", [](R& c, const V& v) { c.pool_mbufs = uint32_t(v.u); }},
  {"run", "mem_mb", "mem-mb", Kind::kInt, 0, 24576, "MiB", "0", "DPDK memory (0: derived from the pools)",
   "", true, "MB", [](R& c, const V& v) { c.mem_mb = uint32_t(v.u); }},
  // [nf_servers] (docs/run.md, Many NF servers)
  {"nf_servers", "count", "nf-servers", Kind::kInt, 1, park::ServerChoice::kMaxServers, "servers", "1", "NF servers behind the switch, each with its own NF port and memory slice (role switch: as many --nf-port specs, joined by +)",
   "", true, "M", [](R& c, const V& v) { c.nf_servers = uint32_t(v.u); }},
  {"nf_servers", "spread", "nf-spread", Kind::kChoice, 0, 0, "", "five_tuple", "how flows are spread over the NF servers: five_tuple, src_ip (a host's flows together) or symmetric (both directions of a connection together)",
   "five_tuple|src_ip|symmetric", true, "S", [](R& c, const V& v) { c.nf_spread = *park::parse_spread(v.s); }},
  {"nf_servers", "dead_after_ms", "nf-dead-after", Kind::kReal, 0, 3.6e6, "ms", "500", "role switch: an NF server that answers nothing for this long while it has packets is down: its slots are reclaimed, its flows go to the others until it answers again (0: never)",
   "", true, "MS", [](R& c, const V& v) { c.nf_dead_after_ms = v.d; }},
  // [park]
  {"run", "secret", "secret", Kind::kKey, 0, 0, "", "", "the run's 128-bit secret, keying every tag and token (default: from the OS; set it only for reproducible runs; docs/security.md)",
   "", true, "HEX", [](R& c, const V& v) {
     park::Key128 k{};
     parse_tag_key(v.s, k);
     c.secret = k;
   }},
  // [dp] (docs/run.md, Workers)
  {"dp", "workers", "workers", Kind::kInt, 1, 64, "lcores", "1", "lcores each role shards flows over, each with its own store share, NF chain and counters (docs/run.md, Workers)",
   "", true, "N", [](R& c, const V& v) { c.workers = uint32_t(v.u); }},
  // [park]
  {"park", "min_payload", "min-payload", Kind::kInt, 0, 9000, "bytes", "160", "PayloadPark: smallest L4 payload that is parked",
   "", true, "B", [](R& c, const V& v) { c.park.min_payload = uint32_t(v.u); }},
  {"park", "park_bytes", "park-bytes", Kind::kIntOrAll, 1, 9000, "bytes", "160", "PayloadPark: payload bytes parked per packet (352: with recirculation; all: the whole payload)",
   "", true, "N|all", [](R& c, const V& v) { c.park.park_bytes = uint32_t(v.u); }},
  {"park", "slots", "slots", Kind::kInt, 1, kMaxHeldPackets, "slots", "65536", "PayloadPark: parking slots per NF server (each may hold a packet)",
   "", true, "N", [](R& c, const V& v) { c.park.slots = uint32_t(v.u); }},
  {"park", "max_exp", "max-exp", Kind::kInt, 1, 255, "traversals", "1", "PayloadPark EXP: slot-table traversals a parked payload survives",
   "", true, "N", [](R& c, const V& v) { c.park.max_exp = uint8_t(v.u); }},
  {"park", "slices", "park-slices", Kind::kInt, 1, 255, "NF servers", "1", "PayloadPark: NF servers, each with its own slice of slots",
   "", true, "N", [](R& c, const V& v) { c.park.slices = uint8_t(v.u); }},
  {"park", "format", "tag-format", Kind::kChoice, 0, 0, "", "nfpark", "tag format: nfpark (24 B, checked) or payloadpark (7 B, byte-compatible)",
   "nfpark|payloadpark", true, "F", [](R& c, const V& v) { c.park.format = *park::parse_tag_format(v.s); }},
  {"park", "key", "tag-key", Kind::kKey, 0, 0, "", "", "128-bit tag MAC key (payloadpark, queuemem; refused elsewhere; default: from the run's secret)",
   "", true, "HEX", [](R& c, const V& v) {
     std::array<uint8_t, 16> k{};
     parse_tag_key(v.s, k);
     c.park.key = k;
   }},
  {"park.no_split", "dst_prefixes", "no-split-prefixes", Kind::kPrefixes, 0, 0, "", "", "traffic to these destinations is never split",
   "", true, "P,P", [](R& c, const V& v) {
     c.park.no_split.dst_prefixes.clear();
     for (const std::string& s : v.list) {
       park::Prefix p;
       std::string e;
       park::parse_prefix(s, p, e);
       c.park.no_split.dst_prefixes.push_back(p);
     }
   }},
  {"park.no_split", "dst_ports", "no-split-ports", Kind::kInts, 0, 65535, "", "", "traffic to these L4 ports is never split",
   "", true, "N,N", [](R& c, const V& v) { c.park.no_split.dst_ports.assign(v.ints.begin(), v.ints.end()); }},
  {"park.no_split", "protocols", "no-split-protocols", Kind::kInts, 0, 255, "", "", "traffic of these IP protocols is never split",
   "", true, "N,N", [](R& c, const V& v) { c.park.no_split.protocols.assign(v.ints.begin(), v.ints.end()); }},
  // [reframe] (T_buff: [run] reframe_us; docs/reframer.md)
  {"reframe", "placement", "reframe-placement", Kind::kChoice, 0, 0, "", "in-chain", "Reframer on the NF server's lcore in front of the chain (in-chain), or on an lcore of its own between the NF link and the chain (box; docs/reframer.md, Placement)",
   "in-chain|box", true, "P", [](R& c, const V& v) { c.reframe.placement = *parse_placement(v.s); }},
  {"reframe", "max_burst", "reframe-max-burst", Kind::kInt, 1, 65535, "packets", "32", "Reframer: a flow's batch leaves when it holds this many",
   "", true, "N", [](R& c, const V& v) { c.reframe.cfg.max_burst = uint32_t(v.u); }},
  {"reframe", "priority", "reframe-priority", Kind::kChoice, 0, 0, "", "oldest_in_queue", "Reframer: order of the batches due in one round",
   "oldest_in_queue|oldest_flow|shortest_flow|ready", true, "P", [](R& c, const V& v) { c.reframe.cfg.priority = *reframe::parse_priority(v.s); }},
  {"reframe", "max_held", "reframe-max-held", Kind::kInt, 0, 1 << 24, "packets", "0", "Reframer: buffer cap; beyond it the oldest batch leaves early (0: 16384)",
   "", true, "N", [](R& c, const V& v) { c.reframe.cfg.max_held_packets = uint32_t(v.u); }},
  {"reframe", "max_held_flows", "reframe-max-held-flows", Kind::kInt, 1, 1 << 24, "flows", "4096", "Reframer: flows with buffered packets; beyond it the oldest batch leaves early",
   "", true, "N", [](R& c, const V& v) { c.reframe.cfg.max_held_flows = uint32_t(v.u); }},
  {"reframe", "max_flows", "reframe-max-flows", Kind::kInt, 16, 1 << 30, "flows", "1048576", "Reframer: flows tracked (flow slots, 32 B x 4 per flow)",
   "", true, "N", [](R& c, const V& v) { c.reframe.cfg.max_flows = uint32_t(v.u); }},
  {"reframe", "flow_timeout_s", "reframe-flow-timeout", Kind::kReal, 0.000001, 1800, "s", "10", "Reframer: a flow idle this long is new again (its next packet is a first packet)",
   "", true, "S", [](R& c, const V& v) { c.reframe.cfg.flow_timeout = Nanos(v.d * 1e9); }},
  {"reframe", "bypass_first", "reframe-no-bypass-first", Kind::kBool, 0, 0, "", "true", "Reframer: a flow's first packet is never delayed (the flag: it may be)",
   "", false, "", [](R& c, const V& v) { c.reframe.cfg.bypass_first_packet = v.b; }},
  {"reframe", "bypass_syn", "reframe-no-bypass-syn", Kind::kBool, 0, 0, "", "true", "Reframer: TCP SYN and SYN-ACK are never delayed (the flag: they may be)",
   "", false, "", [](R& c, const V& v) { c.reframe.bypass_syn = v.b; }},
  {"reframe", "bypass_dscp", "reframe-bypass-dscp", Kind::kInts, 0, 63, "", "", "Reframer: packets with these DSCP values are never delayed",
   "", true, "N,N", [](R& c, const V& v) { c.reframe.bypass_dscp = v.ints; }},
  {"reframe", "bypass_protocols", "reframe-bypass-protocols", Kind::kInts, 0, 255, "", "", "Reframer: packets of these IP protocols are never delayed (header-match bypass class)",
   "", true, "N,N", [](R& c, const V& v) { c.reframe.bypass_match.protocols.assign(v.ints.begin(), v.ints.end()); }},
  {"reframe", "bypass_dst_ports", "reframe-bypass-ports", Kind::kInts, 0, 65535, "", "", "Reframer: packets to these L4 destination ports are never delayed (header-match bypass class)",
   "", true, "N,N", [](R& c, const V& v) { c.reframe.bypass_match.dst_ports.assign(v.ints.begin(), v.ints.end()); }},
  {"reframe", "bypass_dst_prefixes", "reframe-bypass-prefixes", Kind::kPrefixes, 0, 0, "", "", "Reframer: packets to these destinations are never delayed (header-match bypass class)",
   "", true, "P,P", [](R& c, const V& v) {
     c.reframe.bypass_match.dst_prefixes.clear();
     for (const std::string& s : v.list) {
       park::Prefix p;
       std::string e;
       park::parse_prefix(s, p, e);
       c.reframe.bypass_match.dst_prefixes.push_back(p);
     }
   }},
  {"reframe", "coalesce_acks", "reframe-coalesce-acks", Kind::kBool, 0, 0, "", "false", "Reframer: drop pure TCP ACKs superseded within a batch (counted as coalesced)",
   "", true, "", [](R& c, const V& v) { c.reframe.cfg.coalesce_acks = v.b; }},
  {"reframe", "prefetch", "reframe-no-prefetch", Kind::kBool, 0, 0, "", "true", "Reframer: prefetch flow slots 16 packets ahead (the flag: no prefetch)",
   "", false, "", [](R& c, const V& v) { c.reframe.cfg.prefetch = v.b; }},
  {"reframe", "self_bypass", "reframe-no-self-bypass", Kind::kBool, 0, 0, "", "true", "Reframer: pass traffic through while regrouping gains less than min_gain (the flag: never)",
   "", false, "", [](R& c, const V& v) { c.reframe.cfg.self_bypass.enabled = v.b; }},
  {"reframe", "min_gain", "reframe-min-gain", Kind::kReal, 1, 100, "SLF out / SLF in", "1.1", "Reframer: self-bypass when a probe window's SLF gain is below this",
   "", true, "G", [](R& c, const V& v) { c.reframe.cfg.self_bypass.min_gain = v.d; }},
  {"reframe", "probe_packets", "reframe-probe", Kind::kInt, 64, 1 << 30, "packets", "16384", "Reframer: packets per self-bypass probe window",
   "", true, "N", [](R& c, const V& v) { c.reframe.cfg.self_bypass.probe_packets = uint32_t(v.u); }},
  {"reframe", "bypass_packets", "reframe-bypass-packets", Kind::kInt, 1, 1 << 30, "packets", "262144", "Reframer: packets passed through per self-bypass period before probing again",
   "", true, "N", [](R& c, const V& v) { c.reframe.cfg.self_bypass.bypass_packets = uint32_t(v.u); }},
  // [queuemem]
  {"queuemem", "queues", "qm-queues", Kind::kInt, 1, 65535, "queues", "1600", "QUEUE-MEM: payload queues per port, shared by its slices (P4: 31; 1600 x 20 holds what can be in flight; nfpark sim: 31)",
   "", true, "N", [](R& c, const V& v) { c.queuemem.queues = uint16_t(v.u); }, "31"},
  {"queuemem", "slices", "qm-slices", Kind::kInt, 1, 65535, "slices", "6", "QUEUE-MEM: slices per port, at most queues: a flow's batches leave in order within its slice (P4: 6; nfpark sim: 15)",
   "", true, "N", [](R& c, const V& v) { c.queuemem.slices = uint16_t(v.u); }, "15"},
  {"queuemem", "batch", "qm-batch", Kind::kInt, 1, 65535, "payloads", "20", "QUEUE-MEM: payloads per batch",
   "", true, "N", [](R& c, const V& v) { c.queuemem.batch = uint16_t(v.u); }},
  {"queuemem", "header_array", "qm-header-array", Kind::kInt, 1, 1 << 28, "entries", "94000", "QUEUE-MEM: header-array entries (P4: 94000)",
   "", true, "N", [](R& c, const V& v) { c.queuemem.header_array = uint32_t(v.u); }},
  {"queuemem", "min_payload", "qm-min-payload", Kind::kInt, 0, 9000, "bytes", "64", "QUEUE-MEM: smallest L4 payload that is split",
   "", true, "B", [](R& c, const V& v) { c.queuemem.min_payload = uint32_t(v.u); }},
  {"queuemem", "lost_after_us", "qm-lost-after", Kind::kReal, 1, 1e9, "µs", "50000", "QUEUE-MEM: a missing header overtaken this long ago on the NF's clock is lost (must exceed --reframe; nfpark sim: 100)",
   "", true, "US", [](R& c, const V& v) { c.queuemem.lost_after = Nanos(v.d * 1e3 + 0.5); }, "100"},
  {"queuemem", "seal_after_us", "qm-seal-after", Kind::kReal, 0, 1e9, "µs", "200", "QUEUE-MEM: a batch not full is closed this long after it opened (0: only when full, the paper's rule; nfpark sim: 20)",
   "", true, "US", [](R& c, const V& v) { c.queuemem.seal_after = Nanos(v.d * 1e3 + 0.5); }, "20"},
  {"queuemem", "poll_ns", "", Kind::kReal, 1, 1e9, "ns", "1000", "QUEUE-MEM, nfpark sim only: how often the switch program's timer looks at time-driven decisions (sealing, recovery); nfpark run looks every loop iteration",
   "", true, "NS", [](R& c, const V& v) { c.sim.queuemem_poll_ns = v.d; }, "", true},
  // [nfslicer]
  {"nfslicer", "thr", "slicer-thr", Kind::kInt, 0, 65535, "bytes", "500", "NFSlicer: frames longer than this are sliced",
   "", true, "B", [](R& c, const V& v) { c.slicer.thr = uint32_t(v.u); }},
  {"nfslicer", "slice_bytes", "slicer-bytes", Kind::kInt, 0, 65535, "bytes", "0", "NFSlicer: payload bytes sliced per packet (0: all of it)",
   "", true, "B", [](R& c, const V& v) { c.slicer.slice_bytes = uint32_t(v.u); }},
  {"nfslicer", "entries", "slicer-entries", Kind::kInt, 1, kMaxHeldPackets, "entries", "4096", "NFSlicer: ring entries (rounded up to a power of two)",
   "", true, "N", [](R& c, const V& v) { c.slicer.entries = uint32_t(v.u); }},
  {"nfslicer", "ttl", "slicer-ttl", Kind::kInt, 1, 255, "wrap-arounds", "10", "NFSlicer: ring wrap-arounds an entry survives",
   "", true, "N", [](R& c, const V& v) { c.slicer.ttl = uint8_t(v.u); }},
  // [nicmem]
  {"nicmem", "header_segment", "header-segment", Kind::kInt, 1, 256, "bytes", "64", "nicmem/split: bytes in the host header segment (grown to cover L2-L4)",
   "", true, "B", [](R& c, const V& v) { c.header_segment = uint32_t(v.u); }},
  {"nicmem", "pool", "nicmem-pool", Kind::kInt, 1, kMaxHeldPackets, "packets", "8192", "nicmem: NIC-memory capacity; beyond it frames land in host memory (counted)",
   "", true, "N", [](R& c, const V& v) { c.nicmem_mbufs = uint32_t(v.u); }},
  // [faults]
  {"faults", "drop", "nf-drop", Kind::kReal, 0, 1, "fraction", "0", "fault: the NF server drops this fraction of packets silently",
   "", true, "P", [](R& c, const V& v) { c.faults.drop = v.d; }},
  {"faults", "dup", "nf-dup", Kind::kReal, 0, 1, "fraction", "0", "fault: the NF server duplicates this fraction of packets",
   "", true, "P", [](R& c, const V& v) { c.faults.dup = v.d; }},
  {"faults", "reorder", "nf-reorder", Kind::kReal, 0, 1, "fraction", "0", "fault: the NF server swaps neighbours with this probability",
   "", true, "P", [](R& c, const V& v) { c.faults.reorder = v.d; }},
  {"faults", "corrupt_tag", "nf-corrupt-tag", Kind::kReal, 0, 1, "fraction", "0", "fault: the NF server flips a bit in this fraction of tags",
   "", true, "P", [](R& c, const V& v) { c.faults.corrupt_tag = v.d; }},
  {"faults", "forge_tag", "nf-forge-tag", Kind::kReal, 0, 1, "fraction", "0", "fault: the NF server forges this fraction of tags (random bytes, a tag replayed from an earlier burst, another packet's tag sent after its owner: each must be dropped)",
   "", true, "P", [](R& c, const V& v) { c.faults.forge_tag = v.d; }},
  {"faults", "delay_us", "nf-delay-us", Kind::kReal, 0, 6e7, "µs", "0", "fault: the NF server delays packets by this long (a delay_share of them)",
   "", true, "D", [](R& c, const V& v) { c.faults.delay_us = v.d; }},
  {"faults", "delay_share", "nf-delay-share", Kind::kReal, 0, 1, "fraction", "1", "fault: the fraction of packets delay_us delays (the others leave at once)",
   "", true, "P", [](R& c, const V& v) { c.faults.delay_share = v.d; }},
  {"faults", "seed", "seed", Kind::kInt, 0, kMaxU64, "", "1", "seed of the fault injector",
   "", true, "S", [](R& c, const V& v) { c.faults.seed = v.u; }},
};
// clang-format on

}  // namespace

std::span<const Setting> settings() {
  return kSettings;
}

const Setting* find_setting(std::string_view section, std::string_view key) {
  for (const Setting& s : kSettings)
    if (s.section == section && s.key == key) return &s;
  return nullptr;
}

const Setting* find_flag(std::string_view flag) {
  if (flag.empty()) return nullptr;
  for (const Setting& s : kSettings)
    if (s.flag == flag) return &s;
  return nullptr;
}

std::vector<std::string_view> sections() {
  std::vector<std::string_view> v;
  for (const Setting& s : kSettings)
    if (std::find(v.begin(), v.end(), s.section) == v.end()) v.push_back(s.section);
  return v;
}

}  // namespace nfpark::run
