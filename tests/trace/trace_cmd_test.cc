// The `nfpark trace` verbs and the option parser, compiled into this test (apps/ has no library
// of its own: the nfpark binary needs DPDK).
#include "../../apps/trace_cmd.cc"

#include <gtest/gtest.h>
#include <unistd.h>

#include "../../apps/args.cc"

namespace nfpark::app {
namespace {

int run(std::vector<std::string> args, std::string* out = nullptr, std::string* err = nullptr) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  int rc = trace_main(int(argv.size()), argv.data());
  std::string o = ::testing::internal::GetCapturedStdout();
  std::string e = ::testing::internal::GetCapturedStderr();
  if (out) *out = o;
  if (err) *err = e;
  return rc;
}

TEST(Args, OptionsFlagsRepeatsAndErrors) {
  auto parse = [](Args& a, std::vector<std::string> v) {
    std::vector<char*> argv;
    for (auto& s : v) argv.push_back(s.data());
    return a.parse(int(argv.size()), argv.data(), 1);
  };
  Args a("x", "d");
  a.option("n", "N", "count", "5")
      .flag("json", "j")
      .repeated("nf", "NAME", "nf")
      .positional("F", "f");
  ASSERT_TRUE(parse(a, {"x", "--n=7", "--nf", "fw", "--json", "file", "--nf", "nat"})) << a.error();
  EXPECT_EQ(a.get("n"), "7");
  EXPECT_TRUE(a.flag_set("json"));
  EXPECT_EQ(a.all("nf"), (std::vector<std::string>{"fw", "nat"}));
  EXPECT_EQ(a.pos(0), "file");
  uint64_t n = 0;
  EXPECT_TRUE(a.get_u64("n", n));
  EXPECT_EQ(n, 7u);
  Args b("x", "d");
  b.option("n", "N", "count", "5").positional("F", "f");
  ASSERT_TRUE(parse(b, {"x", "f"}));
  EXPECT_EQ(b.get("n"), "5");
  Args c("x", "d");
  c.option("n", "N", "count");
  EXPECT_FALSE(parse(c, {"x", "--bogus"}));
  EXPECT_EQ(c.error(), "unknown option '--bogus' (see x --help)");
  Args d("x", "d");
  d.option("n", "N", "count");
  EXPECT_FALSE(parse(d, {"x", "--n"}));
  EXPECT_EQ(d.error(), "--n needs a value (N)");
  Args e("x", "d");
  e.option("n", "N", "count");
  EXPECT_FALSE(parse(e, {"x", "--n", "1", "--n", "2"}));
  EXPECT_EQ(e.error(), "--n given twice");
  Args f("x", "d");
  f.option("n", "N", "count");
  ASSERT_TRUE(parse(f, {"x", "--n", "abc"}));
  EXPECT_FALSE(f.get_u64("n", n));
  EXPECT_EQ(f.error(), "--n: 'abc' is not an integer >= 0");
  Args g("x", "d");
  g.positional("A", "a");
  EXPECT_FALSE(parse(g, {"x"}));
  EXPECT_EQ(g.error(), "missing A (see x --help)");
  Args h("x", "d");
  h.option("n", "N", "count", "5");
  ASSERT_TRUE(parse(h, {"x", "--help"}));
  EXPECT_TRUE(h.help());
  EXPECT_NE(h.usage().find("--n N"), std::string::npos);
  EXPECT_NE(h.usage().find("(default 5)"), std::string::npos);
}

TEST(TraceCmd, GenStatsReorderRoundTrip) {
  std::string f = ::testing::TempDir() + "cmd_" + std::to_string(getpid()) + ".pcap", out, err;
  ASSERT_EQ(0,
            run({"trace", "gen", "--out", f, "--packets", "4000", "--flows", "40", "--size", "dc",
                 "--slf", "4", "--proto", "mix", "--seed", "9", "--ipv6", "0.25", "--vlan"},
                &out, &err))
      << err;
  EXPECT_NE(out.find("wrote 4000 packets"), std::string::npos);
  ASSERT_EQ(0, run({"trace", "stats", f, "--json"}, &out, &err)) << err;
  EXPECT_NE(out.find("\"packets\": 4000,"), std::string::npos) << out;
  EXPECT_NE(out.find("\"flows\": 40,"), std::string::npos) << out;
  EXPECT_NE(out.find("\"slf\": 4.0000,"), std::string::npos) << out;
  ASSERT_EQ(0, run({"trace", "reorder", f, f, "--json"}, &out, &err)) << err;
  EXPECT_NE(out.find("\"out_of_order_pct\": 0.0000"), std::string::npos) << out;
  EXPECT_NE(out.find("\"match\": \"packet_id\""), std::string::npos) << out;
  std::remove(f.c_str());
}

TEST(TraceCmd, HelpAndOneLineErrors) {
  std::string out, err;
  for (const char* verb : {"gen", "stats", "reorder"}) {
    EXPECT_EQ(0, run({"trace", verb, "--help"}, &out, &err));
    EXPECT_NE(out.find("usage: nfpark trace"), std::string::npos) << verb;
  }
  EXPECT_EQ(0, run({"trace", "--help"}, &out, &err));
  EXPECT_NE(out.find("reorder"), std::string::npos);
  EXPECT_EQ(2, run({"trace", "gen", "--packets", "10"}, &out, &err));
  EXPECT_EQ(err, "nfpark trace gen: --out FILE is required (see nfpark trace gen --help)\n");
  EXPECT_EQ(2, run({"trace", "gen", "--out", "/tmp/x.pcap", "--size", "42"}, &out, &err));
  EXPECT_NE(err.find("--size: bad size '42'"), std::string::npos) << err;
  EXPECT_EQ(2, run({"trace", "gen", "--out", "/tmp/x.pcap", "--proto", "sctp"}, &out, &err));
  EXPECT_EQ(err, "nfpark trace gen: --proto: 'sctp' is not udp, tcp or mix\n");
  EXPECT_EQ(2, run({"trace", "stats", "/nonexistent/a.pcap"}, &out, &err));
  EXPECT_EQ(err,
            "nfpark trace stats: /nonexistent/a.pcap: cannot open: No such file or directory\n");
  EXPECT_EQ(2, run({"trace", "stats"}, &out, &err));
  EXPECT_EQ(err, "nfpark trace stats: missing FILE (see nfpark trace stats --help)\n");
  EXPECT_EQ(2, run({"trace", "frobnicate"}, &out, &err));
}

}  // namespace
}  // namespace nfpark::app
