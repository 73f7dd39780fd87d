// Scenario files: sections and units read into runs, variants x sweep points expanded in order,
// [quick] overrides, and one clear error (file, section, key, fix) for bad input. Every scenario
// in scenarios/ loads, in both forms.
#include "sim/scenario.h"

#include <gtest/gtest.h>
#include <toml++/toml.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace nfpark::sim {
namespace {

struct TempFile {
  std::string path;
  explicit TempFile(const std::string& text) {
    char p[] = "/tmp/nfpark_scenario_XXXXXX.toml";
    const int fd = mkstemps(p, 5);
    close(fd);
    path = p;
    std::ofstream(path) << text;
  }
  ~TempFile() { std::remove(path.c_str()); }
};

bool load(const std::string& text, Scenario& s, std::string& err, bool quick = false) {
  TempFile f(text);
  return load_scenario(f.path, quick, s, err);
}

TEST(Scenario, SectionsAndUnits) {
  Scenario s;
  std::string err;
  ASSERT_TRUE(load(R"(
[sim]
name = "x"
mode = "payloadpark"
duration_ms = 2.5
interval_us = 50
seed = 7
[traffic]
ports = 3
line_gbps = 100
pattern = "square"
high_gbps = 90
low_gbps = 9
period_ms = 1
size = "dc"
slf = 4
[switch]
preset = "tofino2"
ingress_ns = 250
[nf_server]
cores = 4
cycles_header = 230
cycles_whole = 460
clock_ghz = 2.3
latency_us = 3
chain = "firewall,nat"
[park]
park_bytes = "all"
format = "payloadpark"
[nf.nat]
)",
                   s, err))
      << err;
  ASSERT_EQ(s.runs.size(), 1u);
  const SimRunConfig& c = s.runs[0];
  EXPECT_EQ(s.name, "x");
  EXPECT_EQ(c.mode, SimMode::kPayloadPark);
  EXPECT_EQ(c.duration, 2500 * kUs);
  EXPECT_EQ(c.interval, 50 * kUs);
  EXPECT_EQ(c.traffic.ports, 3);
  EXPECT_EQ(c.traffic.pattern.kind, PatternKind::kSquare);
  EXPECT_EQ(c.traffic.pattern.period, kMs);
  EXPECT_EQ(c.traffic.gen.size.kind, trace::SizeKind::kDc);
  EXPECT_EQ(c.traffic.gen.slf, 4u);
  EXPECT_EQ(c.traffic.gen.seed, 7u);
  EXPECT_EQ(c.sw.buffer_bytes, 64ull << 20);
  EXPECT_EQ(c.sw.ingress_latency, 250 * kNs);
  EXPECT_EQ(c.nf.cores, 4);
  EXPECT_DOUBLE_EQ(c.nf.service.header_ns, 100);
  EXPECT_DOUBLE_EQ(c.nf.service.whole_ns, 200);
  EXPECT_EQ(c.nf.latency, 3 * kUs);
  EXPECT_EQ(c.park.park_bytes, 0u);
  EXPECT_EQ(c.park.format, park::TagFormat::kPayloadPark);
  EXPECT_TRUE(c.nf_params && c.nf_params->contains("nf"));
}

TEST(Scenario, VariantsTimesSweepPointsInOrderAndQuick) {
  const std::string text = R"(
[sim]
duration_ms = 10
[sweep]
"traffic.size" = [256, 1024]
[[variant]]
name = "base"
mode = "baseline"
[[variant]]
name = "pp352"
mode = "payloadpark"
"park.park_bytes" = 352
[quick]
"sim.duration_ms" = 1
)";
  Scenario s;
  std::string err;
  ASSERT_TRUE(load(text, s, err)) << err;
  ASSERT_EQ(s.runs.size(), 4u);
  EXPECT_EQ(s.runs[0].mode, SimMode::kBaseline);
  EXPECT_EQ(s.runs[1].mode, SimMode::kPayloadPark);
  EXPECT_EQ(s.runs[1].park.park_bytes, 352u);
  EXPECT_EQ(s.runs[0].park.park_bytes, 160u) << "variants do not leak into each other";
  EXPECT_EQ(s.runs[2].traffic.gen.size.fixed, 1024u);
  EXPECT_EQ(s.runs[0].duration, 10 * kMs);
  const std::vector<std::pair<std::string, std::string>> want = {
      {"variant", "\"pp352\""}, {"traffic.size", "256"}, {"park.park_bytes", "352"}};
  EXPECT_EQ(s.runs[1].params, want);
  ASSERT_TRUE(load(text, s, err, true)) << err;
  EXPECT_EQ(s.runs[3].duration, kMs);
}

TEST(Scenario, BadInputGetsOneClearError) {
  struct Case {
    const char* text;
    const char* says;
  } cases[] = {
      {"[traffic]\nrate_gbs = 3\n", "[traffic] unknown key 'rate_gbs'"},
      {"[trafic]\n", "unknown section [trafic]"},
      {"[traffic]\nsize = 20\n", "[traffic] size: expected bad size '20'"},
      {"[sim]\nmode = \"nfslice\"\n", "unknown mode 'nfslice'"},
      {"[sim]\nduration_ms = -1\n", "[sim] duration_ms: expected a number >= 0"},
      // a capture's own timing over 280 days (tcpdump's icmpv6.pcap): int64 picoseconds hold
      // 106 days; the conversion wrapped and the message said "a duration > 0"
      {"[sim]\nduration_ms = 24494000000\n", "[sim] duration_ms: expected a time below 106 days"},
      {"[traffic]\nperiod_ms = 1e10\n", "[traffic] period_ms: expected a time below 106 days"},
      {"[nf_server]\ncycles_header = 300\n", "[nf_server] clock_ghz"},
      {"[park]\npark_bytes = 0\n", "[park] park_bytes"},
      {"[park]\nslices = 2\n", "[nf_server] servers"},
      // [park] is decoded by nfpark run's settings table: its ranges, units and messages
      {"[park]\nmax_exp = 300\n", "[park] max_exp: expected an integer from 1 to 255 (traversals)"},
      {"[park]\nslot = 4\n", "[park] unknown key 'slot' (valid keys: "},
      {"[park.no_split]\ndst_ports = [70000]\n", "[park.no_split] dst_ports: expected"},
      {"[[variant]]\nname = \"v\"\n\"traffic.sise\" = 3\n", "variant v): [traffic] unknown key"},
      {"[sweep]\n\"traffic.size\" = 3\n", "[sweep] traffic.size: expected a non-empty array"},
      {"[sweep]\n\"bogus.key\" = [1]\n", "'bogus' is not a section"},
      {"[traffic]\nsource = \"pcap\"\n", "[traffic] pcap: expected the capture"},
      // [queuemem] too, and nfpark run gives these very messages (tests/run/load_test.cc)
      {"[queuemem]\nbatch = 0\n",
       "[queuemem] batch: expected an integer from 1 to 65535 (payloads), got 0"},
      {"[queuemem]\nbatches = 5\n",
       "[queuemem] unknown key 'batches' (valid keys: queues, slices, batch"},
      {"[queuemem]\nslices = 40\n", "[queuemem] slices: expected at most queues (31), got 40"},
      {"[queuemem]\npoll_ns = 0.5\n", "[queuemem] poll_ns: expected a number from 1 to"},
      // [nfslicer] and [nicmem] too
      {"[nicmem]\nx = 5\n", "[nicmem] unknown key 'x' (valid keys: header_segment, pool)"},
      {"[nfslicer]\nttl = 0\n", "[nfslicer] ttl: expected an integer from 1 to 255"},
      {"[sim\n", ":1:"},
  };
  for (const Case& c : cases) {
    Scenario s;
    std::string err;
    EXPECT_FALSE(load(c.text, s, err)) << c.text;
    EXPECT_NE(err.find(c.says), std::string::npos) << "got: " << err << "\nwant: " << c.says;
    EXPECT_NE(err.find("/tmp/nfpark_scenario_"), std::string::npos) << "names the file: " << err;
  }
}

// A config built in code (benches, tests) starts from the same QUEUE-MEM defaults as a scenario:
// the settings table's simulator defaults.
TEST(Scenario, QueueMemDefaultsAreTheSettingsTables) {
  Scenario s;
  std::string err;
  ASSERT_TRUE(load("[sim]\nmode = \"queuemem\"\n", s, err)) << err;
  const park::QueueMemConfig& got = s.runs.at(0).queuemem;
  const park::QueueMemConfig want = SimRunConfig::sim_queuemem();
  EXPECT_EQ(got.queues, want.queues);
  EXPECT_EQ(got.slices, want.slices);
  EXPECT_EQ(got.batch, want.batch);
  EXPECT_EQ(got.header_array, want.header_array);
  EXPECT_EQ(got.min_payload, want.min_payload);
  EXPECT_EQ(got.lost_after, want.lost_after);
  EXPECT_EQ(got.seal_after, want.seal_after);
  EXPECT_EQ(s.runs.at(0).queuemem_poll, SimRunConfig{}.queuemem_poll);
}

TEST(Scenario, EveryShippedScenarioLoads) {
  const std::filesystem::path dir = std::filesystem::path(NFPARK_SOURCE_DIR) / "scenarios";
  int n = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".toml") continue;
    for (bool quick : {false, true}) {
      Scenario s;
      std::string err;
      EXPECT_TRUE(load_scenario(e.path().string(), quick, s, err)) << err;
      EXPECT_FALSE(s.runs.empty()) << e.path();
    }
    ++n;
  }
  EXPECT_GE(n, 2);
}

}  // namespace
}  // namespace nfpark::sim
