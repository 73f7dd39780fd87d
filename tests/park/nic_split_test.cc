// park::NicSplit, nicmem's and split's decisions without DPDK: the cut is max(header_segment,
// L2-L4) and never past the first segment, a frame no longer than that goes as one segment, a
// failed split (no header buffer) goes whole and is counted, and the boundary bytes follow the
// mode and where the payload landed. NicMemory: payloads land in NIC memory while it has room.
#include "park/nic_split.h"

#include <gtest/gtest.h>

#include <map>

#include "core/bytes.h"
#include "core/packet_builder.h"
#include "vec_buffer.h"

namespace nfpark::park {
namespace {

using testing::VecBuffer;
using testing::VecPkt;

VecPkt* udp(uint32_t frame) {
  return VecBuffer::make(
      PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).frame_size(frame).build());
}
VecPkt* tcp_opts(uint32_t frame) {  // Eth 14 + IPv4 20 + TCP 20 + 40 B of options = 94 B
  return VecBuffer::make(PacketBuilder()
                             .ipv4("10.0.0.1", "10.0.0.2")
                             .tcp(1, 2, 0x18, 1, 0, 10)
                             .frame_size(frame)
                             .build());
}

// The engine's mechanics in a test: the header segment is a copy of the first `hdr` bytes; the
// frame keeps its bytes (the test only needs the lengths).
struct FakeSplit {
  std::vector<uint32_t> cuts;
  bool fail = false;
  VecPkt* operator()(VecPkt* f, uint32_t hdr) {
    cuts.push_back(hdr);
    if (fail) return nullptr;
    return f;  // same handle: pkt_len is the frame's, data after the cut = pkt_len - hdr
  }
};

TEST(NicSplit, CutsAtTheHeaderSegmentOrTheL4HeadersWhicheverIsLonger) {
  NicSplit<VecBuffer> ns(HostMode::kNicmem, 64);
  VecPkt* a = udp(1518);  // L2-L4 = 42 < 64
  EXPECT_EQ(ns.cut_at(a), 64u);
  VecPkt* b = tcp_opts(1518);
  EXPECT_EQ(ns.cut_at(b), 94u) << "never cut inside the headers the NF reads";
  VecPkt* c = udp(60);
  EXPECT_EQ(ns.cut_at(c), 0u) << "nothing left for a payload segment";
  NicSplit<VecBuffer> big(HostMode::kSplit, 4000);
  EXPECT_EQ(big.cut_at(a), 0u) << "never past the frame";
  for (VecPkt* p : {a, b, c}) VecBuffer::free(p);
}

// tcpdump's ipv6-rthdr-oobr.pcap, padded (`nfpark run --pad`): a routing header of 392 B put
// L2-L4 at 446 B; the cut ran past the dataplane's 256 B header buffer (a null append, then a
// segfault in nicmem and split). Headers longer than a header segment go as one segment.
TEST(NicSplit, HeadersLongerThanAHeaderSegmentGoWhole) {
  auto frame = [](uint32_t ext_bytes) {
    std::vector<uint8_t> b =
        PacketBuilder().ipv6("fd00::1", "fd00::2").udp(1, 2).payload_size(1000).build();
    std::vector<uint8_t> ext(ext_bytes, 0);  // destination options: UDP next, PadN to the end
    ext[0] = 17, ext[1] = uint8_t(ext_bytes / 8 - 1), ext[2] = 1, ext[3] = uint8_t(ext_bytes - 4);
    b.insert(b.begin() + 54, ext.begin(), ext.end());
    b[20] = 60;  // IPv6 next header: destination options
    store_be16(b.data() + 18, uint16_t(load_be16(b.data() + 18) + ext_bytes));
    return VecBuffer::make(b);
  };
  NicSplit<VecBuffer> ns(HostMode::kNicmem, 64);
  VecPkt* fits = frame(192);  // L2-L4 = 14 + 40 + 192 + 8 = 254 B
  EXPECT_EQ(ns.cut_at(fits), 254u);
  VecPkt* longer = frame(200);  // 262 B
  EXPECT_EQ(l4_header_len(longer->bytes.data(), uint32_t(longer->bytes.size())), 262u);
  EXPECT_GT(262u, kMaxHeaderSegment);
  EXPECT_EQ(ns.cut_at(longer), 0u) << "the NF must read every header: not cut";
  FakeSplit split;
  EXPECT_EQ(ns.to_nf(longer, false, split), longer);
  EXPECT_TRUE(split.cuts.empty());
  for (VecPkt* p : {fits, longer}) VecBuffer::free(p);
}

TEST(NicSplit, NicmemKeepsPayloadsInNicMemoryAndCountsFallbacks) {
  NicSplit<VecBuffer> ns(HostMode::kNicmem, 64);
  FakeSplit split;
  VecPkt* a = udp(1518);
  EXPECT_EQ(ns.to_nf(a, true, split), a);
  EXPECT_EQ(ns.boundary().rx().data_bytes, 64u);
  EXPECT_EQ(ns.boundary().rx().kept_bytes, 1454u);
  EXPECT_EQ(ns.boundary().nf_touched(), 42u);
  ns.to_nf(a, false, split);  // landed in host memory: the pool was empty
  EXPECT_EQ(ns.boundary().nicmem_fallbacks(), 1u);
  EXPECT_EQ(ns.boundary().rx().data_bytes, 64u + 1518u);
  ns.from_nf(64, 1454, true);
  EXPECT_EQ(ns.boundary().tx().data_bytes, 64u);
  EXPECT_EQ(ns.boundary().tx().descriptors, 2u);
  EXPECT_EQ(ns.unsplit(), 0u);
  VecBuffer::free(a);
}

TEST(NicSplit, AFrameThatCannotBeCutGoesAsOneSegment) {
  NicSplit<VecBuffer> ns(HostMode::kSplit, 64);
  FakeSplit split;
  VecPkt* small = udp(60);
  EXPECT_EQ(ns.to_nf(small, false, split), small);
  EXPECT_TRUE(split.cuts.empty()) << "not even tried";
  split.fail = true;  // no header buffer
  VecPkt* a = udp(1000);
  EXPECT_EQ(ns.to_nf(a, false, split), a);
  EXPECT_EQ(split.cuts, std::vector<uint32_t>{64});
  EXPECT_EQ(ns.unsplit(), 2u);
  EXPECT_EQ(ns.boundary().rx().data_bytes, 1060u);
  std::map<std::string, uint64_t> got;
  ns.report([&](std::string_view k, uint64_t v) { got[std::string(k)] = v; });
  EXPECT_EQ(got["not_split_one_segment"], 2u);
  EXPECT_EQ(got["host_boundary.rx_packets"], 2u);
  VecBuffer::free(small);
  VecBuffer::free(a);
}

TEST(NicMemory, PayloadsLandInNicMemoryWhileItHasRoom) {
  NicMemory nm(2);
  EXPECT_TRUE(nm.take());
  EXPECT_TRUE(nm.take());
  EXPECT_FALSE(nm.take()) << "full: host memory (secondary ring)";
  EXPECT_EQ(nm.fallbacks(), 1u);
  nm.give();
  EXPECT_TRUE(nm.take());
  nm.give();
  nm.give();
  EXPECT_TRUE(nm.all_back());
}

// Touched bytes are what the chain reads (HostBoundary::set_reads): the L2-L4 headers when it
// reads the parse, the Ethernet header (macswap), nothing (forward); the cut does not change.
TEST(NicSplit, TouchedBytesAreWhatTheChainReads) {
  for (auto [need, touched] :
       {std::pair{ViewNeed::kHeaders, 42u}, {ViewNeed::kEthernet, 14u}, {ViewNeed::kLengths, 0u}}) {
    NicSplit<VecBuffer> ns(HostMode::kNicmem, 64);
    ns.set_reads(need);
    FakeSplit split;
    VecPkt* a = udp(1518);
    ns.to_nf(a, true, split);
    ns.rx(64, 1454, true, ns.touched(a));  // a frame the NIC cut: the engine asks touched()
    EXPECT_EQ(ns.boundary().nf_touched(), 2 * touched);
    EXPECT_EQ(ns.boundary().rx().data_bytes, 128u);
    VecBuffer::free(a);
  }
  EXPECT_EQ(nf_read_len(ViewNeed::kEthernet, nullptr, 10), 10u);  // no parse: never reads data
  EXPECT_EQ(nf_read_len(ViewNeed::kLengths, nullptr, 1500), 0u);
}

}  // namespace
}  // namespace nfpark::park
