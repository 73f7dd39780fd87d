// Test fixtures for QueueMem: traffic, a NAT-like header rewrite (the baseline), and `Rig`, a
// switch + NF server + NF driven round by round, with the NF's timing under the test's control:
// latency per packet, the order packets come back in, drops, duplicates. The Rig behaves as the
// engine does: it offers packets in order, keeps what split() refuses and offers it first next
// round, calls poll() every round, and nf_idle() when the mode refuses and nothing is at the NF.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <vector>

#include "core/bytes.h"
#include "core/checksum.h"
#include "core/flow_key.h"
#include "core/packet_builder.h"
#include "core/time.h"
#include "park/nf_endpoint.h"
#include "park/queue_mem.h"
#include "park/vec_buffer.h"

namespace nfpark::park::qm_test {

using testing::VecBuffer;
using testing::VecPkt;
struct In {
  std::vector<uint8_t> bytes;
  uint64_t id;
  uint8_t port = 0;
};
using Pkts = std::vector<In>;

// NAT-like rewrite of a packet's headers (IPv4 source address, L4 source port), checksums
// patched incrementally (RFC 1624) as a NAT does on header-only packets — never recomputed.
inline void nat_rewrite(PacketView& v) {
  const PacketLayout& L = v.layout;
  if (!L.ok() || !L.has_ports()) return;
  uint8_t* l4 = v.data + L.l4_off;
  uint8_t* ck = l4 + (L.is_tcp() ? 16 : 6);
  uint16_t c = load_be16(ck);
  const bool no_csum = L.is_udp() && c == 0;  // RFC 768: stays 0
  const uint16_t sport = load_be16(l4), nport = uint16_t(1024 + sport * 7);
  if (L.ip_version == 4) {
    uint8_t* ip = v.data + L.l3_off;
    const uint32_t old = load_be32(ip + 12), nsrc = 0xC6120001u + sport % 5;
    store_be32(ip + 12, nsrc);
    store_be16(ip + 10, csum_update32(load_be16(ip + 10), old, nsrc));
    c = csum_update32(c, old, nsrc);  // pseudo-header
  }
  store_be16(l4, nport);
  c = csum_update16(c, sport, nport);
  if (!no_csum) store_be16(ck, L.is_udp() && c == 0 ? 0xFFFF : c);
}

inline std::vector<uint8_t> baseline(std::vector<uint8_t> b) {
  PacketView v{b.data(), uint32_t(b.size()), uint32_t(b.size()), parse_packet(b.data(), b.size())};
  nat_rewrite(v);
  return b;
}

// Mixed traffic: UDP/TCP, IPv4/IPv6, VLAN, payloads around min_payload, a few ICMP echoes.
inline Pkts mixed(size_t n, uint32_t seed, uint32_t flows = 40, uint8_t ports = 1) {
  std::mt19937 rng(seed);
  const uint32_t sizes[] = {0, 20, 63, 64, 200, 1000, 1458};
  Pkts out;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t f = rng() % flows, id = uint32_t(i + 1);
    PacketBuilder b;
    if (f % 9 == 0) b.vlan(7);
    if (f % 5 == 0)
      b.ipv6("2001:db8::1", "2001:db8::2");
    else
      b.ipv4(0x0A000001 + f, 0xC0A80001 + f % 3);
    if (f == 13)
      b.icmp_echo(uint16_t(f), uint16_t(i));
    else if (f % 2)
      b.tcp(uint16_t(1000 + f), 80, 0x18, uint32_t(i));
    else
      b.udp(uint16_t(2000 + f), 53);
    b.payload_size(sizes[rng() % 7] + (i % 3)).packet_id(id);
    out.push_back({b.build(), id, uint8_t(f % ports)});  // a flow keeps its output port
  }
  return out;
}

inline Pkts udp_flows(size_t n, uint32_t flows, uint32_t payload = 1458) {
  Pkts out;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t f = uint32_t(i % flows);
    auto b = PacketBuilder().ipv4(0x0A000001 + f, 0xC0A80001).udp(uint16_t(3000 + f), 4789);
    out.push_back({b.payload_size(payload).packet_id(i + 1).build(), i + 1});
  }
  return out;
}

inline uint64_t payload_id(const VecPkt* p) {
  const auto L = parse_packet(p->bytes.data(), uint32_t(p->bytes.size()));
  auto id = read_packet_id(p->bytes.data() + L.payload_off, L.captured_payload());
  return id ? *id : p->id;  // payloads under 12 B carry no id (never split: the handle's id)
}

// The NF's timing, decided per packet as it reaches the NF.
struct NfTiming {
  enum class Order { kFifo, kPerFlow, kAny, kReverse };
  Order order = Order::kFifo;  // kFifo: as received; kPerFlow: each flow in order, flows mixed;
                               // kAny: any order; kReverse: each round's returns reversed
  uint32_t max_rounds = 0;     // latency drawn from 0..max_rounds rounds
  double drop = 0, dup = 0;    // silent drops (or notified, see Rig) and duplicates
};

struct Rig {
  explicit Rig(const QueueMemConfig& c, bool notify = true, uint32_t seed = 1)
      : qm(c), ep(TagFormat::kNfpark, notify), rng(seed) {}
  ~Rig() {
    for (auto* p : out) VecBuffer::free(p);
    for (auto& [due, h] : at_nf) VecBuffer::free(h.p);
    for (auto* p : pending) VecBuffer::free(p);
  }
  QueueMem<VecBuffer> qm;
  NfEndpoint<VecBuffer> ep;
  Emitter<VecPkt*> to_nf, to_out;
  std::vector<VecPkt*> out, pending;  // pending: refused, offered again first
  std::vector<uint8_t> pending_port;
  NfTiming timing;
  std::function<bool(VecPkt*, const PacketView&)> nf_drop;  // NF chain decides to drop
  std::function<void(std::vector<VecPkt*>&)> reorder;       // order of a round's returns
  Nanos now = 0, step = kMicro;                             // time per round
  uint64_t round = 0, nf_freed_whole = 0, nf_dropped_headers = 0, idles = 0;
  uint64_t extra_whole = 0, extra_tagged = 0;  // NF duplicates: of whole packets, of the others
  std::map<uint64_t, uint64_t> taken_at;       // packet id -> round split() took it
  uint64_t max_delay = 0;                      // most rounds a packet spent in the switch
  std::mt19937 rng;

  struct AtNf {
    VecPkt* p;
    uint64_t due, seq, flow;
  };
  std::multimap<uint64_t, AtNf> at_nf;    // by due round (equal keys keep their arrival order)
  std::map<uint64_t, uint64_t> flow_due;  // per-flow latest due round (kPerFlow)
  uint64_t nf_seq = 0, fifo_due = 0;

  void collect() {
    for (size_t i = 0; i < to_out.size(); ++i) {
      out.push_back(to_out[i]);
      auto it = taken_at.find(payload_id(to_out[i]));
      if (it != taken_at.end()) max_delay = std::max(max_delay, round - it->second);
    }
    to_out.clear();
  }
  // Offers up to `burst` packets (refused ones first); false if the mode refused one.
  bool offer(const Pkts& in, size_t& next, size_t burst) {
    for (size_t k = 0; k < burst; ++k) {
      VecPkt* p;
      uint8_t port;
      if (!pending.empty()) {
        p = pending.front(), port = pending_port.front();
      } else if (next < in.size()) {
        p = VecBuffer::make(in[next].bytes, in[next].id), port = in[next].port;
      } else {
        return true;
      }
      if (!qm.split(p, port, to_nf, to_out)) {
        if (pending.empty()) pending.push_back(p), pending_port.push_back(port), ++next;
        return false;
      }
      taken_at[p->id] = round;
      if (!pending.empty())
        pending.erase(pending.begin()), pending_port.erase(pending_port.begin());
      else
        ++next;
    }
    return true;
  }
  // One round: offer a burst, the NF takes what was sent and returns what is due, merge, time.
  void step_round(const Pkts& in, size_t& next, size_t burst) {
    const uint64_t rx_before = qm.counters().rx;
    const bool refused = !offer(in, next, burst);
    const bool took = qm.counters().rx != rx_before;
    to_nf_pass();
    std::vector<VecPkt*> back = nf_returns();
    if (reorder) reorder(back);
    for (auto* h : back) qm.merge(h, 0, to_out);
    now += step;
    ++round;
    qm.poll(now, to_out);
    // The engine's stall: the mode refuses, nothing was taken, nothing is at the NF.
    if (refused && !took && at_nf.empty()) {
      ++idles;
      qm.nf_idle(to_out);
    }
    collect();
  }
  void run(const Pkts& in, size_t burst = 32) {
    size_t next = 0;
    while (next < in.size() || !pending.empty()) step_round(in, next, burst);
  }
  // End of the run as the engine does it: the NF returns everything, then drain().
  void finish() {
    size_t next = 0;
    const Pkts none;
    while (!at_nf.empty()) step_round(none, next, 0);
    qm.drain(to_out);
    collect();
  }

  void to_nf_pass() {
    for (size_t i = 0; i < to_nf.size(); ++i) {
      VecPkt* h = to_nf[i];
      PacketView v;
      uint32_t tag_at = 0;
      ep.view(h, v, tag_at);
      const bool header = tag_at && (h->bytes[tag_at + 1] & 1) && load_be16(&h->bytes[tag_at + 14]);
      FlowKey k;
      const uint64_t flow = extract_flow_key(v.data, v.layout, k) ? k.hash() : 0;
      nat_rewrite(v);
      std::bernoulli_distribution lose(timing.drop), twice(timing.dup);
      if ((nf_drop && nf_drop(h, v)) || lose(rng)) {
        nf_dropped_headers += header;
        if (VecPkt* r = ep.on_drop(h, tag_at))
          admit(r, flow);
        else
          nf_freed_whole += !header;
        continue;
      }
      if (twice(rng)) {
        admit(VecBuffer::make(h->bytes, h->id), flow);
        const bool tagged = tag_at && (h->bytes[tag_at + 1] & 1);  // header or queued whole
        ++(tagged ? extra_tagged : extra_whole);
      }
      admit(h, flow);
    }
    to_nf.clear();
  }
  void admit(VecPkt* p, uint64_t flow) {
    uint64_t due = round + (timing.max_rounds ? rng() % (timing.max_rounds + 1) : 0);
    if (timing.order == NfTiming::Order::kFifo) due = fifo_due = std::max(fifo_due, due);
    if (timing.order == NfTiming::Order::kPerFlow)
      due = flow_due[flow] = std::max(flow_due[flow], due);
    at_nf.emplace(due, AtNf{p, due, nf_seq++, flow});
  }
  std::vector<VecPkt*> nf_returns() {
    std::vector<AtNf> due;
    const auto end = at_nf.upper_bound(round);
    for (auto it = at_nf.begin(); it != end; ++it) due.push_back(it->second);
    at_nf.erase(at_nf.begin(), end);
    if (timing.order == NfTiming::Order::kFifo)  // dues never decrease: arrival order
      std::sort(due.begin(), due.end(), [](const AtNf& a, const AtNf& b) { return a.seq < b.seq; });
    if (timing.order == NfTiming::Order::kAny) std::shuffle(due.begin(), due.end(), rng);
    if (timing.order == NfTiming::Order::kPerFlow) {  // flows interleaved at random, each in order
      std::shuffle(due.begin(), due.end(), rng);
      std::map<uint64_t, std::vector<uint64_t>> seqs;
      for (auto& a : due) seqs[a.flow].push_back(a.seq);
      for (auto& [f, v] : seqs) std::sort(v.begin(), v.end());
      std::map<uint64_t, size_t> used;
      std::map<uint64_t, AtNf> by_seq;
      for (auto& a : due) by_seq[a.seq] = a;
      for (auto& a : due) a = by_seq[seqs[a.flow][used[a.flow]++]];
    }
    if (timing.order == NfTiming::Order::kReverse) std::reverse(due.begin(), due.end());
    std::vector<VecPkt*> r;
    for (auto& a : due) r.push_back(a.p);
    return r;
  }

  // Every packet in = out + switch drops + whole packets the NF freed; nothing held.
  void expect_conserved(uint64_t in) const {
    const auto& c = qm.counters();
    EXPECT_EQ(c.rx, in);
    EXPECT_EQ(c.rx + extra_whole, c.out() + c.drops() + nf_freed_whole);
    EXPECT_EQ(c.out(), out.size());
    EXPECT_EQ(c.held_pkts, 0u);
    EXPECT_EQ(c.held_bytes, 0u);
    EXPECT_EQ(qm.paused_queues(), 0u);
    EXPECT_EQ(VecBuffer::live, int64_t(out.size()));
  }
  // Each output is byte-identical to the baseline of the packet its payload belongs to.
  void expect_matches_baseline(const Pkts& in) const {
    std::map<uint64_t, std::vector<uint8_t>> want;
    for (auto& p : in) want[p.id] = baseline(p.bytes);
    for (auto* p : out) {
      auto it = want.find(payload_id(p));
      ASSERT_NE(it, want.end()) << "payload without a known packet id";
      EXPECT_EQ(p->bytes, it->second) << "packet " << it->first;
      const auto L = parse_packet(p->bytes.data(), uint32_t(p->bytes.size()));
      EXPECT_TRUE(verify_checksums(p->bytes.data(), L));
    }
  }
  // No packet of a flow (5-tuple of the input, per output port) leaves before an earlier one.
  // Returns the number of packets out of order (0 expected).
  uint64_t flow_order_violations(const Pkts& in) const {
    std::map<uint64_t, std::pair<uint64_t, size_t>> flow_of;  // id -> (flow, input position)
    for (size_t i = 0; i < in.size(); ++i) {
      FlowKey k;
      const auto L = parse_packet(in[i].bytes.data(), uint32_t(in[i].bytes.size()));
      const uint64_t f = extract_flow_key(in[i].bytes.data(), L, k) ? k.hash() : 0;
      flow_of[in[i].id] = {f * 31 + in[i].port, i};
    }
    std::map<uint64_t, size_t> last;  // flow -> highest input position out so far
    uint64_t bad = 0;
    for (auto* p : out) {
      auto [f, pos] = flow_of.at(payload_id(p));
      auto it = last.find(f);
      if (it != last.end() && pos < it->second)
        ++bad;
      else
        last[f] = pos;
    }
    return bad;
  }
};

}  // namespace nfpark::park::qm_test
