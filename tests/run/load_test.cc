// Loader: defaults, then a file, then flags; unknown keys and sections; [nf.NAME] checked
// against the registry; cross-setting rules; where a value came from in every message.
#include "run/load.h"

#include <gtest/gtest.h>
#include <toml++/toml.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace nfpark::run {
namespace {

bool load(Loader& l, const std::string& text, std::string& err) {
  return l.load_string(text, "t.toml", err);
}

TEST(Loader, FileThenFlagsOverride) {
  Loader l;
  std::string err;
  ASSERT_TRUE(load(l, "[run]\nmode = \"queuemem\"\nin = \"a.pcap\"\n[park]\nslots = 4096\n", err))
      << err;
  EXPECT_EQ(l.config().mode, Mode::kQueueMem);
  EXPECT_EQ(l.config().park.slots, 4096u);
  ASSERT_TRUE(l.set_flag(*find_flag("slots"), "8192", err)) << err;
  ASSERT_TRUE(l.set_flag(*find_flag("no-progress"), std::nullopt, err)) << err;
  EXPECT_EQ(l.config().park.slots, 8192u);
  EXPECT_FALSE(l.config().progress);
  EXPECT_EQ(l.where("park", "slots"), "--slots");
  EXPECT_EQ(l.where("run", "mode"), "t.toml: [run] mode");
  EXPECT_EQ(l.where("park", "max_exp"), "[park] max_exp (--max-exp)");
  EXPECT_TRUE(l.finish(err)) << err;
}

TEST(Loader, UnknownSectionsAndKeysAreErrorsWhereverTheyAre) {
  std::string err;
  for (const char* t : {"[bogus]\nx = 1\n", "[run]\nbogus = 1\n", "[park.no_split]\nportz = [1]\n",
                        "[park.nope]\nx = 1\n", "run = 3\n", "[nf.natt]\n", "[nf.nat]\nfooo = 1\n",
                        "[nf]\nnat = 1\n"}) {
    Loader l;
    EXPECT_FALSE(load(l, t, err)) << t;
    EXPECT_EQ(err.rfind("t.toml: ", 0), 0u) << err;
  }
}

TEST(Loader, EveryNfSectionIsCheckedEvenOutsideTheChain) {
  Loader l;
  std::string err;
  EXPECT_FALSE(load(l, "[run]\nchain = \"forward\"\n[nf.nat]\nport_min = 0\n", err));
  EXPECT_NE(err.find("[nf.nat] port_min"), std::string::npos) << err;
  Loader ok;
  EXPECT_TRUE(load(ok, "[nf.nat]\nexternal = [\"198.51.100.1\"]\n[nf.lb]\n", err)) << err;
}

TEST(Loader, ChainErrorsNameWhereTheChainCameFrom) {
  Loader l;
  std::string err;
  ASSERT_TRUE(load(l, "[run]\nchain = \"nat,teleport\"\nin = \"x.pcap\"\n", err));
  EXPECT_FALSE(l.finish(err));
  EXPECT_EQ(err.rfind("t.toml: [run] chain: unknown NF 'teleport'", 0), 0u) << err;
  ASSERT_TRUE(l.set_flag(*find_flag("chain"), "natt", err));
  EXPECT_FALSE(l.finish(err));
  EXPECT_EQ(err.rfind("--chain: unknown NF 'natt'", 0), 0u) << err;
}

TEST(Loader, QueueMemSlicesAtMostQueues) {
  Loader l;
  std::string err;
  ASSERT_TRUE(load(l, "[run]\nin = \"x.pcap\"\n[queuemem]\nqueues = 4\nslices = 5\n", err));
  EXPECT_FALSE(l.finish(err));
  EXPECT_EQ(err.rfind("t.toml: [queuemem] slices: expected at most queues (4), got 5", 0), 0u)
      << err;
}

TEST(Loader, RolesNeedTheirPortsAndAnInput) {
  std::string err;
  Loader none;
  EXPECT_FALSE(none.finish(err));
  EXPECT_NE(err.find("no input"), std::string::npos);
  Loader sw;
  ASSERT_TRUE(sw.set_flag(*find_flag("role"), "switch", err));
  EXPECT_FALSE(sw.finish(err));
  EXPECT_NE(err.find("--nf-port"), std::string::npos);
  Loader nf;
  ASSERT_TRUE(nf.set_flag(*find_flag("role"), "nf", err));
  EXPECT_FALSE(nf.finish(err));
  EXPECT_NE(err.find("--port"), std::string::npos);
  Loader both;
  ASSERT_TRUE(both.set_flag(*find_flag("traffic"), "vdev:a+vdev:b", err));
  ASSERT_TRUE(both.set_flag(*find_flag("in"), "x.pcap", err));
  EXPECT_FALSE(both.finish(err));
  EXPECT_NE(err.find("--traffic"), std::string::npos) << err;
}

TEST(Loader, FilesAndDirectories) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / ("nfpark_load_" + std::to_string(getpid()));
  fs::create_directories(dir / "sub");
  std::string err;
  Loader d;
  EXPECT_FALSE(d.load_file(dir.string(), err));
  EXPECT_NE(err.find("is a directory"), std::string::npos) << err;
  Loader missing;
  EXPECT_FALSE(missing.load_file((dir / "nope.toml").string(), err));
  EXPECT_NE(err.find("no such file"), std::string::npos) << err;
  // Relative paths are relative to the file; an output that is the input is refused.
  std::ofstream(dir / "in.pcap") << "x";
  std::ofstream(dir / "sub" / "c.toml") << "[run]\nin = \"../in.pcap\"\nout = \"../in.pcap\"\n";
  Loader l;
  ASSERT_TRUE(l.load_file((dir / "sub" / "c.toml").string(), err)) << err;
  EXPECT_EQ(fs::path(l.config().in_path), dir / "sub" / ".." / "in.pcap");
  EXPECT_FALSE(l.finish(err));
  EXPECT_NE(err.find("is the input"), std::string::npos) << err;
  fs::create_symlink(dir / "in.pcap", dir / "link.pcap");
  Loader s;
  ASSERT_TRUE(s.set_flag(*find_flag("in"), (dir / "in.pcap").string(), err));
  ASSERT_TRUE(s.set_flag(*find_flag("out"), (dir / "link.pcap").string(), err));
  EXPECT_FALSE(s.finish(err));
  EXPECT_NE(err.find("is the input"), std::string::npos) << err;
  fs::remove_all(dir);
}

TEST(Loader, SyntaxErrorsNameTheLine) {
  Loader l;
  std::string err;
  EXPECT_FALSE(load(l, "[run]\nmode =\n", err));
  EXPECT_EQ(err.rfind("t.toml:2: ", 0), 0u) << err;
}

// toml++ quotes the offending text, raw newline included: the error stays one line.
TEST(Loader, SyntaxErrorsAreOneLine) {
  Loader l;
  std::string err;
  EXPECT_FALSE(load(l, "4=n\n23.2=112\n", err));
  EXPECT_EQ(err.find_first_of("\n\r"), std::string::npos) << err;
  EXPECT_EQ(err.rfind("t.toml:1: ", 0), 0u) << err;
}

// The simulator's scenarios hold nfpark run's mode sections beside their own: load_sections
// decodes only the named ones, through the same table, with the same messages.
TEST(Loader, LoadSectionsDecodesOnlyTheNamedSections) {
  toml::table root = toml::parse(
      "[park]\npark_bytes = \"all\"\nslots = 1024\n[park.no_split]\ndst_ports = [53]\n"
      "[traffic]\nrate_gbps = 3\n");
  Loader l;
  std::string err;
  ASSERT_TRUE(l.load_sections(root, "s.toml", {"park", "queuemem"}, err)) << err;
  EXPECT_EQ(l.config().park.park_bytes, 0u);
  EXPECT_EQ(l.config().park.slots, 1024u);
  EXPECT_EQ(l.config().park.no_split.dst_ports, std::vector<uint16_t>{53});
  EXPECT_EQ(l.config().park.min_payload, 160u) << "the table's default";
  EXPECT_TRUE(l.given("park", "slots"));
  EXPECT_FALSE(l.given("park", "max_exp"));

  root = toml::parse("[park]\nmax_exp = 0\n");
  Loader bad;
  EXPECT_FALSE(bad.load_sections(root, "s.toml", {"park"}, err));
  EXPECT_EQ(err, "s.toml: [park] max_exp: expected an integer from 1 to 255 (traversals), got 0");
  root = toml::parse("[traffic]\nx = 1\n");
  EXPECT_FALSE(bad.load_sections(root, "s.toml", {"traffic"}, err));
  EXPECT_NE(err.find("[traffic] is not a section of nfpark run"), std::string::npos) << err;
}

// A setting of the simulator only (one declaration in the table, marked sim_only): a scenario
// decodes it like any other; nfpark run refuses it with one line that says whose it is. In the
// simulator's mode the loader starts from the table's simulator defaults (the P4's QUEUE-MEM).
TEST(Loader, SimOnlySettingsAndSimulatorDefaults) {
  std::string err;
  Loader run;
  EXPECT_FALSE(load(run, "[queuemem]\npoll_ns = 500\n", err));
  EXPECT_EQ(err, "t.toml: [queuemem] poll_ns: a setting of the simulator only (nfpark sim)");
  EXPECT_EQ(run.config().queuemem.queues, 1600u) << "nfpark run's default";

  toml::table root = toml::parse("[queuemem]\npoll_ns = 500\nbatch = 10\n");
  Loader sim(Loader::For::kSim);
  ASSERT_TRUE(sim.load_sections(root, "s.toml", {"queuemem"}, err)) << err;
  EXPECT_EQ(sim.config().sim.queuemem_poll_ns, 500);
  EXPECT_EQ(sim.config().queuemem.batch, 10u);
  EXPECT_EQ(sim.config().queuemem.queues, 31u) << "the simulator's default (the P4's)";
  EXPECT_EQ(sim.config().queuemem.slices, 15u);
  EXPECT_EQ(sim.config().queuemem.lost_after, 100 * kMicro);
  EXPECT_EQ(sim.config().queuemem.seal_after, 20 * kMicro);

  root = toml::parse("[queuemem]\npoll_ns = 0\n");
  Loader bad(Loader::For::kSim);
  EXPECT_FALSE(bad.load_sections(root, "s.toml", {"queuemem"}, err));
  EXPECT_EQ(err, "s.toml: [queuemem] poll_ns: expected a number from 1 to 1000000000 (ns), got 0");
}

// [reframe] placement: in-chain by default; box needs Reframer on and the process that runs the
// chain, one worker; each refusal names the setting and the way out.
TEST(Loader, ReframePlacementAndItsCombinations) {
  const std::string base = "[run]\nin = \"a.pcap\"\n";
  {
    Loader l;
    std::string err;
    ASSERT_TRUE(load(l, base, err)) << err;
    EXPECT_EQ(l.config().reframe.placement, Placement::kInChain);
  }
  {
    Loader l;
    std::string err;
    ASSERT_TRUE(load(l,
                     base + "reframe_us = 64\n[reframe]\nplacement = \"box\"\n"
                            "bypass_protocols = [6]\nbypass_dst_ports = [53]\n"
                            "bypass_dst_prefixes = [\"10.0.0.0/8\"]\nprefetch = false\n",
                     err))
        << err;
    EXPECT_EQ(l.config().reframe.placement, Placement::kBox);
    EXPECT_EQ(l.config().reframe.bypass_match.protocols, std::vector<uint8_t>{6});
    EXPECT_EQ(l.config().reframe.bypass_match.dst_ports, std::vector<uint16_t>{53});
    EXPECT_EQ(l.config().reframe.bypass_match.dst_prefixes.size(), 1u);
    EXPECT_FALSE(l.config().reframe.cfg.prefetch);
    EXPECT_TRUE(l.finish(err)) << err;
  }
  {
    Loader l;
    std::string err;
    ASSERT_FALSE(l.set_flag(*find_flag("reframe-placement"), "boxed", err));
    EXPECT_NE(err.find("in-chain"), std::string::npos) << err;
  }
  auto refused = [&](const std::string& text, const std::string& flag, const std::string& why) {
    Loader l;
    std::string err;
    ASSERT_TRUE(load(l, base + text, err)) << err;
    ASSERT_TRUE(l.set_flag(*find_flag("reframe-placement"), "box", err)) << err;
    if (!flag.empty()) {
      ASSERT_TRUE(l.set_flag(*find_flag(flag), "2", err)) << err;
    }
    EXPECT_FALSE(l.finish(err));
    EXPECT_EQ(err.rfind("--reframe-placement: box", 0), 0u) << err;
    EXPECT_NE(err.find(why), std::string::npos) << err;
  };
  refused("", "", "--reframe T_US");
}

}  // namespace
}  // namespace nfpark::run
