// The NAT's [nf.nat] keys as `nfpark run` reads them (registry.cc): the keys this NAT adds,
// their defaults and their errors.
#include <gtest/gtest.h>
#include <toml++/toml.h>

#include "nat_packets.h"
#include "nf/nat.h"
#include "nf/registry.h"
#include "nf_harness.h"

namespace nfpark::nf {
namespace {
using testing::Bytes;
using testing::counter;

std::unique_ptr<Nf> nat_from(std::string_view text, std::string& err) {
  toml::table t = toml::parse(text);
  return make_nf("nat", &t, err);
}

Verdict run1(Nf& nf, Bytes& b) {
  PacketView v = testing::view_of(b, uint32_t(b.size()), uint32_t(b.size()));
  Verdict d = Verdict::kPass;
  nf.process({&v, 1}, {&d, 1}, 0);
  return d;
}

TEST(NatConfig, OtherProtocolsKey) {
  std::string err;
  for (const char* pol : {"pass", "drop"}) {
    auto nat = nat_from(std::string("other_protocols = \"") + pol + "\"", err);
    ASSERT_NE(nat, nullptr) << err;
    Bytes gre = testing::other_proto("10.0.0.1", "9.9.9.9", 47);
    EXPECT_EQ(run1(*nat, gre), pol[0] == 'p' ? Verdict::kPass : Verdict::kDrop);
  }
  EXPECT_EQ(nat_from("other_protocols = \"translate\"", err), nullptr);
  EXPECT_EQ(err, "[nf.nat] other_protocols: expected \"pass\" or \"drop\", got 'translate'");
  EXPECT_EQ(nat_from("other_protocols = 1", err), nullptr);
  EXPECT_NE(err.find("[nf.nat] other_protocols: expected"), std::string::npos) << err;
}

TEST(NatConfig, FragmentKeys) {
  std::string err;
  auto nat = nat_from("frag_states = 64\nfrag_timeout_s = 0.5", err);
  ASSERT_NE(nat, nullptr) << err;
  EXPECT_EQ(nat_from("frag_states = 2", err), nullptr);
  EXPECT_EQ(err, "[nf.nat] frag_states: expected an integer in 4..1048576, got 2");
  EXPECT_EQ(nat_from("frag_timeout_s = -1", err), nullptr);
  EXPECT_NE(err.find("[nf.nat] frag_timeout_s"), std::string::npos) << err;
}

// With no [nf.nat] table the pool is 198.18.0.1-198.18.0.16: 16 x 64512 ports.
TEST(NatConfig, DefaultPoolIsSixteenAddresses) {
  const std::vector<uint32_t> ext = NatConfig{}.external;
  ASSERT_EQ(ext.size(), 16u);
  for (uint32_t i = 0; i < 16; ++i) EXPECT_EQ(ext[i], testing::ip4(198, 18, 0, uint8_t(i + 1)));
  std::string err;
  auto nat = make_nf("nat", nullptr, err);
  ASSERT_NE(nat, nullptr) << err;
  Bytes b = PacketBuilder().ipv4("10.0.0.1", "8.8.8.8").udp(1, 2).payload_size(10).build();
  EXPECT_EQ(run1(*nat, b), Verdict::kPass);
  const uint32_t src = load_be32(b.data() + 26);
  EXPECT_NE(std::find(ext.begin(), ext.end(), src), ext.end());
  EXPECT_EQ(counter(*nat, "outbound"), 1u);
}

}  // namespace
}  // namespace nfpark::nf
