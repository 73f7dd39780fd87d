// peer_lpm: nfpark's Lpm (the router's) against DPDK's rte_lpm (IPv4) and rte_lpm6 (IPv6) on the
// same routes and the same addresses: build time, memory, ns per lookup, and a check that both
// return the same next hop for every address.
//
// Routes: a BGP-like mix of random prefixes (IPv4: 55% /24, 15% /20-/23, 15% /16-/19, 10%
// /8-/15, 5% /25-/32; IPv6: 50% /48, 30% /32-/47, 15% /49-/64, 5% /65-/128), next hop = index
// mod 1000; 1k and 100k IPv4 routes (NFPARK_LPM_ROUTES=n,n,... for other counts, >= 1000), 1k and
// 20k IPv6 routes. Addresses: 90% inside a random
// route, 10% random. Build time: a one-off first build each (printed) and N interleaved
// rebuilds (the `build` ratio: min over them). One by one: nfpark's Lpm::lookup vs rte_lpm_lookup;
// bursts of 32 (as Router::process looks up a burst): Lpm::lookup_burst_v4 on the same host-order
// array as rte_lpm_lookup_bulk (also printed: Lpm::lookup_burst through pointers to the addresses)
// / rte_lpm6_lookup_bulk_func. nfpark's table is in auto mode and compiled, as the router builds it
// (IPv4: the LpmDir16 image while it fits in 32 MiB, else the LpmRuns image when smaller than its
// DIR-24-8 trie; the line says which, and how much of nfpark's table the kernel put on
// transparent huge pages); its memory is what it maps. Rebuilds on both sides reuse freed memory:
// DPDK's heap, nfpark's MapCache (freed tables' mappings, zeroed on free; how much it keeps after
// the rebuilds is printed).
#pragma once
#include <rte_lpm.h>
#include <rte_lpm6.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "nf/lpm.h"
#include "nf/lpm_prefix.h"
#include "nf/map_cache.h"
#include "peer_common.h"

namespace nfpark::bench {

namespace lpm_peer {

struct Route {
  std::array<uint8_t, 16> addr{};
  int len = 0;
  uint32_t hop = 0;
};

inline std::vector<Route> make_routes(size_t n, bool v6, uint64_t seed) {
  std::vector<Route> out(n);
  uint64_t s = seed;
  auto rnd = [&] { return mix64(s += 0x9E3779B97F4A7C15ULL); };
  for (size_t i = 0; i < n; ++i) {
    Route& r = out[i];
    const uint32_t pick = uint32_t(rnd() % 100);
    if (!v6)
      r.len = pick < 55   ? 24
              : pick < 70 ? 20 + int(rnd() % 4)
              : pick < 85 ? 16 + int(rnd() % 4)
              : pick < 95 ? 8 + int(rnd() % 8)
                          : 25 + int(rnd() % 8);
    else
      r.len = pick < 50   ? 48
              : pick < 80 ? 32 + int(rnd() % 16)
              : pick < 95 ? 49 + int(rnd() % 16)
                          : 65 + int(rnd() % 64);
    const uint64_t a = rnd(), b = rnd();
    std::memcpy(r.addr.data(), &a, 8);
    std::memcpy(r.addr.data() + 8, &b, 8);
    if (v6) r.addr[0] = 0x20, r.addr[1] = 0x01;  // 2001::/16, as global unicast
    nf::mask_prefix(r.addr.data(), v6 ? 16 : 4, r.len);
    r.hop = uint32_t(i % 1000);
  }
  return out;
}

inline std::vector<std::array<uint8_t, 16>> make_addrs(const std::vector<Route>& routes, size_t n,
                                                       uint64_t seed) {
  std::vector<std::array<uint8_t, 16>> out(n);
  uint64_t s = seed;
  auto rnd = [&] { return mix64(s += 0x9E3779B97F4A7C15ULL); };
  for (auto& a : out) {
    const uint64_t x = rnd(), y = rnd();
    std::memcpy(a.data(), &x, 8);
    std::memcpy(a.data() + 8, &y, 8);
    if (rnd() % 10 == 0) continue;  // random address
    const Route& r = routes[rnd() % routes.size()];
    for (int bit = 0; bit < r.len; ++bit) {  // the route's prefix, random host bits
      const uint8_t m = uint8_t(0x80 >> (bit % 8));
      a[size_t(bit / 8)] = uint8_t((a[size_t(bit / 8)] & ~m) | (r.addr[size_t(bit / 8)] & m));
    }
  }
  return out;
}

// AnonHugePages of this process (KiB): the difference around a table's build is what of it the
// kernel backed with 2 MiB pages.
inline size_t anon_huge_kib() {
  size_t kib = 0;
  if (FILE* f = std::fopen("/proc/self/smaps_rollup", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "AnonHugePages: %zu kB", &kib) == 1) break;
    std::fclose(f);
  }
  return kib;
}

inline uint32_t host32(const uint8_t* a) {
  return uint32_t(a[0]) << 24 | uint32_t(a[1]) << 16 | uint32_t(a[2]) << 8 | a[3];
}

}  // namespace lpm_peer

inline void bench_lpm4(size_t n, const PeerOpts& o, PeerReport& rep) {
  using namespace lpm_peer;
  const std::vector<Route> routes = make_routes(n, false, 7 + n);
  const std::string label = "ipv4 " + std::to_string(n / 1000) + "k-routes";
  const size_t thp0 = anon_huge_kib();
  nf::Lpm mine(4);
  Stopwatch sw;
  for (const Route& r : routes) mine.insert(r.addr.data(), r.len, r.hop);
  mine.compile();  // as Router::create: the LpmDir16 image if the table's shape calls for it
  const double nf_build = sw.cpu();
  const size_t nf_thp = anon_huge_kib() - thp0;
  const size_t heap0 = dpdk_heap_bytes();
  rte_lpm_config cfg{};
  cfg.max_rules = uint32_t(n);
  cfg.number_tbl8s = uint32_t(std::max<size_t>(256, n / 2));
  sw = Stopwatch();
  rte_lpm* lpm = rte_lpm_create(("peer_lpm4_" + std::to_string(n)).c_str(), SOCKET_ID_ANY, &cfg);
  if (!lpm) return rep.fail("lpm " + label + ": rte_lpm_create failed");
  for (const Route& r : routes)
    if (rte_lpm_add(lpm, host32(r.addr.data()), uint8_t(r.len), r.hop) != 0)
      return rep.fail("lpm " + label + ": rte_lpm_add failed (tbl8s exhausted?)");
  const double peer_build = sw.cpu();
  const size_t peer_mem = dpdk_heap_bytes() - heap0;
  // Build time, interleaved rebuilds (the first builds above are one-offs, N = 1): nfpark's
  // inserts + compile() against rte_lpm_create + rte_lpm_add; freeing is not timed.
  Ratio build;
  for (int r = 0; r < o.reps; ++r) {
    {
      Stopwatch b;
      nf::Lpm t(4);
      for (const Route& x : routes) t.insert(x.addr.data(), x.len, x.hop);
      t.compile();
      build.variant.add(b.cpu());
    }
    Stopwatch b;
    rte_lpm* l = rte_lpm_create(("peer_lpm4_re_" + std::to_string(n)).c_str(), SOCKET_ID_ANY, &cfg);
    if (!l) return rep.fail("lpm " + label + ": rte_lpm_create failed");
    for (const Route& x : routes) rte_lpm_add(l, host32(x.addr.data()), uint8_t(x.len), x.hop);
    build.base.add(b.cpu());
    rte_lpm_free(l);
  }
  const size_t nkeys = o.quick ? 65536 : 262144;
  const auto addrs = make_addrs(routes, nkeys, 99);
  std::vector<uint32_t> ips(nkeys), got(nkeys);
  size_t bad = 0, hits = 0;
  for (size_t i = 0; i < nkeys; ++i) {
    ips[i] = host32(addrs[i].data());
    uint32_t h = 0;
    const bool hit = rte_lpm_lookup(lpm, ips[i], &h) == 0;
    const uint32_t m = mine.lookup(addrs[i].data());
    bad += hit ? m != h : m != nf::Lpm::kNoRoute;
    hits += hit;
  }
  if (bad) rep.fail("lpm " + label + ": " + std::to_string(bad) + " next hops differ");
  std::vector<const uint8_t*> keys(nkeys);
  for (size_t i = 0; i < nkeys; ++i) keys[i] = addrs[i].data();
  std::vector<uint32_t> mine_got(nkeys);
  mine.lookup_burst(keys.data(), mine_got.data(), nkeys);
  for (size_t i = 0; i < nkeys; ++i) bad += mine_got[i] != mine.lookup(addrs[i].data());
  mine.lookup_burst_v4(ips.data(), mine_got.data(), nkeys);
  for (size_t i = 0; i < nkeys; ++i) bad += mine_got[i] != mine.lookup(addrs[i].data());
  if (bad) rep.fail("lpm " + label + ": nfpark's burst and one-by-one lookups differ");
  Ratio one, bulk, ptrs;
  uint64_t sink = 0;
  // A repetition times kInner interleaved rounds of the five loops (one pass over the keys each,
  // ~0.3 ms at --quick) and keeps each loop's fastest round: at load 20 a preemption's cache
  // damage moved single passes by 2x, and the min of interleaved rounds drops those.
  static constexpr int kInner = 5;
  for (int r = 0; r < o.reps; ++r) {
    double t[5] = {1e9, 1e9, 1e9, 1e9, 1e9};  // nf one, nf ptrs, nf burst, rte one, rte bulk
    for (int k = 0; k < kInner; ++k) {
      t[0] = std::min(t[0], per_item(nkeys, [&] {
                        for (const auto& a : addrs) sink += mine.lookup(a.data());
                      }));
      t[1] = std::min(t[1], per_item(nkeys, [&] {
                        for (size_t i = 0; i + 32 <= nkeys; i += 32)
                          mine.lookup_burst(keys.data() + i, mine_got.data() + i, 32);
                      }));
      t[2] = std::min(t[2], per_item(nkeys, [&] {
                        for (size_t i = 0; i + 32 <= nkeys; i += 32)
                          mine.lookup_burst_v4(ips.data() + i, mine_got.data() + i, 32);
                      }));
      t[3] = std::min(t[3], per_item(nkeys, [&] {
                        for (uint32_t ip : ips) {
                          uint32_t h = 0;
                          sink += rte_lpm_lookup(lpm, ip, &h) == 0 ? h : 0;
                        }
                      }));
      t[4] = std::min(t[4], per_item(nkeys, [&] {
                        for (size_t i = 0; i + 32 <= nkeys; i += 32)
                          rte_lpm_lookup_bulk(lpm, ips.data() + i, got.data() + i, 32);
                      }));
    }
    one.base.add(t[3]), one.variant.add(t[0]);
    bulk.base.add(t[4]), bulk.variant.add(t[2]);
    ptrs.base.add(t[4]), ptrs.variant.add(t[1]);
  }
  if (sink == 1) std::printf(" ");
  std::printf(
      "\nLPM %s: build nfpark %.1f ms (%s), rte_lpm %.1f ms | memory nfpark %zu KiB (%zu KiB "
      "on transparent huge pages), rte_lpm %zu KiB | %.0f%% of addresses routed\n  ns/lookup: "
      "nfpark one by one %.1f, burst of 32 %.1f (%.1f through header pointers) | rte_lpm one by "
      "one %.1f, bulk of 32 %.1f\n",
      label.c_str(), nf_build * 1e3,
      mine.dir16()                ? "DIR-16 image"
      : mine.runs()               ? "18-6-8 runs image"
      : mine.first_stride() == 24 ? "DIR-24-8"
                                  : "DIR-16-8-8",
      peer_build * 1e3, mine.memory_bytes() / 1024, nf_thp, peer_mem / 1024,
      100.0 * double(hits) / double(nkeys), one.variant.min() * 1e9, bulk.variant.min() * 1e9,
      ptrs.variant.min() * 1e9, one.base.min() * 1e9, bulk.base.min() * 1e9);
  std::printf("    nfpark/rte_lpm one-by-one %s, bulk %s (header pointers: %s)\n",
              one.text().c_str(), bulk.text().c_str(), ptrs.text().c_str());
  std::printf(
      "  rebuilds: nfpark %.2f ms, rte_lpm %.2f ms (min); nfpark/rte_lpm build %s | freed tables' "
      "memory nfpark keeps for reuse (MapCache) %zu KiB\n",
      build.variant.min() * 1e3, build.base.min() * 1e3, build.text().c_str(),
      nf::MapCache::global().bytes() / 1024);
  rep.ratios.push_back(peer_ratio("dpdk-lpm", label + " build", build));
  rep.ratios.push_back(peer_ratio("dpdk-lpm", label + " one-by-one", one));
  rep.ratios.push_back(peer_ratio("dpdk-lpm", label + " bulk32", bulk));
  rte_lpm_free(lpm);
}

inline void bench_lpm6(size_t n, const PeerOpts& o, PeerReport& rep) {
  using namespace lpm_peer;
  const std::vector<Route> routes = make_routes(n, true, 11 + n);
  const std::string label = "ipv6 " + std::to_string(n / 1000) + "k-routes";
  nf::Lpm mine(16);
  Stopwatch sw;
  for (const Route& r : routes) mine.insert(r.addr.data(), r.len, r.hop);
  const double nf_build = sw.cpu();
  const size_t heap0 = dpdk_heap_bytes();
  rte_lpm6_config cfg{};
  cfg.max_rules = uint32_t(n);
  cfg.number_tbl8s = uint32_t(n * 8 + 1024);
  sw = Stopwatch();
  rte_lpm6* lpm = rte_lpm6_create(("peer_lpm6_" + std::to_string(n)).c_str(), SOCKET_ID_ANY, &cfg);
  if (!lpm) return rep.fail("lpm " + label + ": rte_lpm6_create failed");
  for (const Route& r : routes)
    if (rte_lpm6_add(lpm, r.addr.data(), uint8_t(r.len), r.hop) != 0)
      return rep.fail("lpm " + label + ": rte_lpm6_add failed");
  const double peer_build = sw.cpu();
  const size_t peer_mem = dpdk_heap_bytes() - heap0;
  Ratio build;  // interleaved rebuilds, as for IPv4
  for (int r = 0; r < o.reps; ++r) {
    {
      Stopwatch b;
      nf::Lpm t(16);
      for (const Route& x : routes) t.insert(x.addr.data(), x.len, x.hop);
      build.variant.add(b.cpu());
    }
    Stopwatch b;
    rte_lpm6* l =
        rte_lpm6_create(("peer_lpm6_re_" + std::to_string(n)).c_str(), SOCKET_ID_ANY, &cfg);
    if (!l) return rep.fail("lpm " + label + ": rte_lpm6_create failed");
    for (const Route& x : routes) rte_lpm6_add(l, x.addr.data(), uint8_t(x.len), x.hop);
    build.base.add(b.cpu());
    rte_lpm6_free(l);
  }
  const size_t nkeys = o.quick ? 65536 : 262144;
  auto addrs = make_addrs(routes, nkeys, 98);
  std::vector<int32_t> got(nkeys);
  auto* raw = reinterpret_cast<uint8_t(*)[RTE_LPM6_IPV6_ADDR_SIZE]>(addrs.data());
  rte_lpm6_lookup_bulk_func(lpm, raw, got.data(), uint32_t(nkeys));
  size_t bad = 0, hits = 0;
  for (size_t i = 0; i < nkeys; ++i) {
    const uint32_t m = mine.lookup(addrs[i].data());
    bad += got[i] < 0 ? m != nf::Lpm::kNoRoute : m != uint32_t(got[i]);
    hits += got[i] >= 0;
  }
  if (bad) rep.fail("lpm " + label + ": " + std::to_string(bad) + " next hops differ");
  std::vector<const uint8_t*> keys(nkeys);
  for (size_t i = 0; i < nkeys; ++i) keys[i] = addrs[i].data();
  std::vector<uint32_t> mine_got(nkeys);
  mine.lookup_burst(keys.data(), mine_got.data(), nkeys);
  for (size_t i = 0; i < nkeys; ++i) bad += mine_got[i] != mine.lookup(addrs[i].data());
  if (bad) rep.fail("lpm " + label + ": nfpark's burst and one-by-one lookups differ");
  Ratio bulk;
  for (int r = 0; r < o.reps; ++r) {
    const double t_nf = per_item(nkeys, [&] {
      for (size_t i = 0; i + 32 <= nkeys; i += 32)
        mine.lookup_burst(keys.data() + i, mine_got.data() + i, 32);
    });
    const double t_bulk = per_item(nkeys, [&] {
      for (size_t i = 0; i + 32 <= nkeys; i += 32)
        rte_lpm6_lookup_bulk_func(lpm, raw + i, got.data() + i, 32);
    });
    bulk.base.add(t_bulk), bulk.variant.add(t_nf);
  }
  std::printf(
      "\nLPM %s: build nfpark %.1f ms, rte_lpm6 %.1f ms | memory nfpark %zu KiB, rte_lpm6 %zu "
      "KiB | %.0f%% routed\n  ns/lookup: nfpark burst of 32 %.1f | rte_lpm6 bulk of 32 %.1f\n",
      label.c_str(), nf_build * 1e3, peer_build * 1e3, mine.memory_bytes() / 1024, peer_mem / 1024,
      100.0 * double(hits) / double(nkeys), bulk.variant.min() * 1e9, bulk.base.min() * 1e9);
  std::printf("    nfpark/rte_lpm6 bulk %s\n", bulk.text().c_str());
  std::printf(
      "  rebuilds: nfpark %.2f ms, rte_lpm6 %.2f ms (min); nfpark/rte_lpm6 build %s | freed "
      "tables' "
      "memory nfpark keeps for reuse (MapCache) %zu KiB\n",
      build.variant.min() * 1e3, build.base.min() * 1e3, build.text().c_str(),
      nf::MapCache::global().bytes() / 1024);
  rep.ratios.push_back(peer_ratio("dpdk-lpm6", label + " build", build));
  rep.ratios.push_back(peer_ratio("dpdk-lpm6", label + " bulk32", bulk));
  rte_lpm6_free(lpm);
}

inline void bench_lpm(const PeerOpts& o, PeerReport& rep) {
  std::vector<size_t> v4 = {1000, 100000};
  if (const char* e = std::getenv("NFPARK_LPM_ROUTES")) {  // e.g. "2000,8000,16000"
    v4.clear();
    for (const char* p = e; *p;) {
      char* end = nullptr;
      const unsigned long long n = std::strtoull(p, &end, 10);
      if (end == p || n < 1000) break;
      v4.push_back(size_t(n));
      p = *end == ',' ? end + 1 : end;
    }
  }
  for (size_t n : v4) bench_lpm4(n, o, rep);
  for (size_t n : {size_t(1000), size_t(20000)}) bench_lpm6(n, o, rep);
}

}  // namespace nfpark::bench
