// EdgeGen: a deterministic trace holding every frame kind a real capture may hold, for testing
// every mode on them (`nfpark trace gen --kinds edge --out F`; docs/traces.md "Edge trace").
//
// Kinds (EdgeKind), each at least once:
//   flow        ordinary TCP and UDP flows over IPv4 and IPv6, `packets_per_flow` packets each,
//               frames of mixed sizes (64..1514 B: some above 160 and 500 B of payload, so they
//               are parked and sliced), TCP sequence numbers advancing; flows 0 and 1 (TCP) also
//               carry a 9014 B jumbo frame and GRO-size frames (16 KiB, 32 KiB, 65549 B IPv4;
//               65589 B IPv6), so per-flow order is exercised across sizes.
//   truncated   records cut by a snaplen of 64..96 B (caplen < wire length), one inside a header.
//   icmp_echo   ICMP echo request and reply.
//   icmp_error  ICMP destination unreachable (port) and time exceeded quoting a UDP / TCP packet
//               of a flow of the trace (IP header + 8 bytes, RFC 792); ICMPv6 destination
//               unreachable quoting an IPv6 flow packet (RFC 4443).
//   fragment    an IPv4 UDP datagram in two fragments (first with the UDP header, non-first).
//   ipv6_ext    IPv6 with hop-by-hop, routing (segment routing, segments left 0), destination
//               options and fragment (atomic) headers, alone and all chained.
//   vlan        QinQ (0x88a8 outer, 0x8100 inner) and one 802.1ad (0x88a8) tag, TCP inside.
//   mpls        one MPLS label (0x8847) over IPv4/UDP.
//   arp         an ARP request.
//   unknown     an unknown EtherType (0x88b5, local experimental).
//   dscp63      whole TCP and UDP packets marked DSCP 63 (NFSlicer's mark), above 500 B.
//   short_ip    a packet whose IPv4 length (1028) exceeds its frame (200 B, captured whole).
//   lookalike   payloads that start like an nfpark tag (magic 0x4E, version 1, "parked"), like
//               NFSlicer's escape token, like a ring token; one also DSCP 63.
// Every packet whose payload can hold one carries a packet id (core/packet_builder.h), unique in
// the trace; lookalike payloads cannot (their first bytes are the point). Checksums are valid
// wherever the packet is whole. Timestamps: `start`, then 1 µs apart. The order: round r emits
// packet r of every flow (flows shuffled by `seed`), then a few of the other kinds, so they are
// interleaved with the flows; an ICMP error always follows the packet it quotes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/time.h"
#include "trace/pcap_writer.h"
#include "trace/trace.h"

namespace nfpark::trace {

enum class EdgeKind : uint8_t {
  kFlow,
  kTruncated,
  kIcmpEcho,
  kIcmpError,
  kFragment,
  kIpv6Ext,
  kVlan,
  kMpls,
  kArp,
  kUnknown,
  kDscp63,
  kShortIp,
  kLookalike,
};
constexpr int kEdgeKinds = 13;
const char* to_string(EdgeKind k);

struct EdgeConfig {
  uint64_t seed = 1;
  uint32_t flows = 12;            // ordinary flows, 6..1000
  uint32_t packets_per_flow = 8;  // 8..1000
  Nanos start = 1700000000LL * kSecond;
  std::string validate() const;  // empty when valid
};

// Appends the edge trace to `out`; `kinds` (optional) gets each packet's kind.
void generate_edge(const EdgeConfig& c, Trace& out, std::vector<EdgeKind>* kinds = nullptr);
bool generate_edge_pcap(const EdgeConfig& c, const std::string& path, Precision p,
                        std::string* error);

}  // namespace nfpark::trace
