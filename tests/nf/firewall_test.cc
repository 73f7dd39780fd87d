#include "nf/firewall.h"

#include <gtest/gtest.h>
#include <toml++/toml.h>

#include <cstdio>
#include <fstream>

#include "core/packet_builder.h"
#include "nf/acl_classifier.h"
#include "nf/aes.h"
#include "nf/meter.h"
#include "nf_harness.h"

namespace nfpark::nf {
namespace {

std::vector<AclRule> parse(const char* text) {
  std::vector<AclRule> rules;
  std::string e;
  EXPECT_TRUE(parse_acl_text(text, "t.acl", rules, e)) << e;
  return rules;
}

Verdict run(Firewall& fw, std::vector<uint8_t>& b) {
  PacketView v = testing::view_of(b, uint32_t(b.size()), uint32_t(b.size()));
  Verdict verdict = Verdict::kPass;
  fw.process(std::span(&v, 1), std::span(&verdict, 1), 0);
  return verdict;
}

TEST(AclRuleParser, ParsesTheDocumentedFormat) {
  auto rules = parse(
      "# comment\n"
      "\n"
      "deny  src 10.0.0.0/8  dst any  sport any  dport 80-443  proto tcp   # web\n"
      "allow proto udp dport 53\n"
      "deny src 2001:db8::/32\n");
  ASSERT_EQ(rules.size(), 3u);
  EXPECT_EQ(rules[0].action, AclAction::kDeny);
  EXPECT_EQ(rules[0].src.len, 8);
  EXPECT_EQ(rules[0].dport_lo, 80);
  EXPECT_EQ(rules[0].dport_hi, 443);
  EXPECT_EQ(rules[0].proto_lo, 6);
  EXPECT_EQ(rules[0].line, 3u);
  EXPECT_EQ(rules[1].family(), 0);
  EXPECT_EQ(rules[2].family(), 6);
  EXPECT_EQ(parse(rules[0].to_string().c_str())[0].dport_hi, 443);
}

TEST(AclRuleParser, BadLinesNameFileLineAndProblem) {
  struct Case {
    const char* text;
    const char* expect;
  } cases[] = {
      {"allow\nblock src any\n", "t.acl:2: unknown action 'block'"},
      {"deny dport 443-80\n", "t.acl:1: dport: bad port range '443-80'"},
      {"deny src 10.0.0.0/40\n", "t.acl:1: src: bad prefix length"},
      {"deny proto sctpx\n", "t.acl:1: proto: bad protocol 'sctpx'"},
      {"deny src 10.0.0.0/8 dst 2001:db8::/32\n", "t.acl:1: src and dst mix IPv4 and IPv6"},
      {"deny sport\n", "t.acl:1: field 'sport' has no value"},
      {"deny port 80\n", "t.acl:1: unknown field 'port'"},
      {"deny src any src any\n", "t.acl:1: field 'src' given twice"},
  };
  for (const auto& c : cases) {
    std::vector<AclRule> r;
    std::string e;
    EXPECT_FALSE(parse_acl_text(c.text, "t.acl", r, e)) << c.text;
    EXPECT_EQ(e.rfind(c.expect, 0), 0u) << e;
  }
  std::string e;
  std::vector<AclRule> r;
  EXPECT_FALSE(load_acl_file("/nonexistent/x.acl", r, e));
  EXPECT_NE(e.find("/nonexistent/x.acl"), std::string::npos);
}

TEST(Firewall, FirstMatchWinsAndDefaultApplies) {
  Firewall fw(parse("allow src 10.1.0.0/16 dport 80 proto tcp\n"
                    "deny  src 10.0.0.0/8 dport 0-1023\n"
                    "deny  dst 2001:db8::/32 proto udp\n"),
              AclAction::kAllow);
  auto a = PacketBuilder().ipv4("10.1.2.3", "1.1.1.1").tcp(5000, 80).build();     // rule 0
  auto b = PacketBuilder().ipv4("10.1.2.3", "1.1.1.1").udp(5000, 80).build();     // rule 1
  auto c = PacketBuilder().ipv4("10.1.2.3", "1.1.1.1").tcp(5000, 8080).build();   // default
  auto d = PacketBuilder().ipv6("2001:db8::1", "2001:db8::2").udp(1, 2).build();  // rule 2
  auto e = PacketBuilder().ipv4("10.1.2.3", "1.1.1.1").icmp_echo(80, 1).build();  // ports 0: rule 1
  EXPECT_EQ(run(fw, a), Verdict::kPass);
  EXPECT_EQ(run(fw, b), Verdict::kDrop);
  EXPECT_EQ(run(fw, c), Verdict::kPass);
  EXPECT_EQ(run(fw, d), Verdict::kDrop);
  EXPECT_EQ(run(fw, e), Verdict::kDrop);
  CounterMap m;
  fw.counters(m.sink());
  EXPECT_EQ(m.get("drop.denied"), 3u);
  EXPECT_EQ(m.get("default_action"), 1u);
  Firewall deny_all({}, AclAction::kDeny);
  EXPECT_EQ(run(deny_all, c), Verdict::kDrop);
}

// One process() call over a burst longer than the classifier's (80 packets: IPv4 inside and
// beside the rules, IPv6, frames with no L3, packets an earlier NF dropped) gives each packet the
// verdict it gets alone, and the same counters.
TEST(Firewall, BurstGivesEachPacketItsOwnVerdict) {
  std::vector<AclRule> rules = generate_passing_rules(1000, 1);
  rules.push_back(parse("deny src 10.0.0.0/8 dport 0-1023\n")[0]);
  Firewall burst(rules, AclAction::kAllow), single(rules, AclAction::kAllow);
  std::vector<std::vector<uint8_t>> frames;
  std::vector<Verdict> want;
  for (uint32_t i = 0; i < 80; ++i) {
    const AclRule& r = rules[i * 37 % 1000];
    uint32_t src = 0x0A000000u + i * 7919;
    if (i % 2 && r.src.family == 4)
      src = uint32_t(r.src.addr[0]) << 24 | uint32_t(r.src.addr[1]) << 16 | i;
    std::vector<uint8_t> f;
    if (i % 11 == 5)
      f = std::vector<uint8_t>(60, 0xAB);  // no L3
    else if (i % 7 == 3)
      f = PacketBuilder().ipv6("100::1", "2001:db8::2").udp(uint16_t(i), 53).build();
    else
      f = PacketBuilder()
              .ipv4(src, 0xC0A80000u + i)
              .tcp(uint16_t(1024 + i), uint16_t(i * 13))
              .build();
    frames.push_back(f);
    want.push_back(i % 13 == 4 ? Verdict::kDrop : run(single, f));
  }
  std::vector<PacketView> views;
  std::vector<Verdict> got(frames.size(), Verdict::kPass);
  for (size_t i = 0; i < frames.size(); ++i) {
    views.push_back(
        testing::view_of(frames[i], uint32_t(frames[i].size()), uint32_t(frames[i].size())));
    if (i % 13 == 4) got[i] = Verdict::kDrop;  // dropped before the firewall: not counted
  }
  burst.process(views, got, 0);
  EXPECT_EQ(got, want);
  CounterMap a, b;
  burst.counters(a.sink());
  single.counters(b.sink());
  for (const char* c : {"rx", "allowed", "drop.denied", "default_action", "no_l3"})
    EXPECT_EQ(a.get(c), b.get(c)) << c;
  EXPECT_GT(a.get("drop.denied"), 0u);
  EXPECT_GT(a.get("no_l3"), 0u);
}

TEST(Firewall, GeneratedRulesPassGeneratedTrafficButAreLive) {
  std::string err;
  auto fw = Firewall::create(FirewallConfig{}, err);
  ASSERT_TRUE(fw) << err;
  EXPECT_EQ(fw->rules().size(), 10000u);
  for (uint32_t i = 0; i < 2000; ++i) {
    auto p = PacketBuilder()
                 .ipv4(0x0A000000u + i * 7919, 0xC0A80000u + i)
                 .tcp(uint16_t(1024 + i), 80)
                 .build();
    ASSERT_EQ(run(*fw, p), Verdict::kPass);
  }
  const AclRule& r = fw->rules()[0];  // a packet inside the first rule is denied
  FlowKey k;
  k.ip_version = 4;
  std::memcpy(k.src.data() + 12, r.src.addr.data(), 4);
  std::memcpy(k.dst.data() + 12, r.dst.addr.data(), 4);
  k.sport = r.sport_lo, k.dport = r.dport_lo, k.proto = r.proto_lo == 0 ? 6 : r.proto_lo;
  EXPECT_EQ(fw->classifier().classify(acl_key(k)), linear_classify(fw->rules(), acl_key(k)));
  EXPECT_NE(linear_classify(fw->rules(), acl_key(k)), fw->rules().size());
}

TEST(Firewall, RulesFileFromConfig) {
  const std::string path = ::testing::TempDir() + "fw_rules.acl";
  std::ofstream(path) << "deny dport 22 proto tcp\n";
  FirewallConfig cfg;
  cfg.rules_file = path;
  std::string err;
  auto fw = Firewall::create(cfg, err);
  ASSERT_TRUE(fw) << err;
  auto ssh = PacketBuilder().ipv4("10.0.0.1", "10.0.0.2").tcp(999, 22).build();
  EXPECT_EQ(run(*fw, ssh), Verdict::kDrop);
  std::ofstream(path) << "deny dport 22\nallow bogus\n";
  EXPECT_FALSE(Firewall::create(cfg, err));
  EXPECT_EQ(err, path + ":2: unknown field 'bogus' (expected src, dst, sport, dport, proto)");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace nfpark::nf

namespace nfpark::nf {
namespace {

TEST(ClassifyConfigs, FirewallMeterAesParseTomlAndNameBadKeys) {
  std::string e;
  FirewallConfig f;
  ASSERT_TRUE(
      FirewallConfig::parse(toml::parse("generated_rules = 500\ndefault_action = \"deny\""), f, e))
      << e;
  EXPECT_EQ(f.generated_rules, 500u);
  EXPECT_EQ(f.default_action, AclAction::kDeny);
  EXPECT_FALSE(FirewallConfig::parse(toml::parse("default_action = \"block\""), f, e));
  EXPECT_EQ(e, "default_action: expected \"allow\" or \"deny\"");

  MeterConfig m;
  ASSERT_TRUE(MeterConfig::parse(
      toml::parse("mode = \"trtcm\"\ncir = 1000\npir = 2000\nper_flow = true\nred_dscp = -1"), m,
      e))
      << e;
  EXPECT_EQ(m.mode, MeterConfig::Mode::kTrTcm);
  EXPECT_EQ(m.pir, 2000u);
  EXPECT_TRUE(m.per_flow);
  EXPECT_EQ(m.red_dscp, -1);
  EXPECT_FALSE(MeterConfig::parse(toml::parse("cirr = 5"), m, e));
  EXPECT_NE(e.find("unknown key 'cirr'"), std::string::npos);

  AesConfig a;
  ASSERT_TRUE(AesConfig::parse(
      toml::parse(
          "op = \"encrypt\"\nfield = \"l4_ports\"\nkey = \"00112233445566778899aabbccddeeff\""),
      a, e))
      << e;
  EXPECT_EQ(a.op, AesConfig::Op::kEncrypt);
  EXPECT_EQ(a.field, AesConfig::Field::kL4Ports);
  EXPECT_FALSE(AesConfig::parse(toml::parse("key = \"zz112233445566778899aabbccddeeff\""), a, e));
  EXPECT_EQ(e, "key: 'zz' is not a hex byte");
}

}  // namespace
}  // namespace nfpark::nf
