// acl_bench: AclClassifier (HyperSplit tree) vs linear first-match scan, same rules, same keys,
// same run. Prints build time, tree size and ns/lookup for 1k/10k/20k rules and the ratio.
//   rule sets: "passing" = generate_passing_rules (the firewall's default; traffic misses all
//   rules), "random" = generate_random_rules (overlapping, ~half the keys hit a rule).
// Columns: tree_ns = keys half aimed inside rules, half from 10/8; linear_ns = first-match scan
// over the same keys; gen_ns = keys from 10/8
// only (the generated traffic the default firewall sees). Times are thread CPU time.
// Usage: acl_bench [lookups=200000]
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "nf/acl_classifier.h"
#include "nf/acl_rule.h"

using namespace nfpark;
using namespace nfpark::nf;
// Thread CPU time, not wall time: on a shared, overloaded machine wall time counts the time this
// thread spends descheduled, which inflates every number by the load factor.
struct Clk {
  using time_point = double;
  static double now() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
  }
};
static double secs(double a, double b) {
  return b - a;
}

static std::vector<FlowKey> make_keys(const std::vector<AclRule>& rules, size_t n, uint64_t seed,
                                      bool aim = true) {
  std::vector<FlowKey> keys(n);
  uint64_t s = seed;
  for (auto& k : keys) {
    auto rnd = [&] { return mix64(s += 0x9E3779B97F4A7C15ULL); };
    k.ip_version = 4;
    uint32_t src = uint32_t(rnd()), dst = uint32_t(rnd());
    if (aim && rnd() % 2 && !rules.empty()) {  // aim at a random rule's source and destination
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
  std::printf("%-8s %6s %9s %8s %8s %6s %9s %10s %10s %8s %7s\n", "ruleset", "rules", "build_ms",
              "nodes", "refs", "depth", "mem_KiB", "tree_ns", "linear_ns", "speedup", "gen_ns");
  std::printf(
      "  (then per lookup: trees searched, node hops, leaf rules compared, linear rules "
      "compared)\n");
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
      // Generated-like traffic only (sources in 10/8): what the default firewall sees.
      auto gen = make_keys(rules, keys.size(), 43, false);
      auto tg0 = Clk::now();
      for (const auto& k : gen) sink += c.classify(k);
      double gen_ns = secs(tg0, Clk::now()) * 1e9 / double(gen.size());
      double lin_ns = secs(t4, t5) * 1e9 / double(nlin) - tree_ns;
      const auto& st = c.stats();
      std::printf("%-8s %6zu %9.1f %8zu %8zu %6zu %9zu %10.1f %10.1f %7.0fx %7.1f%s\n", set, n,
                  secs(t0, t1) * 1e3, st.nodes, st.leaf_rule_refs, st.max_depth,
                  st.memory_bytes / 1024, tree_ns, lin_ns, lin_ns / tree_ns, gen_ns,
                  mismatches ? "  MISMATCH" : "");
      double trees = 0, hops = 0, scanned = 0, lin = 0;
      for (size_t i = 0; i < nlin; ++i) {
        uint32_t t, h, sc;
        c.lookup_work(keys[i], t, h, sc);
        trees += t, hops += h, scanned += sc;
        lin += double(std::min(linear_classify(rules, keys[i]) + 1, rules.size()));
      }
      std::printf("  work: %.2f trees, %.1f hops, %.1f leaf rules; linear %.0f rules\n",
                  trees / double(nlin), hops / double(nlin), scanned / double(nlin),
                  lin / double(nlin));
      if (sink == 42) std::puts("");
    }
  }
  return 0;
}
