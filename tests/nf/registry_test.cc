#include "nf/registry.h"

#include <gtest/gtest.h>
#include <toml++/toml.h>

#include "core/bytes.h"
#include "nf/nat.h"
#include "nf/simple.h"
#include "nf_harness.h"

namespace nfpark::nf {
namespace {
using testing::Bytes;

toml::table cfg(std::string_view text) {
  return toml::parse(text);
}

std::string make_error(std::string_view name, std::string_view toml_text) {
  toml::table t = cfg(toml_text);
  std::string err;
  EXPECT_EQ(make_nf(name, &t, err), nullptr) << toml_text;
  return err;
}

TEST(Registry, EveryNfBuildsWithDefaults) {
  const std::vector<std::string_view> required = {"nat",     "lb",      "counter", "ratelimit",
                                                  "macswap", "forward", "busy"};
  auto names = nf_names();
  for (std::string_view n : required)
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  toml::table empty;
  for (std::string_view n : names) {
    std::string err;
    auto nf = make_nf(n, nullptr, err);
    ASSERT_NE(nf, nullptr) << n << ": " << err;
    EXPECT_EQ(nf->name(), n);
    EXPECT_NE(make_nf(n, &empty, err), nullptr) << n << ": " << err;
  }
}

TEST(Registry, UnknownNameListsValidNames) {
  std::string err;
  EXPECT_EQ(make_nf("natt", nullptr, err), nullptr);
  EXPECT_NE(err.find("unknown NF 'natt'"), std::string::npos) << err;
  EXPECT_NE(err.find("(valid names: aes, busy, counter, firewall, forward, lb, macswap, meter, "
                     "nat, ratelimit, router)"),
            std::string::npos)
      << err;
  EXPECT_EQ(build_chain("counter,,lb", nullptr, err), nullptr);
  EXPECT_NE(err.find("empty NF name"), std::string::npos) << err;
}

TEST(Registry, BadParametersNameTheKeyAndTheExpectation) {
  EXPECT_EQ(make_error("nat", "port_min = 70000"),
            "[nf.nat] port_min: expected an integer in 1..65535, got 70000");
  EXPECT_NE(make_error("nat", "external = ['198.18.0.300']").find("[nf.nat] external: expected"),
            std::string::npos);
  EXPECT_EQ(make_error("nat", "port_min = 3000\nport_max = 2000"),
            "[nf.nat] port_max: expected >= port_min (3000), got 2000");
  EXPECT_NE(make_error("nat", "external = ['198.18.0.1', '198.18.0.0/30']").find("duplicate"),
            std::string::npos);
  EXPECT_NE(
      make_error("nat", "idle_timeout_s = -1").find("[nf.nat] idle_timeout_s: expected seconds"),
      std::string::npos);
  EXPECT_NE(make_error("nat", "prot_min = 1")
                .find("[nf.nat] unknown key 'prot_min' (valid keys: external, port_min"),
            std::string::npos);
  EXPECT_NE(make_error("lb", "table_size = 65536").find("[nf.lb] table_size: expected a prime"),
            std::string::npos);
  EXPECT_NE(make_error("lb", "backends = [{addr = 'x'}]").find("[nf.lb] backends: expected"),
            std::string::npos);
  EXPECT_NE(make_error("ratelimit", "rate_bps = 1.5").find("[nf.ratelimit] rate_bps"),
            std::string::npos);
  EXPECT_NE(make_error("busy", "cycles = 'many'").find("[nf.busy] cycles"), std::string::npos);
  EXPECT_NE(make_error("forward", "x = 1").find("[nf.forward] unknown key 'x' (valid keys: none)"),
            std::string::npos);
}

TEST(Registry, ParametersComeFromTheNfTables) {
  toml::table t = cfg(R"(
    [nf.nat]
    external = ["198.18.1.0/28", "198.18.2.1"]
    port_min = 2000
    port_max = 2999
    idle_timeout_s = 2.5
    [nf.lb]
    backends = [{addr = "10.1.0.1", weight = 3}, {addr = "10.1.0.2", mac = "02:aa:bb:cc:dd:ee"}]
    [nf.ratelimit]
    rate_bps = 1e6
    burst_bytes = 3000
    [nf.busy]
    cycles = 50
  )");
  std::string err;
  auto chain = build_chain(" nat , lb,ratelimit, busy(570) ,busy", &t, err);
  ASSERT_NE(chain, nullptr) << err;
  ASSERT_EQ(chain->size(), 5u);
  EXPECT_EQ(static_cast<const Busy&>(chain->at(3)).cycles(), 570u);
  EXPECT_EQ(static_cast<const Busy&>(chain->at(4)).cycles(), 50u);
  auto* nat = static_cast<const Nat*>(&chain->at(0));
  EXPECT_EQ(nat->free_ports(16), 1000u);  // 17 addresses (16 from the /28 + 1), 1000 ports each
  // One outbound packet: NAT to 198.18.x.y:2000..2999, then LB to 10.1.0.1 or .2.
  Bytes b = PacketBuilder().ipv4("10.0.0.1", "192.0.2.1").udp(5, 6).payload_size(64).build();
  PacketView v = testing::view_of(b, uint32_t(b.size()), uint32_t(b.size()));
  Verdict d = Verdict::kPass;
  chain->process({&v, 1}, {&d, 1}, 0);
  EXPECT_EQ(d, Verdict::kPass);
  EXPECT_EQ(load_be32(b.data() + 26) >> 16, 0xC612u);
  uint16_t sport = load_be16(b.data() + 34);
  EXPECT_GE(sport, 2000);
  EXPECT_LE(sport, 2999);
  uint32_t dst = load_be32(b.data() + 30);
  EXPECT_TRUE(dst == testing::ip4(10, 1, 0, 1) || dst == testing::ip4(10, 1, 0, 2));
  CounterMap m;
  chain->counters(m.sink());
  EXPECT_EQ(m.get("nat.outbound"), 1u);
  EXPECT_EQ(m.get("lb.balanced"), 1u);
  EXPECT_EQ(m.get("ratelimit.tx"), 1u);
}

// QUEUE-MEM's chain with defaults: whole packets and header-only packets give identical results.
TEST(Registry, DefaultChainsAreEquivalentOnHeaderOnlyPackets) {
  for (const char* spec : {"counter,lb,ratelimit", "firewall,nat,lb", "router,meter,aes",
                           "macswap,busy(50),forward"}) {
    std::string err;
    auto a = build_chain(spec, nullptr, err), b = build_chain(spec, nullptr, err);
    ASSERT_NE(a, nullptr) << err;
    testing::Twin twin(std::make_unique<testing::ChainNf>(std::move(a)),
                       std::make_unique<testing::ChainNf>(std::move(b)));
    std::vector<Bytes> burst;
    for (uint16_t i = 0; i < 32; ++i) {
      PacketBuilder pb;
      pb.ipv4(testing::ip4(10, 0, 0, uint8_t(i)), testing::ip4(192, 0, 2, 1));
      if (i % 3 == 0)
        pb.tcp(1000 + i, 80);
      else if (i % 3 == 1)
        pb.udp(1000 + i, 53);
      else
        pb.icmp_echo(i, 1);
      burst.push_back(pb.frame_size(1500).build());
    }
    auto v = twin.run(burst, 0);
    for (Verdict d : v) EXPECT_EQ(d, Verdict::kPass) << spec;
  }
}

}  // namespace
}  // namespace nfpark::nf
