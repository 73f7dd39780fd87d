// acl_bench: AclClassifier (HyperSplit tree) vs linear first-match scan, same rules, same keys,
// same run. Prints build time, tree size and ns/lookup for 1k/10k/20k rules and the ratio.
//   rule sets: "passing" = generate_passing_rules (the firewall's default; traffic misses all
//   rules), "random" = generate_random_rules (overlapping, ~half the keys hit a rule).
// Usage: acl_bench [lookups=200000]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "nf/acl_classifier.h"
#include "nf/acl_rule.h"

using namespace nfpark;
using namespace nfpark::nf;
using Clk = std::chrono::steady_clock;

static double secs(Clk::time_point a, Clk::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

static std::vector<FlowKey> make_keys(const std::vector<AclRule>& rules, size_t n, uint64_t seed) {
  std::vector<FlowKey> keys(n);
  uint64_t s = seed;
  for (auto& k : keys) {
    auto rnd = [&] { return mix64(s += 0x9E3779B97F4A7C15ULL); };
    k.ip_version = 4;
    uint32_t src = uint32_t(rnd()), dst = uint32_t(rnd());
    if (rnd() % 2 && !rules.empty()) {  // aim at a random rule's source and destination
      const AclRule& r = rules[rnd() % rules.size()];
      if (r.src.family == 4)
        src = uint32_t(r.src.addr[0]) << 24 | uint32_t(r.src.addr[1]) << 16 | (src & 0xFFFF);
      if (r.dst.family == 4)
        dst = uint32_t(r.dst.addr[0]) << 24 | uint32_t(r.dst.addr[1]) << 16 | (dst & 0xFFFF);
    } else {
      src = 0x0A000000u | (src & 0x00FFFFFF);  // 10/8 like generated traffic
    }
    for (int i = 0; i < 4; ++i)
      k.src[size_t(12 + i)] = uint8_t(src >> (24 - 8 * i)),
                        k.dst[size_t(12 + i)] = uint8_t(dst >> (24 - 8 * i));
    k.proto = rnd() % 3 ? 6 : 17;
    k.sport = uint16_t(1024 + rnd() % 60000);
    k.dport = uint16_t(rnd() % 2 ? 80 + rnd() % 1000 : rnd());
    k = acl_key(k);
  }
  return keys;
}

int main(int argc, char** argv) {
  size_t lookups = argc > 1 ? size_t(std::atoll(argv[1])) : 200000;
  std::printf("%-8s %6s %9s %8s %8s %6s %9s %10s %10s %8s\n", "ruleset", "rules", "build_ms",
              "nodes", "refs", "depth", "mem_KiB", "tree_ns", "linear_ns", "speedup");
  for (const char* set : {"passing", "random"}) {
    for (size_t n : {1000, 10000, 20000}) {
      auto rules = std::strcmp(set, "passing") == 0 ? generate_passing_rules(n, 1)
                                                    : generate_random_rules(n, 1);
      AclClassifier c;
      auto t0 = Clk::now();
      c.build(rules);
      auto t1 = Clk::now();
      auto keys = make_keys(rules, lookups, 42);
      uint64_t sink = 0;
      auto t2 = Clk::now();
      for (const auto& k : keys) sink += c.classify(k);
      auto t3 = Clk::now();
      size_t nlin = std::max<size_t>(2000, lookups / (n / 100));
      nlin = std::min(nlin, keys.size());
      size_t mismatches = 0;
      auto t4 = Clk::now();
      for (size_t i = 0; i < nlin; ++i) {
        size_t w = linear_classify(rules, keys[i]);
        sink += w;
        mismatches +=
            (w == rules.size() ? AclClassifier::kNoMatch : uint32_t(w)) != c.classify(keys[i]);
      }
      auto t5 = Clk::now();
      double tree_ns = secs(t2, t3) * 1e9 / double(keys.size());
      double lin_ns = secs(t4, t5) * 1e9 / double(nlin) - tree_ns;
      const auto& st = c.stats();
      std::printf("%-8s %6zu %9.1f %8zu %8zu %6zu %9zu %10.1f %10.1f %7.0fx%s\n", set, n,
                  secs(t0, t1) * 1e3, st.nodes, st.leaf_rule_refs, st.max_depth,
                  st.memory_bytes / 1024, tree_ns, lin_ns, lin_ns / tree_ns,
                  mismatches ? "  MISMATCH" : "");
      if (sink == 42) std::puts("");
    }
  }
  return 0;
}
