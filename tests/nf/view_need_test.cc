// Nf::reads() / Chain::reads(): what of a view an NF reads (core/packet_view.h). An NF that
// declares less than kHeaders must give the same verdicts, bytes, counters and state when the
// view has no parse (its layout poisoned) and, for kLengths, no bytes at all (data == nullptr):
// the engine then does not parse for it (park/nf_burst.h).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/packet_builder.h"
#include "nf/registry.h"
#include "nf_harness.h"

namespace nfpark::nf {
namespace {
using testing::Bytes;

std::vector<Bytes> frames() {
  std::vector<Bytes> f;
  for (uint32_t size : {60u, 64u, 300u, 1500u})
    f.push_back(PacketBuilder()
                    .eth({1, 2, 3, 4, 5, 6}, {7, 8, 9, 10, 11, uint8_t(size)})
                    .ipv4("10.0.0.1", "10.0.0.2")
                    .udp(uint16_t(size), 53)
                    .frame_size(size)
                    .build());
  f.push_back(PacketBuilder().ipv6("2001:db8::1", "2001:db8::2").tcp(1, 2).frame_size(200).build());
  f.push_back(Bytes{1, 2, 3, 4, 5, 6, 7, 8, 9, 10});  // shorter than an Ethernet header
  f.push_back(Bytes(13, 0xab));
  Bytes arp = PacketBuilder().ipv4("1.1.1.1", "2.2.2.2").udp(1, 2).build();
  arp[12] = 0x08, arp[13] = 0x06;  // not IP
  f.push_back(arp);
  return f;
}

struct Outcome {
  std::vector<Verdict> verdicts;
  std::vector<Bytes> eth;  // each frame's first min(len, 14) bytes after the NF
  std::vector<uint8_t> state;
  std::map<std::string, uint64_t> counters;
};

// Runs `nf` over frames(), in two bursts, with full parsed views or with the views an engine
// gives a chain that reads `need` < kHeaders: layout poisoned, and data only as far as it reads.
Outcome run(Nf& nf, bool full, ViewNeed need) {
  std::vector<Bytes> pk = frames();
  std::vector<Bytes> eth(pk.size());
  std::vector<PacketView> views;
  for (size_t i = 0; i < pk.size(); ++i) {
    PacketView v = testing::view_of(pk[i], uint32_t(pk[i].size()), uint32_t(pk[i].size()) + 4);
    if (!full) {
      v.layout = PacketLayout{ParseStatus::kOk, 2,    6,      6,      true,     false,
                              0x5a5a,           9999, 0xffff, 0xfff0, 1u << 30, 7};  // no frame's
      eth[i].assign(pk[i].begin(), pk[i].begin() + std::min<size_t>(pk[i].size(), 14));
      v.data = need == ViewNeed::kLengths ? nullptr : eth[i].data();  // only what it may read
    }
    views.push_back(v);
  }
  Outcome o;
  o.verdicts.assign(views.size(), Verdict::kPass);
  const size_t half = views.size() / 2;
  nf.process({views.data(), half}, {o.verdicts.data(), half}, 1000);
  nf.process({views.data() + half, views.size() - half},
             {o.verdicts.data() + half, views.size() - half}, 2000);
  for (size_t i = 0; i < pk.size(); ++i)
    o.eth.push_back(full ? Bytes(pk[i].begin(), pk[i].begin() + std::min<size_t>(pk[i].size(), 14))
                         : eth[i]);
  nf.export_state(o.state);
  nf.counters([&](std::string_view k, uint64_t v) { o.counters[std::string(k)] = v; });
  return o;
}

TEST(ViewNeed, NfsThatReadNoParseGiveTheSameResultsWithoutOne) {
  size_t checked = 0;
  for (std::string_view name : nf_names()) {
    SCOPED_TRACE(std::string(name));
    std::string err;
    auto a = make_nf(name, nullptr, err);
    ASSERT_TRUE(a) << err;
    const ViewNeed need = a->reads();
    if (need == ViewNeed::kHeaders) continue;
    EXPECT_FALSE(a->run_aware()) << "a run-aware NF keys on flows: it reads the parse";
    auto b = make_nf(name, nullptr, err);
    const Outcome full = run(*a, true, need), bare = run(*b, false, need);
    EXPECT_EQ(full.verdicts, bare.verdicts);
    EXPECT_EQ(full.eth, bare.eth);
    EXPECT_EQ(full.state, bare.state);
    EXPECT_EQ(full.counters, bare.counters);
    EXPECT_FALSE(full.counters.empty());
    ++checked;
  }
  EXPECT_GE(checked, 3u) << "forward, busy, macswap";
}

TEST(ViewNeed, TheSimpleNfsDeclareWhatTheyRead) {
  std::string err;
  EXPECT_EQ(make_nf("forward", nullptr, err)->reads(), ViewNeed::kLengths);
  EXPECT_EQ(make_nf("busy", nullptr, err)->reads(), ViewNeed::kLengths);
  EXPECT_EQ(make_nf("macswap", nullptr, err)->reads(), ViewNeed::kEthernet);
  for (const char* n : {"firewall", "nat", "counter", "router", "lb"})
    EXPECT_EQ(make_nf(n, nullptr, err)->reads(), ViewNeed::kHeaders) << n;
}

// An NF that reads only lengths but finds runs (a contradiction the chain resolves safely).
struct RunAwareLengths final : Nf {
  std::string_view name() const override { return "run_aware_lengths"; }
  ViewNeed reads() const override { return ViewNeed::kLengths; }
  bool run_aware() const override { return true; }
  void process(std::span<PacketView>, std::span<Verdict>, Nanos) override {}
};

TEST(ViewNeed, AChainNeedsTheMostAnyOfItsNfsReads) {
  auto need = [](const char* spec) {
    std::string err;
    auto c = build_chain(spec, nullptr, err);
    EXPECT_TRUE(c) << err;
    return c ? c->reads() : ViewNeed::kHeaders;
  };
  EXPECT_EQ(need("forward"), ViewNeed::kLengths);
  EXPECT_EQ(need("forward,busy"), ViewNeed::kLengths);
  EXPECT_EQ(need("forward,macswap"), ViewNeed::kEthernet);
  EXPECT_EQ(need("macswap,firewall"), ViewNeed::kHeaders);
  EXPECT_EQ(need("counter,forward"), ViewNeed::kHeaders);
  Chain c;
  c.add(std::make_unique<RunAwareLengths>());
  EXPECT_EQ(c.reads(), ViewNeed::kHeaders) << "run-aware: the chain's runs read the parse";
  c.set_run_aware(false);
  EXPECT_EQ(c.reads(), ViewNeed::kLengths);
}

TEST(ViewNeed, UnparsedReadLength) {
  EXPECT_EQ(unparsed_read_len(ViewNeed::kLengths, 1500), 0u);
  EXPECT_EQ(unparsed_read_len(ViewNeed::kEthernet, 1500), 14u);
  EXPECT_EQ(unparsed_read_len(ViewNeed::kEthernet, 10), 10u);
}

}  // namespace
}  // namespace nfpark::nf
