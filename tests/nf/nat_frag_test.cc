// NAT and IPv4 fragments, without reassembly: the first fragment (it carries the ports) uses
// or creates the flow's mapping; the others follow it by (source, destination, protocol, IP id).
// A fragment that cannot follow is dropped under a counter that says why.
#include <gtest/gtest.h>

#include "core/bytes.h"
#include "nat_packets.h"
#include "nf/nat.h"
#include "nf_harness.h"

namespace nfpark::nf {
namespace {
using testing::Bytes;
using testing::counter;
using testing::ip4;
using testing::kL3;

const uint32_t kExt = ip4(198, 18, 0, 1);
const uint32_t kIn = ip4(10, 0, 0, 5), kRemote = ip4(203, 0, 113, 9);

NatConfig one_address() {
  NatConfig c;
  c.external = {kExt};
  return c;
}
uint32_t src_ip(const Bytes& b) {
  return load_be32(b.data() + kL3 + 12);
}
uint32_t dst_ip(const Bytes& b) {
  return load_be32(b.data() + kL3 + 16);
}
// A UDP datagram of 3000 B payload in three fragments (1480 + 1480 + 48 B of IP payload).
std::vector<Bytes> udp_fragments(uint32_t src, uint32_t dst, uint16_t sp, uint16_t dp,
                                 uint16_t ip_id) {
  Bytes whole = PacketBuilder().ipv4(src, dst).udp(sp, dp).payload_size(3000).build();
  store_be16(whole.data() + kL3 + 4, ip_id);
  store_be16(whole.data() + kL3 + 6, 0);
  testing::fix_ipv4_checksum(whole);
  return testing::fragments(whole, 1480);
}
std::vector<Verdict> run(testing::Twin& twin, std::vector<Bytes>& burst, Nanos now) {
  return twin.run(burst, now);
}

TEST(NatFragments, InOrderFollowTheFirstBothWays) {
  auto twin = testing::make_twin<Nat>(one_address());
  std::vector<Bytes> out = udp_fragments(kIn, kRemote, 4000, 9000, 0x1234);
  ASSERT_EQ(out.size(), 3u);
  for (Verdict v : run(twin, out, 0)) EXPECT_EQ(v, Verdict::kPass);
  for (const Bytes& f : out) EXPECT_EQ(src_ip(f), kExt);
  EXPECT_TRUE(testing::reassembled_checksums_ok(out));
  const uint16_t p = load_be16(out[0].data() + kL3 + 20);
  EXPECT_NE(p, 4000);

  std::vector<Bytes> in = udp_fragments(kRemote, kExt, 9000, p, 0x9999);
  for (Verdict v : run(twin, in, kSecond)) EXPECT_EQ(v, Verdict::kPass);
  for (const Bytes& f : in) EXPECT_EQ(dst_ip(f), kIn);
  EXPECT_EQ(load_be16(in[0].data() + kL3 + 22), 4000);
  EXPECT_TRUE(testing::reassembled_checksums_ok(in));
  EXPECT_EQ(counter(twin.whole(), "frag_followed"), 4u);
  EXPECT_EQ(counter(twin.whole(), "flows_created"), 1u);
}

// Within one burst, order does not matter: first fragments are translated before the others.
TEST(NatFragments, OutOfOrderWithinABurst) {
  auto twin = testing::make_twin<Nat>(one_address());
  std::vector<Bytes> f = udp_fragments(kIn, kRemote, 4000, 9000, 7);
  std::vector<Bytes> burst = {f[2], f[1], f[0]};
  for (Verdict v : run(twin, burst, 0)) EXPECT_EQ(v, Verdict::kPass);
  for (const Bytes& b : burst) EXPECT_EQ(src_ip(b), kExt);
  EXPECT_TRUE(testing::reassembled_checksums_ok(burst));
  EXPECT_EQ(counter(twin.whole(), "drop.frag_no_first"), 0u);
}

// Across bursts, a fragment that arrives before its first has nothing to follow: dropped
// (nothing is held; the sender's retransmission recovers) — the rest of the datagram passes.
TEST(NatFragments, BeforeItsFirstAcrossBursts) {
  auto twin = testing::make_twin<Nat>(one_address());
  std::vector<Bytes> f = udp_fragments(kIn, kRemote, 4000, 9000, 8);
  EXPECT_EQ(twin.run1(f[1], 0), Verdict::kDrop);
  EXPECT_EQ(counter(twin.whole(), "drop.frag_no_first"), 1u);
  EXPECT_EQ(twin.run1(f[0], 1), Verdict::kPass);
  EXPECT_EQ(twin.run1(f[2], 2), Verdict::kPass);
  EXPECT_EQ(src_ip(f[2]), kExt);
  EXPECT_EQ(counter(twin.whole(), "frag_followed"), 1u);
}

TEST(NatFragments, StateExpiresAfterFragTimeout) {
  NatConfig c = one_address();
  c.frag_timeout = kSecond;
  auto twin = testing::make_twin<Nat>(c);
  std::vector<Bytes> f = udp_fragments(kIn, kRemote, 4000, 9000, 9);
  EXPECT_EQ(twin.run1(f[0], 0), Verdict::kPass);
  EXPECT_EQ(twin.run1(f[1], kSecond / 2), Verdict::kPass);
  EXPECT_EQ(twin.run1(f[2], 2 * kSecond), Verdict::kDrop);
  EXPECT_EQ(counter(twin.whole(), "drop.frag_expired"), 1u);
}

// The NAT dropped the first fragment (no mapping for an inbound datagram): the rest follow it.
TEST(NatFragments, FollowTheirFirstIntoTheDrop) {
  auto twin = testing::make_twin<Nat>(one_address());
  std::vector<Bytes> in = udp_fragments(kRemote, kExt, 9000, 4444, 10);
  for (Verdict v : run(twin, in, 0)) EXPECT_EQ(v, Verdict::kDrop);
  EXPECT_EQ(counter(twin.whole(), "drop.no_mapping"), 1u);
  EXPECT_EQ(counter(twin.whole(), "drop.frag_first_dropped"), 2u);
}

// A first fragment the NAT cannot read (TCP data offset below 5) is dropped as malformed; the
// rest of its datagram follows it.
TEST(NatFragments, FollowAMalformedFirstIntoTheDrop) {
  auto twin = testing::make_twin<Nat>(one_address());
  Bytes whole = PacketBuilder().ipv4(kIn, kRemote).tcp(4000, 80).payload_size(3000).build();
  store_be16(whole.data() + kL3 + 6, 0);
  testing::fix_ipv4_checksum(whole);
  std::vector<Bytes> f = testing::fragments(whole, 1480);
  f[0][kL3 + 20 + 12] = 0x20;
  for (Verdict v : run(twin, f, 0)) EXPECT_EQ(v, Verdict::kDrop);
  EXPECT_EQ(counter(twin.whole(), "drop.malformed"), 1u);
  EXPECT_EQ(counter(twin.whole(), "drop.frag_first_dropped"), 2u);
}

// A bounded table: with room for 16 datagrams, the 17th+ evict the oldest (counted), whose
// later fragments then have nothing to follow.
TEST(NatFragments, BoundedStateEvictsTheOldest) {
  NatConfig c = one_address();
  c.frag_states = 16;
  auto twin = testing::make_twin<Nat>(c);
  std::vector<std::vector<Bytes>> dgs;
  for (uint16_t i = 0; i < 64; ++i) {
    dgs.push_back(udp_fragments(kIn, kRemote, 4000, 9000, uint16_t(100 + i)));
    ASSERT_EQ(twin.run1(dgs.back()[0], Nanos(i)), Verdict::kPass);
  }
  EXPECT_GE(counter(twin.whole(), "frag_evicted"), 48u);
  EXPECT_EQ(twin.run1(dgs[0][1], 100), Verdict::kDrop);  // the oldest is gone
  EXPECT_EQ(counter(twin.whole(), "drop.frag_no_first"), 1u);
  EXPECT_EQ(twin.run1(dgs[63][1], 100), Verdict::kPass);  // the newest is there
  EXPECT_EQ(src_ip(dgs[63][1]), kExt);
}

// Same IP id from two inside hosts: two datagrams, two states.
TEST(NatFragments, KeyedBySourceDestinationProtocolAndId) {
  auto twin = testing::make_twin<Nat>(one_address());
  std::vector<Bytes> a = udp_fragments(kIn, kRemote, 4000, 9000, 77);
  std::vector<Bytes> b = udp_fragments(ip4(10, 0, 0, 6), kRemote, 4000, 9000, 77);
  std::vector<Bytes> burst = {a[0], b[0], b[1], a[1], a[2], b[2]};
  for (Verdict v : run(twin, burst, 0)) EXPECT_EQ(v, Verdict::kPass);
  EXPECT_TRUE(testing::reassembled_checksums_ok({burst[0], burst[3], burst[4]}));
  EXPECT_TRUE(testing::reassembled_checksums_ok({burst[1], burst[2], burst[5]}));
  EXPECT_NE(load_be16(burst[0].data() + kL3 + 20), load_be16(burst[1].data() + kL3 + 20));
}

// A ping larger than the MTU: ICMP echo fragments follow the first's identifier mapping.
TEST(NatFragments, FragmentedEcho) {
  auto twin = testing::make_twin<Nat>(one_address());
  Bytes whole = PacketBuilder().ipv4(kIn, kRemote).icmp_echo(0x4242, 1).payload_size(4000).build();
  store_be16(whole.data() + kL3 + 6, 0);
  testing::fix_ipv4_checksum(whole);
  std::vector<Bytes> f = testing::fragments(whole, 1480);
  for (Verdict v : run(twin, f, 0)) EXPECT_EQ(v, Verdict::kPass);
  for (const Bytes& b : f) EXPECT_EQ(src_ip(b), kExt);
  EXPECT_TRUE(testing::reassembled_checksums_ok(f));
}

// Fragments of other protocols follow the other-protocol policy, like their first.
TEST(NatFragments, OtherProtocolsFollowThePolicy) {
  for (OtherProtocols pol : {OtherProtocols::kPass, OtherProtocols::kDrop}) {
    NatConfig c = one_address();
    c.other = pol;
    auto twin = testing::make_twin<Nat>(c);
    Bytes gre = testing::other_proto("10.0.0.5", "203.0.113.9", 47, 3000);
    store_be16(gre.data() + kL3 + 6, 0);
    testing::fix_ipv4_checksum(gre);
    std::vector<Bytes> f = testing::fragments(gre, 1480);
    std::vector<Bytes> copy = f;
    const Verdict want = pol == OtherProtocols::kPass ? Verdict::kPass : Verdict::kDrop;
    for (Verdict v : run(twin, f, 0)) EXPECT_EQ(v, want);
    if (pol == OtherProtocols::kPass) {
      EXPECT_EQ(f, copy);
    }
    EXPECT_EQ(counter(twin.whole(), pol == OtherProtocols::kPass ? "other_passed" : "drop.other"),
              3u);
  }
}

}  // namespace
}  // namespace nfpark::nf
