// nfpark trace {gen|stats|reorder|pad}: generate, analyse and compare pcap traces (src/trace).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "args.h"
#include "commands.h"
#include "trace/edge_gen.h"
#include "trace/generator.h"
#include "trace/link_layer.h"
#include "trace/pad.h"
#include "trace/pcap_reader.h"
#include "trace/reorder.h"
#include "trace/trace_stats.h"

namespace nfpark::app {

namespace {

using namespace nfpark::trace;

int bad(const std::string& verb, const std::string& msg) {
  std::fprintf(stderr, "nfpark trace %s: %s\n", verb.c_str(), msg.c_str());
  return 2;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// nfpark trace gen --kinds edge: the edge-case trace (trace/edge_gen.h).
int gen_edge(Args& a) {
  EdgeConfig c;
  uint64_t flows = 12, ppf = 8;
  if (!a.get_u64("seed", c.seed) || (a.has("flows") && !a.get_u64("flows", flows)) ||
      !a.get_u64("packets-per-flow", ppf))
    return bad("gen", a.error());
  if (!a.has("out")) return bad("gen", "--out FILE is required (see nfpark trace gen --help)");
  for (const char* o : {"packets", "size", "slf", "proto", "active", "zipf", "ipv6", "vlan"})
    if (a.has(o))
      return bad("gen", std::string("--") + o +
                            " does not apply to --kinds edge (its sizes, "
                            "protocols and order are fixed; see docs/traces.md)");
  c.flows = uint32_t(std::min<uint64_t>(flows, 1u << 20));
  c.packets_per_flow = uint32_t(std::min<uint64_t>(ppf, 1u << 20));
  if (std::string v = c.validate(); !v.empty()) return bad("gen", v);
  std::string err;
  const Precision p = a.get("precision") == "us" ? Precision::kMicro : Precision::kNano;
  if (!generate_edge_pcap(c, a.get("out"), p, &err)) return bad("gen", err);
  std::vector<EdgeKind> kinds;
  Trace t;
  generate_edge(c, t, &kinds);
  std::printf(
      "wrote %zu packets (edge: %u flows x %u packets + every other frame kind, seed %llu) "
      "to %s\n",
      t.size(), c.flows, c.packets_per_flow, (unsigned long long)c.seed, a.get("out").c_str());
  return 0;
}

int gen_main(int argc, char** argv) {
  Args a("nfpark trace gen",
         "Generate a synthetic pcap trace, deterministic by seed. Every packet carries its id\n"
         "(0..N-1 in trace order) in its payload and has valid checksums. See docs/traces.md.");
  a.option("out", "FILE", "pcap file to write (required)")
      .option("packets", "N", "number of packets", "1000")
      .option("flows", "F", "flow population (distinct 5-tuples), 1..16000000", "100")
      .option("size", "S", "frame bytes without FCS: 64..9000, dc, imix or caida", "64")
      .option("slf", "K", "back-to-back packets per flow burst (spatial locality factor)", "1")
      .option("proto", "P", "udp, tcp, or mix (50/50 per flow)", "udp")
      .option("seed", "S", "random seed; same options + seed = same file", "1")
      .option("active", "A", "live flows at any moment (temporal locality); 0 = all", "0")
      .option("zipf", "S", "Zipf exponent of flow popularity; 0 = uniform", "0")
      .option("rate-gbps", "R", "line rate the timestamps follow, Gbit/s", "10")
      .option("ipv6", "X", "fraction of flows that are IPv6, 0..1", "0")
      .flag("vlan", "add one 802.1Q tag (VLAN id hashed from the flow)")
      .option("flow-sizes", "D",
              "packets per flow (with --active): even, pareto:ALPHA or lognormal:SIGMA "
              "(heavy tails, mean packets/flows)",
              "even")
      .flag("pace",
            "(with --active) each flow spreads its packets over its lifetime at its own rate "
            "(elephants often, mice rarely) instead of random picks")
      .option("train", "T", "--pace: mean packets per train of a flow (SLF ~ T), >= 1", "1")
      .option("copies", "N",
              "N time-shifted copies merged, copy k with its own flow ids (f + k*flows): "
              "raises load and flow count (each copy holds --packets packets)",
              "1")
      .option("copy-shift-us", "T", "shift between consecutive copies, microseconds", "0")
      .option("precision", "P", "timestamp resolution in the file: ns or us", "ns")
      .option("kinds", "K",
              "synthetic (the options above) or edge: every frame kind a capture may "
              "hold (jumbo/GRO, truncated, ICMP, fragments, IPv6 ext, QinQ, MPLS, ARP, ...; uses "
              "--out, --seed, --flows and --packets-per-flow only)",
              "synthetic")
      .option("packets-per-flow", "N", "edge: packets of each ordinary flow, 8..1000", "8");
  if (!a.parse(argc, argv, 2)) return bad("gen", a.error());
  if (a.help()) return std::fputs(a.usage().c_str(), stdout), 0;
  if (a.get("kinds") == "edge") return gen_edge(a);
  if (a.get("kinds") != "synthetic")
    return bad("gen", "--kinds: '" + a.get("kinds") + "' is not synthetic or edge");
  GenConfig c;
  uint64_t slf = 1;
  if (!a.get_u64("packets", c.packets) || !a.get_u64("flows", c.flows) || !a.get_u64("slf", slf) ||
      !a.get_u64("seed", c.seed) || !a.get_u64("active", c.active) ||
      !a.get_double("zipf", c.zipf) || !a.get_double("rate-gbps", c.rate_gbps) ||
      !a.get_double("ipv6", c.ipv6) || !a.get_double("train", c.train))
    return bad("gen", a.error());
  uint64_t copies = 1;
  double shift_us = 0;
  if (!a.get_u64("copies", copies) || !a.get_double("copy-shift-us", shift_us))
    return bad("gen", a.error());
  if (copies == 0 || copies > 64) return bad("gen", "--copies must be in 1..64");
  if (!(shift_us >= 0 && shift_us <= 1e9)) return bad("gen", "--copy-shift-us must be in 0..1e9");
  c.copies = uint32_t(copies);
  c.copy_shift = Nanos(shift_us * 1e3);
  c.pace = a.flag_set("pace");
  if (!a.has("out")) return bad("gen", "--out FILE is required (see nfpark trace gen --help)");
  if (slf > 1000000) return bad("gen", "--slf must be in 1..1000000");
  c.slf = uint32_t(slf);
  std::string err;
  if (!SizeSpec::parse(a.get("size"), c.size, &err)) return bad("gen", "--size: " + err);
  if (!FlowSizeSpec::parse(a.get("flow-sizes"), c.flow_sizes, &err))
    return bad("gen", "--flow-sizes: " + err);
  std::string p = a.get("proto");
  if (p == "udp")
    c.proto = GenProto::kUdp;
  else if (p == "tcp")
    c.proto = GenProto::kTcp;
  else if (p == "mix")
    c.proto = GenProto::kMix;
  else
    return bad("gen", "--proto: '" + p + "' is not udp, tcp or mix");
  std::string prec = a.get("precision");
  if (prec != "ns" && prec != "us")
    return bad("gen", "--precision: '" + prec + "' is not ns or us");
  c.vlan = a.flag_set("vlan");
  if (std::string v = c.validate(); !v.empty()) return bad("gen", v);
  auto t0 = std::chrono::steady_clock::now();
  if (!generate_pcap(c, a.get("out"), prec == "ns" ? Precision::kNano : Precision::kMicro, &err))
    return bad("gen", err);
  std::printf(
      "wrote %llu packets (size %s, %s, %llu flows x %u copies, SLF %u, seed %llu) to %s in "
      "%.2f s\n",
      (unsigned long long)(c.packets * c.copies), c.size.name().c_str(), to_string(c.proto),
      (unsigned long long)c.flows, c.copies, c.slf, (unsigned long long)c.seed,
      a.get("out").c_str(), seconds_since(t0));
  return 0;
}

int stats_main(int argc, char** argv) {
  Args a("nfpark trace stats",
         "Analyse a pcap/pcapng trace: volume, sizes, protocol mix, flows, SLF, and the spatial\n"
         "(packets) and temporal (ns) distance between consecutive packets of a flow.");
  a.positional("FILE", "pcap or pcapng file (Ethernet)").flag("json", "print JSON instead of text");
  if (!a.parse(argc, argv, 2)) return bad("stats", a.error());
  if (a.help()) return std::fputs(a.usage().c_str(), stdout), 0;
  TraceStats s;
  std::string err;
  if (!stats_file(a.pos(0), s, &err)) return bad("stats", err);
  std::fputs(a.flag_set("json") ? s.to_json().c_str() : s.to_text().c_str(), stdout);
  return 0;
}

int reorder_main(int argc, char** argv) {
  Args a("nfpark trace reorder",
         "Compare a sent and a received trace (RFC 4737): out-of-order share, reordering extent,\n"
         "lost and duplicated packets. Packets are matched by the generator's packet id, or by a\n"
         "hash of the frame bytes when some packet has no id (the output says which).");
  a.positional("SENT", "trace as sent (pcap/pcapng)")
      .positional("RECEIVED", "trace as received (pcap/pcapng)")
      .flag("json", "print JSON instead of text");
  if (!a.parse(argc, argv, 2)) return bad("reorder", a.error());
  if (a.help()) return std::fputs(a.usage().c_str(), stdout), 0;
  ReorderStats r;
  std::string err;
  if (!reorder_files(a.pos(0), a.pos(1), r, &err)) return bad("reorder", err);
  std::fputs(a.flag_set("json") ? r.to_json().c_str() : r.to_text().c_str(), stdout);
  return 0;
}

// nfpark trace pad IN OUT: truncated records rebuilt to their wire length (trace/pad.h).
int pad_main(int argc, char** argv) {
  Args a("nfpark trace pad",
         "Rebuild each truncated record (captured length < wire length, e.g. a header-only\n"
         "backbone trace) to its wire length with a zero filler payload, as tcprewrite\n"
         "--fixlen=pad does. IPv4 header checksums are kept; L4 checksums are recomputed where\n"
         "the capture held the whole L4 header (docs/traces.md). Other link types are written as\n"
         "Ethernet.");
  a.positional("IN", "pcap or pcapng file")
      .positional("OUT", "pcap file to write")
      .flag("json", "print JSON instead of text");
  if (!a.parse(argc, argv, 2)) return bad("pad", a.error());
  if (a.help()) return std::fputs(a.usage().c_str(), stdout), 0;
  TraceReader r;
  if (!r.open(a.pos(0))) return bad("pad", r.error());
  PcapWriter w;
  if (!w.open(a.pos(1),
              r.format() == TraceFormat::kPcapMicro ? Precision::kMicro : Precision::kNano))
    return bad("pad", w.error());
  std::vector<uint8_t> buf(kMaxFrame);
  PacketRecord rec;
  ReadStatus st;
  uint64_t n = 0, padded = 0, fixed = 0;
  while ((st = r.next(rec)) == ReadStatus::kPacket) {
    const PadResult p = pad_frame(rec.data, rec.len, rec.wire_len, buf.data());
    if (!w.write(rec.ts, buf.data(), p.len, p.len + p.cut)) break;
    ++n;
    padded += p.padded;
    fixed += p.checksum_fixed;
  }
  if (st == ReadStatus::kError) return bad("pad", r.error());
  if (!w.close()) return bad("pad", w.error());
  if (a.flag_set("json"))
    std::printf("{\"packets\": %llu, \"padded\": %llu, \"checksums_fixed\": %llu}\n",
                (unsigned long long)n, (unsigned long long)padded, (unsigned long long)fixed);
  else
    std::printf(
        "%s: %llu packets, %llu padded to their wire length (%llu L4 checksums recomputed)\n",
        a.pos(1).c_str(), (unsigned long long)n, (unsigned long long)padded,
        (unsigned long long)fixed);
  return 0;
}

void usage(FILE* out) {
  std::fputs(
      "usage: nfpark trace <verb> [options]   (nfpark trace <verb> --help for each)\n\n"
      "  gen       generate a synthetic pcap (sizes, flows, SLF, temporal locality, ...)\n"
      "  stats     analyse a pcap/pcapng: sizes, mix, flows, SLF, spatial/temporal distance\n"
      "  reorder   compare sent and received traces: reordering (RFC 4737), loss, duplicates\n"
      "  pad       rebuild truncated records to their wire length (zero filler)\n",
      out);
}

}  // namespace

int trace_main(int argc, char** argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  std::string verb = argv[1];
  if (verb == "--help" || verb == "-h" || verb == "help") return usage(stdout), 0;
  if (verb == "gen") return gen_main(argc, argv);
  if (verb == "stats") return stats_main(argc, argv);
  if (verb == "reorder") return reorder_main(argc, argv);
  if (verb == "pad") return pad_main(argc, argv);
  return bad(verb, "unknown verb (use gen, stats, reorder or pad; see nfpark trace --help)");
}

}  // namespace nfpark::app
