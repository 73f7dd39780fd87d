// peers_lib_bench: nfpark's own lookup structures against DPDK's libraries, same keys, same rules,
// same run (issue 19): the firewall's ACL classifier vs rte_acl (1k/10k/20k rules; scalar and
// every vector path), the router's LPM vs rte_lpm / rte_lpm6, the NFs' flow table vs rte_hash
// and its lock-free variant (1k and 1M flows, hit and miss). Each case checks that nfpark and the
// library give the same answer for every key before it times them; a disagreement fails the run.
//
//   peers_lib_bench            full run (5 reps, 256k lookups per case; ~1-2 min of CPU)
//   peers_lib_bench --quick    3 reps, 64k lookups (< 30 s of CPU)
//   NFPARK_BENCH_ONLY=acl|lpm|hash   one section
//   peers_lib_bench --write-rules N FILE   writes the firewall's default N rules (seed 1) as a
//                                          rule file (for the peers that need them as text)
//
// Every ratio is the peer's time per lookup over nfpark's (min over the interleaved reps, thread
// CPU time; [range of the per-rep ratios]): > 1 = nfpark faster. Printed at the end as
// `RATIO peer <peer> <what> nfpark/<peer>` lines (scripts/bench.sh --peers collects them).
// EAL runs without hugepages (4 KiB pages: more TLB misses for the 1M-flow tables, both sides).
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "dp/eal.h"
#include "peer_acl.h"
#include "peer_common.h"
#include "peer_hash.h"
#include "peer_lpm.h"

using namespace nfpark;
using namespace nfpark::bench;

// The firewall's default rule set in rule-file syntax (acl_rule.h), one rule per line.
static int write_rules(const char* n, const char* path) {
  std::ofstream out(path);
  for (const nf::AclRule& r : nf::generate_passing_rules(std::strtoull(n, nullptr, 10), 1))
    out << r.to_string() << "\n";
  out.close();
  if (!out) std::fprintf(stderr, "peers_lib_bench: cannot write %s\n", path);
  return out ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--write-rules") == 0) return write_rules(argv[2], argv[3]);
  PeerOpts o;
  o.quick = parse_quick(argc, argv,
                        "usage: peers_lib_bench [--quick]\n"
                        "  nfpark's ACL, LPM and flow table vs rte_acl, rte_lpm(6), rte_hash\n");
  o.reps = o.quick ? 3 : 5;
  dp::EalOptions eo;
  eo.mem_mb = 3072;  // the 1M-flow rte_hash tables and the 20k-rule rte_acl contexts
  eo.extra.push_back("--force-max-simd-bitwidth=512");  // rte_acl's AVX-512 paths
  std::string err;
  if (!dp::eal_init(eo, err)) {
    std::fprintf(stderr, "peers_lib_bench: %s\n", err.c_str());
    return 1;
  }
  const char* only = std::getenv("NFPARK_BENCH_ONLY");
  auto want = [&](const char* s) { return !only || !*only || std::strcmp(only, s) == 0; };
  std::printf("peers_lib_bench%s: %d reps, thread CPU time, ratio = peer time / nfpark time\n",
              o.quick ? " --quick" : "", o.reps);
  PeerReport rep;
  if (want("acl")) bench_acl(o, rep);
  if (want("lpm")) bench_lpm(o, rep);
  if (want("hash")) bench_hash(o, rep);
  std::printf("\n");
  for (const std::string& l : rep.ratios) std::printf("%s\n", l.c_str());
  dp::eal_cleanup();
  return rep.ok ? 0 : 1;
}
