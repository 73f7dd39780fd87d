// Slicer: an NF that re-marks the DSCP of a sliced header packet (a meter colouring it) must not
// turn it into a header-only frame on the wire. The splice never looks at the DSCP: it
// recognises the packet by its length (shorter than its IP header says) or by its escape token,
// splices it, and keeps the NF's DSCP.
#include <gtest/gtest.h>

#include "core/bytes.h"
#include "core/checksum.h"
#include "core/packet_builder.h"
#include "park/slicer.h"
#include "park/slicer_fixtures.h"
#include "park/slicer_token.h"
#include "park/vec_buffer.h"

namespace nfpark::park {
namespace {

using testing::VecBuffer;
using testing::VecPkt;

using testing::udp4;

// What a meter does: set the DSCP, patch the IPv4 header checksum.
void remark(VecPkt* p, uint8_t dscp) {
  PacketLayout L = parse_packet(p->bytes.data(), uint32_t(p->bytes.size()));
  write_dscp(p->bytes.data(), L, dscp);
}

TEST(SlicerRemark, SlicedPacketRemarkedByTheNfIsSplicedWithTheNewDscp) {
  const int64_t live0 = VecBuffer::live;
  {
    Slicer<VecBuffer> s(SlicerConfig{});
    Emitter<VecPkt*> host, wire;
    auto orig = udp4(1200, 1, 0);
    s.split(VecBuffer::make(orig), 0, host, wire);
    ASSERT_EQ(host.size(), 1u);
    VecPkt* h = host[0];
    ASSERT_LT(h->bytes.size(), orig.size()) << "sliced";
    remark(h, 10);  // AF11: no longer DSCP 63
    s.merge(h, wire);
    ASSERT_EQ(wire.size(), 1u);
    VecPkt* out = wire[0];
    auto expect = orig;
    PacketLayout L = parse_packet(expect.data(), uint32_t(expect.size()));
    write_dscp(expect.data(), L, 10);
    EXPECT_EQ(out->bytes, expect) << "whole frame, the NF's DSCP, valid checksums";
    EXPECT_TRUE(verify_checksums(out->bytes.data(),
                                 parse_packet(out->bytes.data(), uint32_t(out->bytes.size()))));
    EXPECT_EQ(s.counters().spliced, 1u);
    VecBuffer::free(out);
  }
  EXPECT_EQ(VecBuffer::live, live0);
}

TEST(SlicerRemark, EscapedWirePacketRemarkedByTheNfLosesItsEscapeToken) {
  const int64_t live0 = VecBuffer::live;
  {
    Slicer<VecBuffer> s(SlicerConfig{});
    Emitter<VecPkt*> host, wire;
    auto orig = udp4(200, 2, kSliceDscp);
    orig.resize(60);  // a header-only capture (IP length above the frame): escaped
    s.split(VecBuffer::make(orig), 0, host, wire);
    ASSERT_EQ(host.size(), 1u);
    EXPECT_EQ(host[0]->bytes.size(), orig.size() + 8);
    remark(host[0], 10);
    s.merge(host[0], wire);
    ASSERT_EQ(wire.size(), 1u);
    auto expect = orig;
    PacketLayout L = parse_packet(expect.data(), uint32_t(expect.size()));
    write_dscp(expect.data(), L, 10);
    EXPECT_EQ(wire[0]->bytes, expect);
    VecBuffer::free(wire[0]);
  }
  EXPECT_EQ(VecBuffer::live, live0);
}

TEST(SlicerRemark, UnrelatedWholePacketsStillPassUntouched) {
  Slicer<VecBuffer> s(SlicerConfig{});
  Emitter<VecPkt*> wire;
  auto pkt = udp4(300, 3, 10);
  s.merge(VecBuffer::make(pkt), wire);
  ASSERT_EQ(wire.size(), 1u);
  EXPECT_EQ(wire[0]->bytes, pkt);
  EXPECT_EQ(s.counters().passed, 1u);
  VecBuffer::free(wire[0]);
}

}  // namespace
}  // namespace nfpark::park
