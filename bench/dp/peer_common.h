// peer_common: what the library peers of peers_lib_bench share — a case that times nfpark's
// structure and a DPDK library's on the same keys, interleaved over N repetitions, and turns the
// result into the `RATIO peer <peer> <what> nfpark/<peer>` lines scripts/bench.sh collects.
//
// Ratio = peer time / nfpark time per lookup (min over the repetitions, thread CPU time; the
// range is over the per-repetition ratios): > 1 means nfpark is faster.
#pragma once
#include <rte_malloc.h>

#include <cstdio>
#include <string>
#include <vector>

#include "bench_stats.h"

namespace nfpark::bench {

struct PeerOpts {
  bool quick = false;
  int reps = 5;
};

// Thread CPU seconds per item of one call of `f` over `n` items.
template <class F>
double per_item(size_t n, F&& f) {
  Stopwatch sw;
  f();
  return sw.cpu() / double(n);
}

// Bytes the DPDK heap (socket 0) has handed out: a library's memory is the difference around
// its creation.
inline size_t dpdk_heap_bytes() {
  rte_malloc_socket_stats st{};
  rte_malloc_get_socket_stats(0, &st);
  return st.heap_allocsz_bytes;
}

// "RATIO peer dpdk-acl 10k-rules gen-keys scalar nfpark/dpdk-acl 1.23x [1.1-1.3, N=5]"
inline std::string peer_ratio(const std::string& peer, const std::string& what, const Ratio& r) {
  return "RATIO peer " + peer + " " + what + " nfpark/" + peer + " " + r.text();
}

// Collected RATIO lines and failures (a mismatch between nfpark and a peer fails the bench).
struct PeerReport {
  std::vector<std::string> ratios;
  bool ok = true;
  void fail(const std::string& what) {
    std::fprintf(stderr, "peers_lib_bench: %s\n", what.c_str());
    ok = false;
  }
};

}  // namespace nfpark::bench
