// Frames of any size and truncated frames on real mbufs: the pcap wire (feeder and writer) moves
// chains of any length up to the snaplen and keeps the wire length of truncated records; every
// parking mode's split and merge work on chains (parsing only the first segment), send whole
// what they cannot describe (frames above 65535 B), and give the NF the wire length.
#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <unistd.h>

#include <cstring>

#include "core/bytes.h"
#include "core/checksum.h"
#include "core/packet_builder.h"
#include "dp/mbuf_env.h"
#include "dp/mbuf_ops.h"
#include "dp/pcap_wire.h"
#include "dp/port.h"
#include "park/nf_endpoint.h"
#include "park/payload_park.h"
#include "park/queue_mem.h"
#include "park/slicer.h"
#include "trace/pcap_writer.h"

namespace nfpark::dp {
namespace {

using fixture::bytes;

std::string tmp(const std::string& name) {
  return ::testing::TempDir() + "nfpark_frames_" + std::to_string(getpid()) + "_" + name;
}

// An IPv4/TCP frame of `frame` bytes (at most 65549: the IPv4 length field's limit) whose
// payload carries its id; above that, an unknown-EtherType frame of that many bytes.
std::vector<uint8_t> frame_of(uint32_t frame, uint64_t id) {
  if (frame <= 65535 + 14)
    return PacketBuilder()
        .ipv4("10.1.0.1", "10.1.0.2")
        .tcp(4000, 80)
        .frame_size(frame)
        .packet_id(id)
        .build();
  std::vector<uint8_t> f(frame);
  for (uint32_t i = 0; i < frame; ++i) f[i] = uint8_t(i * 13 + id);
  store_be16(f.data() + 12, 0x88B5);  // local experimental EtherType
  return f;
}

// A chain of 2 KiB segments holding `f`, `cut` bytes cut off by the capture.
rte_mbuf* chain_of(const std::vector<uint8_t>& f, uint32_t cut = 0) {
  rte_mbuf* head = nullptr;
  for (size_t off = 0; off < f.size();) {
    rte_mbuf* s = rte_pktmbuf_alloc(MbufOps::pools.packets);
    const uint32_t take = uint32_t(std::min<size_t>(rte_pktmbuf_tailroom(s), f.size() - off));
    std::memcpy(rte_pktmbuf_append(s, uint16_t(take)), f.data() + off, take);
    off += take;
    if (!head) {
      head = s;
    } else {
      rte_pktmbuf_chain(head, s);
    }
  }
  MbufMeta::seq(head) = 1;
  MbufMeta::ts(head) = 0;
  MbufMeta::cut(head) = cut;
  return head;
}

class FramesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { fixture::setup_mbuf_env(); }
  void TearDown() override { EXPECT_TRUE(fixture::pools_full()); }
};

struct Rec {
  std::vector<uint8_t> data;
  uint32_t wire;
};

std::vector<Rec> read_pcap(const std::string& path) {
  std::vector<Rec> v;
  trace::TraceReader r;
  EXPECT_TRUE(r.open(path)) << r.error();
  trace::PacketRecord rec;
  while (r.next(rec) == trace::ReadStatus::kPacket)
    v.push_back({{rec.data, rec.data + rec.len}, rec.wire_len});
  EXPECT_EQ(r.error(), "");
  return v;
}

// Input pcap -> Feeder -> ring -> Writer -> output pcap, with `pad` or not.
std::vector<Rec> through_the_wire(const std::vector<Rec>& in, bool pad,
                                  uint64_t* padded = nullptr) {
  const std::string a = tmp("in.pcap"), b = tmp("out.pcap");
  trace::PcapWriter w;
  EXPECT_TRUE(w.open(a));
  for (size_t i = 0; i < in.size(); ++i)
    w.write(Nanos(i + 1) * kSecond, in[i].data.data(), uint32_t(in[i].data.size()), in[i].wire);
  EXPECT_TRUE(w.close());
  trace::TraceReader r;
  EXPECT_TRUE(r.open(a)) << r.error();
  rte_ring* ring =
      rte_ring_create(("fr" + std::to_string(pad)).c_str(), 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
  EXPECT_NE(ring, nullptr);
  trace::PcapWriter out;
  EXPECT_TRUE(out.open(b));
  Feeder feeder(r, MbufOps::pools.packets, MbufOps::pools.packets, ring, false, pad);
  Writer writer(&out, ring);
  while (!feeder.done()) {
    feeder.retry();
    feeder.feed(0);
    writer.drain();
  }
  writer.drain();
  EXPECT_FALSE(writer.failed);
  EXPECT_EQ(writer.packets, in.size());
  EXPECT_TRUE(out.close());
  rte_ring_free(ring);
  if (padded) *padded = feeder.padded;
  auto v = read_pcap(b);
  std::remove(a.c_str());
  std::remove(b.c_str());
  return v;
}

TEST_F(FramesTest, TheWireCarriesFramesOfAnySizeUpToTheSnaplen) {
  std::vector<Rec> in;
  uint64_t id = 0;
  for (uint32_t n : {60u, 1514u, 2048u, 9014u, 16384u, 16385u, 65549u, 100000u, 262144u})
    in.push_back({frame_of(n, id++), n});
  auto out = through_the_wire(in, false);
  ASSERT_EQ(out.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(out[i].wire, in[i].wire) << i;
    EXPECT_TRUE(out[i].data == in[i].data) << "frame " << i << " of " << in[i].data.size() << " B";
  }
}

TEST_F(FramesTest, TruncatedRecordsKeepTheirWireLengthOrArePadded) {
  const auto whole = PacketBuilder()
                         .ipv4("10.1.0.1", "10.1.0.2")
                         .tcp(4000, 80)
                         .frame_size(1514)
                         .packet_id(3)
                         .build();
  const auto big = frame_of(65549, 4);
  std::vector<Rec> in = {{{whole.begin(), whole.begin() + 96}, 1514},
                         {{big.begin(), big.begin() + 1514}, 65549},
                         {whole, 1514}};
  auto out = through_the_wire(in, false);
  ASSERT_EQ(out.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(out[i].wire, in[i].wire) << i;  // orig_len written back
    EXPECT_TRUE(out[i].data == in[i].data) << i;
  }
  uint64_t padded = 0;
  out = through_the_wire(in, true, &padded);
  EXPECT_EQ(padded, 2u);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].data.size(), 1514u);
  EXPECT_EQ(out[0].wire, 1514u);
  // The captured bytes are kept, but for the TCP checksum (bytes 50-51), recomputed.
  EXPECT_EQ(0, std::memcmp(out[0].data.data(), whole.data(), 50));
  EXPECT_EQ(0, std::memcmp(out[0].data.data() + 52, whole.data() + 52, 96 - 52));
  for (size_t i = 96; i < 1514; ++i) ASSERT_EQ(out[0].data[i], 0) << i;  // zero filler
  const PacketLayout L = parse_packet(out[0].data.data(), 1514);
  EXPECT_TRUE(verify_checksums(out[0].data.data(), L));  // IPv4 kept, TCP recomputed
  EXPECT_EQ(out[1].data.size(), 65549u);
  EXPECT_TRUE(out[2].data == whole);
}

// The NF's view of a packet: its wire length, whatever the mode did to it.
uint32_t nf_wire_len(park::NfEndpoint<MbufOps>& ep, rte_mbuf* h) {
  PacketView v;
  uint32_t tag_at = 0;
  ep.view(h, v, tag_at);
  return v.wire_len;
}

// Each frame size through PayloadPark (park 160 / all), QUEUE-MEM and NFSlicer on chains: the
// header packet's view tells the NF the wire length (captured + cut), the merge gives back the
// very bytes, and frames above 65535 B go whole.
TEST_F(FramesTest, EveryParkingModeSplitsAndMergesChains) {
  for (uint32_t size : {1514u, 9014u, 65549u}) {
    for (uint32_t cut : {0u, 1000u}) {
      const auto f = frame_of(size, size);
      const bool large = size > park::kMaxTaggedFrame;
      for (uint32_t park_bytes : {160u, 0u}) {
        park::ParkConfig c;
        c.park_bytes = park_bytes;
        park::PayloadPark<MbufOps> pp(c);
        park::NfEndpoint<MbufOps> ep(park::TagFormat::kNfpark, true);
        rte_mbuf* m = chain_of(f, cut);
        rte_mbuf* h = pp.split(m, 0);
        ASSERT_NE(h, nullptr);
        EXPECT_EQ(nf_wire_len(ep, h), size + cut) << size;
        EXPECT_EQ(pp.counters().splits, large ? 0u : 1u) << size;
        EXPECT_EQ(pp.counters().not_split_large, large ? 1u : 0u) << size;
        rte_mbuf* o = pp.merge(h, 0);
        ASSERT_NE(o, nullptr);
        EXPECT_TRUE(bytes(o) == f) << size << " park " << park_bytes;
        EXPECT_EQ(MbufMeta::cut(o), cut);
        rte_pktmbuf_free(o);
      }
      {
        park::QueueMemConfig qc;
        qc.batch = 1;
        park::QueueMem<MbufOps> qm(qc);
        park::NfEndpoint<MbufOps> ep(park::TagFormat::kNfpark, true);
        park::Emitter<rte_mbuf*> to_nf, to_out;
        ASSERT_TRUE(qm.split(chain_of(f, cut), 0, to_nf, to_out));
        ASSERT_EQ(to_nf.size(), 1u);
        EXPECT_EQ(nf_wire_len(ep, to_nf[0]), size + cut) << size;
        EXPECT_EQ(qm.counters().not_split_large, large ? 1u : 0u);
        qm.merge(to_nf[0], 0, to_out);
        ASSERT_EQ(to_out.size(), 1u);
        EXPECT_TRUE(bytes(to_out[0]) == f) << size;
        rte_pktmbuf_free(to_out[0]);
      }
      {
        park::Slicer<MbufOps> sl(park::SlicerConfig{});
        park::NfEndpoint<MbufOps> ep(std::nullopt, false, true);
        park::Emitter<rte_mbuf*> host, wire;
        sl.split(chain_of(f, cut), 0, host, wire);
        ASSERT_EQ(host.size(), 1u);
        EXPECT_EQ(sl.counters().sliced, 1u) << size;
        // Sliced: the IP length says the wire length (the capture never cut the IP header).
        EXPECT_EQ(nf_wire_len(ep, host[0]), size) << size;
        sl.merge(host[0], wire);
        ASSERT_EQ(wire.size(), 1u);
        EXPECT_TRUE(bytes(wire[0]) == f) << size;
        rte_pktmbuf_free(wire[0]);
      }
    }
  }
}

TEST_F(FramesTest, WholePacketsTellTheNfTheirWireLength) {
  const auto f = PacketBuilder().ipv4("10.1.0.1", "10.1.0.2").udp(1, 2).frame_size(96).build();
  park::NfEndpoint<MbufOps> plain(std::nullopt, true);
  rte_mbuf* m = chain_of(f, 1418);
  EXPECT_EQ(nf_wire_len(plain, m), 1514u);
  ASSERT_TRUE(fixture::push_vlan(m));  // a header edit does not change what was cut off
  EXPECT_EQ(MbufMeta::cut(m), 1418u);
  EXPECT_EQ(nf_wire_len(plain, m), 1518u);
  rte_pktmbuf_free(m);
}

TEST_F(FramesTest, PortsDropAndCountFramesAboveTheirLimitAndKeepTheRestInOrder) {
  Port a, b;
  std::string err;
  ASSERT_TRUE(Port::ring_pair("frlim", MbufOps::pools.packets, a, b, err, 64)) << err;
  EXPECT_EQ(a.max_frame(), UINT32_MAX);  // in-process rings carry anything
  a.set_max_frame(1518);
  rte_mbuf* in[4] = {chain_of(frame_of(1514, 1)), chain_of(frame_of(9014, 2)),
                     chain_of(frame_of(1518, 3)), chain_of(frame_of(65549, 4))};
  a.tx(in, 4);
  EXPECT_EQ(a.too_long, 2u);
  EXPECT_EQ(a.tx_packets, 2u);
  rte_mbuf* got[8];
  ASSERT_EQ(b.rx(got, 8), 2);
  EXPECT_EQ(got[0]->pkt_len, 1514u);
  EXPECT_EQ(got[1]->pkt_len, 1518u);
  EXPECT_EQ(MbufMeta::seq(got[0]), 1u);  // a ring port keeps the metadata
  rte_pktmbuf_free(got[0]);
  rte_pktmbuf_free(got[1]);
  a.stop();
  b.stop();
}

// A burst's lengths measured once (Port::count_rx) and carried to tx(): the same counts and
// drops as tx() measuring them itself, including a frame above the limit in the burst.
TEST_F(FramesTest, CarriedBurstLengthsCountAsMeasuredOnes) {
  Port a, b;
  std::string err;
  ASSERT_TRUE(Port::ring_pair("frcarry", MbufOps::pools.packets, a, b, err, 64)) << err;
  a.set_max_frame(1518);
  for (bool carried : {false, true}) {
    SCOPED_TRACE(carried);
    rte_mbuf* in[3] = {chain_of(frame_of(1514, 1)), chain_of(frame_of(9014, 2)),
                       chain_of(frame_of(64, 3))};
    Port c;  // counts as a traffic port's rx would
    const BurstLen len = c.count_rx(in, 3);
    EXPECT_EQ(len.bytes, 1514u + 9014 + 64);
    EXPECT_EQ(len.longest, 9014u);
    EXPECT_EQ(c.rx_bytes, len.bytes);
    const uint64_t bytes0 = a.tx_bytes, long0 = a.too_long;
    if (carried)
      a.tx(in, 3, len);
    else
      a.tx(in, 3);
    EXPECT_EQ(a.too_long - long0, 1u);
    EXPECT_EQ(a.tx_bytes - bytes0, 1514u + 64) << "the dropped frame's bytes are not counted";
    rte_mbuf* got[8];
    ASSERT_EQ(b.rx(got, 8), 2);
    EXPECT_EQ(got[0]->pkt_len, 1514u);
    EXPECT_EQ(got[1]->pkt_len, 64u);
    rte_pktmbuf_free(got[0]);
    rte_pktmbuf_free(got[1]);
  }
  a.stop();
  b.stop();
}

TEST_F(FramesTest, PortLimitsByKind) {
  EXPECT_EQ(Port::limit_for("vdev:net_memif0,role=server,socket=/tmp/x.sock", 0), kMemifMaxFrame);
  EXPECT_EQ(Port::limit_for("vdev:net_pcap0,rx_pcap=a.pcap", 0), 65535u);
  // af_packet: the TX frame (framesz - 32) and the interface's MTU + 18; lo's MTU is 65536.
  EXPECT_EQ(Port::limit_for("vdev:net_af_packet0,iface=lo", 0), 2048u - 32);
  EXPECT_EQ(Port::limit_for("vdev:net_af_packet0,iface=lo,framesz=16384", 0), 16384u - 32);
  EXPECT_EQ(Port::limit_for("vdev:net_af_packet0,iface=nfpark_no_such_if,framesz=9216", 0),
            9216u - 32);
}

}  // namespace
}  // namespace nfpark::dp
