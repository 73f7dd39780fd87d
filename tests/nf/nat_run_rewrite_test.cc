// The NAT's run rewrite (nat.cc "Run rewrites": one checksum delta per run of a flow) against
// its per-packet rewrite, bit for bit, over every value of the checksums it patches: a run-aware
// chain and a per-packet chain, each one NAT, get runs of 32 packets of one flow whose IPv4 and
// UDP checksum fields sweep 0x0000-0xFFFF (TCP's a seventh of them), including UDP's "no checksum"
// 0 and the values whose update passes through 0 (stored as 0xFFFF between two updates). The flows
// cover the edge terms: an address half going 0xFFFF -> 0x0000, a port going 0xFFFF -> 0, an
// unchanged address, an unchanged port.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/bytes.h"
#include "nf/nat.h"
#include "nf/nf.h"
#include "nf_harness.h"

namespace nfpark::nf {
namespace {
using testing::Bytes;
using testing::ip4;

struct Flow {
  const char* name;
  const char* src;
  uint16_t sport;
  uint32_t ext;  // the NAT's one external address
  uint16_t port_min;
};

std::unique_ptr<Chain> nat_chain(const Flow& f, bool run_aware) {
  NatConfig c;
  c.external = {f.ext};
  c.port_min = f.port_min;
  c.port_max = uint16_t(f.port_min + 3);
  auto chain = std::make_unique<Chain>();
  chain->add(std::make_unique<Nat>(c));
  chain->set_run_aware(run_aware);
  return chain;
}

// Checksum values base + j for base in [0, 65536) by `stride` bursts (stride 1: every value).
void sweep(const Flow& f, bool udp, uint32_t stride) {
  SCOPED_TRACE(std::string(f.name) + (udp ? " udp" : " tcp"));
  PacketBuilder b;
  b.ipv4(f.src, "8.8.8.8");
  if (udp)
    b.udp(f.sport, 53);
  else
    b.tcp(f.sport, 443);
  const Bytes proto = b.payload_size(64).build();
  const uint32_t l4_csum = 14 + 20 + (udp ? 6 : 16);
  auto runs = nat_chain(f, true), packets = nat_chain(f, false);
  for (uint32_t base = 0; base < 65536; base += stride * uint32_t(kBurst)) {
    std::vector<Bytes> a(kBurst, proto), p(kBurst, proto);
    std::vector<PacketView> va(kBurst), vp(kBurst);
    std::vector<Verdict> da(kBurst, Verdict::kPass), dp(kBurst, Verdict::kPass);
    for (size_t j = 0; j < kBurst; ++j) {
      const uint16_t hc = uint16_t(base + j);
      for (Bytes* x : {&a[j], &p[j]}) {
        store_be16(x->data() + l4_csum, hc);
        store_be16(x->data() + 14 + 10, uint16_t(hc * 40503u + 1));  // IPv4 checksum, spread
      }
      va[j] = testing::view_of(a[j], uint32_t(a[j].size()), uint32_t(a[j].size()));
      vp[j] = testing::view_of(p[j], uint32_t(p[j].size()), uint32_t(p[j].size()));
    }
    runs->process(va, da, 1000);
    packets->process(vp, dp, 1000);
    for (size_t j = 0; j < kBurst; ++j) {
      ASSERT_EQ(da[j], Verdict::kPass);
      ASSERT_EQ(dp[j], Verdict::kPass);
      ASSERT_EQ(a[j], p[j]) << "checksum 0x" << std::hex << base + j << ": bytes differ";
      ASSERT_EQ(load_be32(a[j].data() + 14 + 12), f.ext) << "not translated";
    }
  }
}

TEST(NatRunRewrite, SameBitsAsPerPacketForEveryChecksum) {
  const Flow flows[] = {
      {"plain", "10.0.0.5", 5555, ip4(198, 18, 0, 1), 1024},
      {"address half 0xffff->0", "255.255.0.9", 5555, ip4(0, 0, 0, 1), 1024},
      {"port 0xffff->0", "10.0.0.5", 0xFFFF, ip4(198, 18, 0, 1), 0},
      {"address unchanged", "198.18.0.1", 5555, ip4(198, 18, 0, 1), 1024},
      {"port unchanged", "10.0.0.5", 1024, ip4(198, 18, 0, 1), 1024},
  };
  // Every value for UDP (its zero rule is where a shortcut could go wrong), every 7th burst of
  // values for TCP (plain ones'-complement sums): ~1 s under ASan.
  for (const Flow& f : flows) {
    sweep(f, true, 1);
    sweep(f, false, 7);
  }
}

}  // namespace
}  // namespace nfpark::nf
