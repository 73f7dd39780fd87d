// "Only its own packets are its own" (DESIGN §3, issues 13 and 14), for each park mode on
// VecBuffer: ordinary traffic that resembles a parked or sliced packet — header-only captures
// (IP length above the frame), Ethernet trailers, DSCP 63, NFs that re-mark DSCP, payloads that
// begin with a valid-looking tag, token or escape — passes through exactly as in baseline, and
// a crafted packet carrying a victim's token (even one computed with the right key) never gets
// the victim's payload.
#include <gtest/gtest.h>

#include <set>

#include "core/bytes.h"
#include "core/packet_builder.h"
#include "park/nf_endpoint.h"
#include "park/payload_park.h"
#include "park/queue_mem.h"
#include "park/slicer.h"
#include "park/vec_buffer.h"

namespace nfpark::park {
namespace {

using testing::VecBuffer;
using testing::VecPkt;
using Bytes = std::vector<uint8_t>;

Bytes pkt(uint64_t id, uint32_t frame, uint8_t dscp = 0, bool tcp = false, bool v6 = false) {
  PacketBuilder b;
  if (v6)
    b.ipv6("2001:db8::1", "2001:db8::2");
  else
    b.ipv4("10.0.0.1", "10.0.0.2");
  if (tcp)
    b.tcp(1000 + uint16_t(id % 50), 80);
  else
    b.udp(1000 + uint16_t(id % 50), 53);
  return b.dscp(dscp).frame_size(frame).packet_id(id).build();
}
uint32_t l4_end(const Bytes& b) {
  return parse_packet(b.data(), uint32_t(b.size())).payload_off;
}
Bytes with_trailer(Bytes b, uint32_t n) {
  b.insert(b.end(), n, 0xEE);
  return b;
}
void remark(Bytes& b, uint8_t dscp) {
  write_dscp(b.data(), parse_packet(b.data(), uint32_t(b.size())), dscp);
}

// The kinds of ordinary frames every mode must leave alone. `victim_token`/`tag` go into payloads.
std::vector<Bytes> ordinary(uint64_t token, const uint8_t* tag, uint32_t tag_len) {
  std::vector<Bytes> v;
  uint64_t id = 100;
  for (uint32_t snap : {64u, 72u, 80u, 96u}) {  // header-only captures of every size class
    for (uint32_t frame : {200u, 700u, 1500u, 9000u}) {
      for (bool tcp : {false, true}) {
        Bytes b = pkt(id++, frame, 0, tcp, frame == 700);
        b.resize(std::min<size_t>(snap, b.size()));
        v.push_back(b);
      }
    }
  }
  for (uint32_t frame : {120u, 400u, 1200u}) {
    v.push_back(pkt(id++, frame, 63));                   // DSCP 63 on the wire
    v.push_back(with_trailer(pkt(id++, frame), 4));      // Ethernet trailer
    v.push_back(with_trailer(pkt(id++, frame, 63), 8));  // both
    Bytes t = pkt(id++, frame, 0, true);                 // payload = a ring token
    store_be64(t.data() + l4_end(t), token);
    v.push_back(t);
    v.push_back(with_trailer(t, 8));
    Bytes e = pkt(id++, frame);  // payload = the escape token
    store_be64(e.data() + l4_end(e), kEscapeToken);
    v.push_back(e);
    v.push_back(with_trailer(e, 8));
    Bytes g = pkt(id++, frame);  // payload = a valid tag
    std::memcpy(g.data() + l4_end(g), tag, tag_len);
    v.push_back(g);
    Bytes s = g;  // ... and cut short
    s.resize(l4_end(s) + tag_len + 2);
    v.push_back(s);
  }
  Bytes icmp = PacketBuilder()
                   .ipv4("10.0.0.1", "10.0.0.2")
                   .icmp_echo(9, 9)
                   .dscp(63)
                   .payload_size(600)
                   .build();
  v.push_back(icmp);
  icmp.resize(60);
  v.push_back(icmp);
  return v;
}

class OwnPackets : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_EQ(VecBuffer::live, 0) << "packets leaked"; }
};

// NFSlicer: every ordinary frame, through split -> (an NF that may re-mark DSCP) -> merge, comes
// out as the NF left it: nothing dropped, nothing spliced, no escape token left behind.
TEST_F(OwnPackets, SlicerLeavesOrdinaryTrafficAsBaselineWouldEvenWhenReMarked) {
  for (uint8_t nf_dscp : {uint8_t(255), uint8_t(10), uint8_t(63), uint8_t(0)}) {  // 255: no re-mark
    Slicer<VecBuffer> s(SlicerConfig{});
    Emitter<VecPkt*> host, wire;
    s.split(VecBuffer::make(pkt(1, 1400)), 0, host, wire);  // one live entry
    ASSERT_EQ(host.size(), 1u);
    VecPkt* live = host[0];
    host.clear();
    const uint64_t live_tok = load_be64(live->bytes.data() + l4_end(live->bytes));
    const uint8_t tag[24] = {0x4E, 0x15, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 5, 0xDC, 5, 0xAA};
    for (const Bytes& in : ordinary(live_tok, tag, 24)) {
      s.split(VecBuffer::make(in), 0, host, wire);
      ASSERT_EQ(host.size(), 1u);
      VecPkt* h = host[0];
      host.clear();
      Bytes expect = in;
      const PacketLayout L = parse_packet(in.data(), uint32_t(in.size()));
      const PacketLayout HL = parse_packet(h->bytes.data(), uint32_t(h->bytes.size()));
      const bool sliced =
          inspect_slice(h->bytes.data(), uint32_t(h->bytes.size()), uint32_t(h->bytes.size()), HL)
              .mark == SliceMark::kSliced;
      if (nf_dscp != 255 && L.ok() && L.ip_version) {  // what a meter does in baseline too
        remark(h->bytes, nf_dscp);
        // The mark on a sliced packet means "restore the original DSCP" (NF contract: an NF
        // does not set DSCP 63 itself); on anything else the NF's DSCP stays.
        if (!(sliced && nf_dscp == kSliceDscp)) remark(expect, nf_dscp);
      }
      s.merge(h, wire);
      ASSERT_EQ(wire.size(), 1u) << "frame of " << in.size() << " B dropped; dscp " << int(nf_dscp);
      EXPECT_EQ(wire[0]->bytes, expect)
          << "frame of " << in.size() << " B, NF dscp " << int(nf_dscp);
      VecBuffer::free(wire[0]);
      wire.clear();
    }
    EXPECT_EQ(s.counters().merge_drops(), 0u);
    s.merge(live, wire);
    ASSERT_EQ(wire.size(), 1u);
    EXPECT_EQ(wire[0]->bytes, pkt(1, 1400)) << "the live entry kept its own payload";
    VecBuffer::free(wire[0]);
  }
}

// Issue 14's attack: an ordinary packet whose IP length exceeds its frame and whose payload
// holds the token the victim will get — computed here by a second slicer with the same key (an
// attacker who knows the key: worst case) — arrives just before the victim. Its header comes
// back first. It must leave as sent, and the victim with its own payload.
TEST_F(OwnPackets, CraftedShortPacketWithTheVictimsTokenNeverGetsItsPayload) {
  for (uint32_t victim_frame : {1432u, 9000u}) {
    SlicerConfig c;
    c.key[0] = 0x42;
    Slicer<VecBuffer> s(c), oracle(c);
    Emitter<VecPkt*> host, wire, scratch;
    uint64_t stolen = 0;
    for (uint64_t round = 0; round < 50; ++round) {
      const Bytes victim = pkt(1000 + round, victim_frame, 0, true);
      oracle.split(VecBuffer::make(victim), 0, scratch, scratch);
      const uint64_t tok = load_be64(scratch[0]->bytes.data() + l4_end(scratch[0]->bytes));
      VecBuffer::free(scratch[0]);
      scratch.clear();
      Bytes attacker = pkt(2000 + round, victim_frame, 0, true);
      store_be64(attacker.data() + l4_end(attacker), tok);
      attacker.resize(l4_end(attacker) + 8 + round % 40);  // IP length above the frame
      s.split(VecBuffer::make(attacker), 0, host, wire);
      s.split(VecBuffer::make(victim), 0, host, wire);
      ASSERT_EQ(host.size(), 2u);
      for (size_t i = 0; i < host.size(); ++i) s.merge(host[i], wire);  // attacker's first
      host.clear();
      ASSERT_EQ(wire.size(), 2u);
      stolen += wire[0]->bytes != attacker;
      EXPECT_EQ(wire[0]->bytes, attacker);
      EXPECT_EQ(wire[1]->bytes, victim);
      for (size_t i = 0; i < wire.size(); ++i) VecBuffer::free(wire[i]);
      wire.clear();
    }
    EXPECT_EQ(stolen, 0u) << victim_frame << " B victims";
    s.drain();
    oracle.drain();
  }
}

// A header packet with a long Ethernet trailer behind its payload must still be recognisable
// without its DSCP (an NF re-marks it): with partial slicing the trailer travels in the tail,
// so such a frame goes whole rather than as a header packet no longer shorter than its IP length.
TEST_F(OwnPackets, SlicedPacketsStayRecognisableWithTrailersWhenReMarked) {
  SlicerConfig c;
  c.slice_bytes = 160;
  Slicer<VecBuffer> s(c);
  Emitter<VecPkt*> host, wire;
  for (uint32_t trailer : {0u, 4u, 200u, 1000u}) {
    const Bytes in = with_trailer(pkt(7, 900), trailer);
    s.split(VecBuffer::make(in), 0, host, wire);
    ASSERT_EQ(host.size(), 1u);
    remark(host[0]->bytes, 10);
    s.merge(host[0], wire);
    host.clear();
    ASSERT_EQ(wire.size(), 1u) << trailer;
    Bytes expect = in;
    remark(expect, 10);
    EXPECT_EQ(wire[0]->bytes, expect) << "trailer " << trailer;
    VecBuffer::free(wire[0]);
    wire.clear();
  }
  EXPECT_EQ(s.counters().spliced + s.counters().passed + s.counters().unescaped, 4u);
  EXPECT_GE(s.counters().spliced, 2u);
}

// PayloadPark, both tag formats, keyed: every ordinary frame comes back as it went, and a
// payload holding a valid tag for a live slot (made with the same key) is never read as one.
TEST_F(OwnPackets, PayloadParkLeavesOrdinaryTrafficAsBaselineWould) {
  for (TagFormat f : {TagFormat::kNfpark, TagFormat::kPayloadPark}) {
    ParkConfig c;
    c.format = f;
    c.key = Key128{9};
    PayloadPark<VecBuffer> pp(c);
    VecPkt* live = pp.split(VecBuffer::make(pkt(1, 1400)), 0);
    ASSERT_NE(live, nullptr);
    Bytes tag(live->bytes.begin() + l4_end(live->bytes),
              live->bytes.begin() + l4_end(live->bytes) + pp.codec().size());
    for (const Bytes& in : ordinary(0x0100000000000001ull, tag.data(), uint32_t(tag.size()))) {
      VecPkt* h = pp.split(VecBuffer::make(in), 0);
      ASSERT_NE(h, nullptr);
      VecPkt* out = pp.merge(h, 0);
      ASSERT_NE(out, nullptr) << to_string(f) << ": frame of " << in.size() << " B dropped";
      EXPECT_EQ(out->bytes, in) << to_string(f);
      VecBuffer::free(out);
    }
    VecPkt* out = pp.merge(live, 0);
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->bytes, pkt(1, 1400));
    VecBuffer::free(out);
    EXPECT_EQ(pp.counters().drops(), 0u);
  }
}

// QUEUE-MEM, keyed: the same frames, including one whose payload holds a valid header tag.
TEST_F(OwnPackets, QueueMemLeavesOrdinaryTrafficAsBaselineWould) {
  QueueMemConfig c;
  c.batch = 1;
  c.key = Key128{5};
  QueueMem<VecBuffer> qm(c);
  Emitter<VecPkt*> nf(64), out(64);
  ASSERT_TRUE(qm.split(VecBuffer::make(pkt(1, 1400)), 0, nf, out));
  ASSERT_EQ(nf.size(), 1u);
  VecPkt* hdr = nf[0];
  nf.clear();
  Bytes tag(hdr->bytes.begin() + l4_end(hdr->bytes), hdr->bytes.begin() + l4_end(hdr->bytes) + 24);
  std::vector<Bytes> in = ordinary(0x0100000000000001ull, tag.data(), 24);
  for (const Bytes& b : in) {
    ASSERT_TRUE(qm.split(VecBuffer::make(b), 0, nf, out));  // (refused: still the test's)
    for (size_t i = 0; i < nf.size(); ++i) qm.merge(nf[i], 0, out);
    nf.clear();
  }
  qm.merge(hdr, 0, out);
  qm.drain(out);
  ASSERT_EQ(out.size(), in.size() + 1);
  std::multiset<Bytes> got, want(in.begin(), in.end());
  want.insert(pkt(1, 1400));
  for (size_t i = 0; i < out.size(); ++i) {
    got.insert(out[i]->bytes);
    VecBuffer::free(out[i]);
  }
  EXPECT_TRUE(got == want);
  EXPECT_EQ(qm.counters().packet_drops(), 0u);
}

}  // namespace
}  // namespace nfpark::park
