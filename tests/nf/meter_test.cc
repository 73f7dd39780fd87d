// Meter against RFC 2697/2698 by hand, with exact virtual time.
#include "nf/meter.h"

#include <gtest/gtest.h>

#include <cstring>

#include "core/checksum.h"
#include "core/packet_builder.h"
#include "nf_harness.h"

namespace nfpark::nf {
namespace {

MeterConfig sr(uint64_t cir, uint64_t cbs, uint64_t ebs) {
  MeterConfig c;
  c.cir = cir, c.cbs = cbs, c.ebs = ebs;
  return c;
}

TEST(TcmBuckets, SrTcmByHand) {
  // CIR 1000 B/s = 1 byte per ms; CBS 3000, EBS 2000. Buckets start full (RFC 2697 §3).
  MeterConfig c = sr(1000, 3000, 2000);
  TcmBuckets b;
  b.reset(c, 0);
  EXPECT_EQ(b.mark(c, 0, 1500), Colour::kGreen);   // Tc 3000 -> 1500
  EXPECT_EQ(b.mark(c, 0, 1500), Colour::kGreen);   // Tc 0
  EXPECT_EQ(b.mark(c, 0, 1500), Colour::kYellow);  // Te 2000 -> 500
  EXPECT_EQ(b.mark(c, 0, 600), Colour::kRed);      // Tc 0, Te 500 < 600
  EXPECT_EQ(b.mark(c, 0, 500), Colour::kYellow);   // Te 0
  // 1.2 s later: Tc += 1200 (not full, nothing spills to Te).
  VirtualClock clk;
  clk.advance(1200 * kMilli);
  EXPECT_EQ(b.mark(c, clk.now(), 1201), Colour::kRed);
  EXPECT_EQ(b.c_bytes(), 1200u);
  EXPECT_EQ(b.mark(c, clk.now(), 1200), Colour::kGreen);
  // 4 s later: 4000 tokens, Tc fills to 3000, 1000 spill into Te (0 -> 1000).
  clk.advance(4 * kSecond);
  EXPECT_EQ(b.mark(c, clk.now(), 1), Colour::kGreen);
  EXPECT_EQ(b.c_bytes(), 2999u);
  EXPECT_EQ(b.other_bytes(), 1000u);
  // Sub-byte refills accumulate exactly: 999 us = 0.999 bytes, twice = 1.998 -> 1 whole byte.
  clk.advance(999 * kMicro);
  b.mark(c, clk.now(), 0);
  EXPECT_EQ(b.c_bytes(), 2999u);
  clk.advance(999 * kMicro);
  b.mark(c, clk.now(), 0);
  EXPECT_EQ(b.c_bytes(), 3000u);  // capped at CBS, the rest spilled
}

TEST(TcmBuckets, TrTcmByHand) {
  // CIR 1000 B/s, CBS 1000; PIR 2000 B/s, PBS 2000 (RFC 2698 colour-blind).
  MeterConfig c;
  c.mode = MeterConfig::Mode::kTrTcm;
  c.cir = 1000, c.cbs = 1000, c.pir = 2000, c.pbs = 2000;
  TcmBuckets b;
  b.reset(c, 0);
  EXPECT_EQ(b.mark(c, 0, 800), Colour::kGreen);   // Tp 1200, Tc 200
  EXPECT_EQ(b.mark(c, 0, 800), Colour::kYellow);  // Tp 400, Tc 200 (Tc untouched)
  EXPECT_EQ(b.mark(c, 0, 800), Colour::kRed);     // Tp 400 < 800: nothing taken
  EXPECT_EQ(b.other_bytes(), 400u);
  EXPECT_EQ(b.c_bytes(), 200u);
  // 0.5 s: Tp += 1000 -> 1400, Tc += 500 -> 700.
  EXPECT_EQ(b.mark(c, 500 * kMilli, 700), Colour::kGreen);   // Tp 700, Tc 0
  EXPECT_EQ(b.mark(c, 500 * kMilli, 700), Colour::kYellow);  // Tp 0
  EXPECT_EQ(b.mark(c, 500 * kMilli, 1), Colour::kRed);
}

TEST(Meter, CountsWireBytesMarksDscpAndDropsRed) {
  MeterConfig c = sr(1000, 1500, 1000);
  c.drop_red = true;
  std::string e;
  auto m = Meter::create(c, e);
  ASSERT_TRUE(m) << e;
  // Three 1000-byte frames held as 54-byte headers: green (1500->500), yellow (1000->0), red.
  PacketBuilder pb;
  pb.ipv4("10.0.0.1", "10.0.0.2").tcp(1, 2).frame_size(1000);
  std::vector<std::vector<uint8_t>> bufs(3, pb.build());
  const uint32_t hdr = pb.header_bytes();
  std::vector<PacketView> v;
  for (auto& b : bufs) v.push_back(testing::view_of(b, hdr, 1000));
  std::vector<Verdict> verdicts(3, Verdict::kPass);
  m->process(v, verdicts, 0);
  EXPECT_EQ(verdicts[0], Verdict::kPass);
  EXPECT_EQ(verdicts[1], Verdict::kPass);
  EXPECT_EQ(verdicts[2], Verdict::kDrop);
  EXPECT_EQ(bufs[0][15] >> 2, 10);  // AF11
  EXPECT_EQ(bufs[1][15] >> 2, 12);  // AF12
  // Header-only marking equals marking the whole packet, checksums verify after the merge.
  auto whole = pb.build();
  auto m2 = Meter::create(c, e);
  std::vector<PacketView> w{testing::view_of(whole, uint32_t(whole.size()), 1000)};
  std::vector<Verdict> vw{Verdict::kPass};
  m2->process(w, vw, 0);
  auto merged = pb.build();
  std::memcpy(merged.data(), bufs[0].data(), hdr);
  EXPECT_EQ(merged, whole);
  EXPECT_TRUE(
      verify_checksums(merged.data(), parse_packet(merged.data(), uint32_t(merged.size()))));
  CounterMap cm;
  m->counters(cm.sink());
  EXPECT_EQ(cm.get("green"), 1u);
  EXPECT_EQ(cm.get("yellow"), 1u);
  EXPECT_EQ(cm.get("drop.red"), 1u);
}

TEST(Meter, PerFlowBucketsAreIndependentAndIpv6DscpIsSet) {
  MeterConfig c = sr(1000, 1000, 0);
  c.per_flow = true;
  c.max_flows = 16;
  std::string e;
  auto m = Meter::create(c, e);
  ASSERT_TRUE(m) << e;
  auto a = PacketBuilder().ipv6("2001:db8::1", "2001:db8::2").udp(1, 2).frame_size(1000).build();
  auto b = PacketBuilder().ipv6("2001:db8::1", "2001:db8::3").udp(1, 2).frame_size(1000).build();
  auto a2 = a;
  std::vector<PacketView> v{testing::view_of(a, uint32_t(a.size()), 1000),
                            testing::view_of(b, uint32_t(b.size()), 1000),
                            testing::view_of(a2, uint32_t(a2.size()), 1000)};
  std::vector<Verdict> verdicts(3, Verdict::kPass);
  m->process(v, verdicts, 0);
  auto dscp6 = [](const std::vector<uint8_t>& p) {
    return ((p[14] & 0x0F) << 4 | p[15] >> 4) >> 2;
  };
  EXPECT_EQ(dscp6(a), 10);   // flow a: green
  EXPECT_EQ(dscp6(b), 10);   // flow b has its own full bucket: green
  EXPECT_EQ(dscp6(a2), 14);  // flow a again: red (EBS 0)
  EXPECT_EQ(a[14] >> 4, 6);  // version intact
}

TEST(Meter, ConfigErrors) {
  MeterConfig c;
  c.mode = MeterConfig::Mode::kTrTcm;
  c.pir = c.cir - 1;
  std::string e;
  EXPECT_FALSE(Meter::create(c, e));
  EXPECT_NE(e.find("pir >= cir"), std::string::npos);
  MeterConfig d;
  d.red_dscp = 64;
  EXPECT_FALSE(Meter::create(d, e));
}

}  // namespace
}  // namespace nfpark::nf
