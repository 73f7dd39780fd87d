#include "nf/aes.h"

#include <gtest/gtest.h>

#include <cstring>

#include "core/checksum.h"
#include "core/packet_builder.h"
#include "nf_harness.h"

namespace nfpark::nf {
namespace {

std::unique_ptr<Aes> make(AesConfig::Op op, AesConfig::Field f = AesConfig::Field::kIpAddrs) {
  AesConfig c;
  c.op = op;
  c.field = f;
  std::string e;
  auto a = Aes::create(c, e);
  EXPECT_TRUE(a) << e;
  return a;
}

void run(Nf& nf, std::vector<std::vector<uint8_t>*> bufs) {
  std::vector<PacketView> v;
  for (auto* b : bufs) v.push_back(testing::view_of(*b, uint32_t(b->size()), uint32_t(b->size())));
  std::vector<Verdict> verdicts(v.size(), Verdict::kPass);
  nf.process(v, verdicts, 0);
}

TEST(Aes, Fips197KnownAnswer) {
  auto a = make(AesConfig::Op::kFingerprint);
  uint8_t pt[16], ct[16];
  for (int i = 0; i < 16; ++i) pt[i] = uint8_t(i * 0x11);
  a->encrypt_blocks(pt, ct, 1);
  const uint8_t want[16] = {0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30,
                            0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5, 0x5a};
  EXPECT_EQ(std::memcmp(ct, want, 16), 0);
}

TEST(Aes, FingerprintIsAesOfTheFiveTupleInOneEvpCallPerBurst) {
  auto a = make(AesConfig::Op::kFingerprint);
  auto p4 = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").tcp(1234, 80).build();
  auto p6 = PacketBuilder().ipv6("2001:db8::1", "2001:db8::2").udp(53, 5353).build();
  auto q4 = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").tcp(1234, 81).build();
  run(*a, {&p4, &p6, &q4});
  // IPv4: one block [4, 6, 04d2, 0050, 0a000001, 0a000002, 0, 0].
  uint8_t blk[16] = {4, 6, 0x04, 0xd2, 0x00, 0x50, 10, 0, 0, 1, 10, 0, 0, 2, 0, 0}, out[16];
  auto ref = make(AesConfig::Op::kFingerprint);
  ref->encrypt_blocks(blk, out, 1);
  EXPECT_EQ(std::memcmp(p4.data() + 6, out, 6), 0);
  EXPECT_NE(std::memcmp(q4.data() + 6, out, 6), 0);  // another dport, another fingerprint
  // IPv6: CBC-MAC over [6, 17, 0035, 14e9, 0...], src, dst.
  uint8_t b6[16] = {6, 17, 0x00, 0x35, 0x14, 0xe9};
  ref->encrypt_blocks(b6, out, 1);
  for (int step = 0; step < 2; ++step) {
    const uint8_t* addr = p6.data() + 14 + (step == 0 ? 8 : 24);
    for (int i = 0; i < 16; ++i) out[i] ^= addr[i];
    ref->encrypt_blocks(out, out, 1);
  }
  EXPECT_EQ(std::memcmp(p6.data() + 6, out, 6), 0);
  CounterMap c;
  a->counters(c.sink());
  EXPECT_EQ(c.get("done"), 3u);
  EXPECT_EQ(c.get("evp_calls"), 3u);  // 1 for all first blocks + 2 CBC steps for the IPv6 one
}

TEST(Aes, EncryptChangesFieldKeepsChecksumsAndDecryptInverts) {
  struct Case {
    AesConfig::Field field;
    PacketBuilder b;
  };
  std::vector<Case> cases;
  cases.push_back({AesConfig::Field::kIpAddrs,
                   PacketBuilder().ipv4("10.0.0.1", "192.168.7.9").tcp(1, 2).payload_size(300)});
  cases.push_back({AesConfig::Field::kIpAddrs,
                   PacketBuilder().ipv4("10.0.0.1", "192.168.7.9").udp(1, 2).payload_size(31)});
  cases.push_back({AesConfig::Field::kIpAddrs,
                   PacketBuilder().ipv6("2001:db8::1", "fe80::2").tcp(1, 2).payload_size(99)});
  cases.push_back(
      {AesConfig::Field::kIpAddrs,
       PacketBuilder().ipv6("2001:db8::1", "fe80::2").icmp_echo(7, 1).payload_size(40)});
  cases.push_back({AesConfig::Field::kL4Ports,
                   PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(4000, 53).payload_size(64)});
  cases.push_back(
      {AesConfig::Field::kL4Ports,
       PacketBuilder().ipv6("2001:db8::1", "2001:db8::9").tcp(4000, 443).payload_size(64)});
  for (auto& c : cases) {
    const auto orig = c.b.build();
    const uint32_t n = uint32_t(orig.size()), hdr = c.b.header_bytes();
    auto enc = make(AesConfig::Op::kEncrypt, c.field), dec = make(AesConfig::Op::kDecrypt, c.field);
    auto whole = orig;
    run(*enc, {&whole});
    EXPECT_NE(whole, orig);
    EXPECT_TRUE(verify_checksums(whole.data(), parse_packet(whole.data(), n)));
    // Header-only: same bytes after the merge.
    auto split = orig;
    std::vector<uint8_t> head(split.begin(), split.begin() + hdr);
    auto enc2 = make(AesConfig::Op::kEncrypt, c.field);
    std::vector<PacketView> v{testing::view_of(head, hdr, n)};
    std::vector<Verdict> verdicts{Verdict::kPass};
    enc2->process(v, verdicts, 0);
    std::memcpy(split.data(), head.data(), hdr);
    EXPECT_EQ(split, whole);
    run(*dec, {&whole});
    EXPECT_EQ(whole, orig);
  }
}

TEST(Aes, ZeroUdpChecksumStaysZeroAndBadKeyIsAnError) {
  auto p = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").udp(1, 2).payload_size(20).build();
  auto L = parse_packet(p.data(), uint32_t(p.size()));
  p[L.l4_off + 6] = p[L.l4_off + 7] = 0;
  auto a = make(AesConfig::Op::kEncrypt);
  run(*a, {&p});
  EXPECT_EQ(p[L.l4_off + 6] | p[L.l4_off + 7], 0);
  EXPECT_TRUE(verify_checksums(p.data(), L));
  AesConfig c;
  c.key_hex = "00112233";
  std::string e;
  EXPECT_FALSE(Aes::create(c, e));
  EXPECT_NE(e.find("32 (AES-128) or 64"), std::string::npos);
}

}  // namespace
}  // namespace nfpark::nf
