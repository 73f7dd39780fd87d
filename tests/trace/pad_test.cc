// Padding truncated records to their wire length (trace/pad.h): zero filler, IPv4 header
// checksum kept, L4 checksum recomputed only where the capture held the whole L4 header.
#include "trace/pad.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/bytes.h"
#include "core/checksum.h"
#include "core/packet_builder.h"
#include "core/parse.h"
#include "trace/link_layer.h"

namespace nfpark::trace {
namespace {

std::vector<uint8_t> out(kMaxFrame);

TEST(Pad, TruncatedTcpIsRebuiltWithZerosAndAValidChecksum) {
  const auto f =
      PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").tcp(1, 2).frame_size(1514).packet_id(1).build();
  const PadResult r = pad_frame(f.data(), 64, 1514, out.data());
  EXPECT_TRUE(r.padded);
  EXPECT_TRUE(r.checksum_fixed);
  EXPECT_EQ(r.len, 1514u);
  EXPECT_EQ(r.cut, 0u);
  EXPECT_EQ(0, std::memcmp(out.data(), f.data(), 50));  // headers up to the TCP checksum
  EXPECT_EQ(load_be16(out.data() + 24), load_be16(f.data() + 24));  // IPv4 checksum kept
  for (uint32_t i = 64; i < 1514; ++i) ASSERT_EQ(out[i], 0) << i;
  const PacketLayout L = parse_packet(out.data(), r.len);
  EXPECT_TRUE(verify_checksums(out.data(), L));
}

TEST(Pad, UdpWithoutChecksumStaysWithout) {
  auto f = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).frame_size(1000).build();
  store_be16(f.data() + 40, 0);  // UDP/IPv4 checksum 0: none
  const PadResult r = pad_frame(f.data(), 96, 1000, out.data());
  EXPECT_TRUE(r.padded);
  EXPECT_FALSE(r.checksum_fixed);
  EXPECT_EQ(load_be16(out.data() + 40), 0);
}

TEST(Pad, CutInsideAHeaderOrAFragmentKeepsTheCapturedChecksum) {
  const auto v6 = PacketBuilder().ipv6("fd00::1", "fd00::2").tcp(1, 2).frame_size(1514).build();
  PadResult r = pad_frame(v6.data(), 64, 1514, out.data());  // TCP header ends at 74
  EXPECT_TRUE(r.padded);
  EXPECT_FALSE(r.checksum_fixed);
  EXPECT_EQ(0, std::memcmp(out.data(), v6.data(), 64));
  auto frag = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).frame_size(1000).build();
  store_be16(frag.data() + 20, 0x2000);  // MF
  r = pad_frame(frag.data(), 96, 1000, out.data());
  EXPECT_FALSE(r.checksum_fixed);
}

TEST(Pad, WholeFramesAreCopiedAndHugeWireLengthsStopAtTheSnaplen) {
  const auto f = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).frame_size(300).build();
  PadResult r = pad_frame(f.data(), 300, 300, out.data());
  EXPECT_FALSE(r.padded);
  EXPECT_EQ(r.len, 300u);
  EXPECT_EQ(0, std::memcmp(out.data(), f.data(), 300));
  r = pad_frame(f.data(), 96, 1000000, out.data());
  EXPECT_EQ(r.len, kMaxFrame);
  EXPECT_EQ(r.cut, 1000000u - kMaxFrame);
}

}  // namespace
}  // namespace nfpark::trace
