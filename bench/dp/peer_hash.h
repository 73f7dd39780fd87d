// peer_hash: nfpark's FlowTable (the flow table of nat, lb, counter, ratelimit) against DPDK's
// rte_hash, plain and lock-free (RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF), on the same 40-byte
// FlowKeys: insert time, memory, ns per lookup in bursts of 32 for keys present (hit) and
// absent (miss), at 1k and 1M flows; and a check that both find exactly the keys inserted.
//
// Both are asked for the same capacity (flows * 5 / 4 entries: nfpark's NFs size their tables
// as max_flows and FlowTable over-provisions by 5/4 inside; rte_hash gets that many entries).
// rte_hash hashes with rte_hash_crc (SSE4.2 CRC32, what l3fwd uses); nfpark with FlowKeyHash64.
// Insert: nfpark in bursts of 32 as its NFs insert (and one by one), rte_hash one by one (it has
// no burst add); one build each, N = 1; then one by one both, N interleaved rebuilds. Only the
// inserts are timed (a table's creation is not, on either side).
// A burst: rte_hash_lookup_bulk_data (hash, prefetch, compare inside), nfpark's batched find
// (hash all, prefetch both tag lines, prefetch the matching entry, compare) as the NFs do it,
// without refreshing last_seen (a lookup only, like rte_hash's).
#pragma once
#include <rte_hash.h>
#include <rte_hash_crc.h>

#include <algorithm>

#include "core/flow_key.h"
#include "nf/flow_table.h"
#include "peer_common.h"

namespace nfpark::bench {

namespace hash_peer {

inline FlowKey key_of(uint32_t i) {
  FlowKey k;
  k.ip_version = 4;
  k.proto = 6;
  k.src[12] = 10, k.src[13] = uint8_t(i >> 16), k.src[14] = uint8_t(i >> 8);
  k.src[15] = uint8_t(i);
  k.dst[12] = 192, k.dst[13] = 0, k.dst[14] = 2, k.dst[15] = uint8_t(i * 13);
  k.sport = uint16_t(1024 + i * 7);
  k.dport = 443;
  return k;
}

using Table = nf::FlowTable<FlowKey, uint64_t, FlowKeyHash64>;

// Looks up keys[0..n) in bursts of 32; returns how many were found.
inline uint64_t nfpark_bursts(Table& t, const std::vector<FlowKey>& keys) {
  uint64_t h[32], found = 0;
  for (size_t i = 0; i + 32 <= keys.size(); i += 32) {
    for (size_t j = 0; j < 32; ++j) {
      h[j] = t.hash(keys[i + j]);
      t.prefetch_buckets(h[j]);
    }
    for (size_t j = 0; j < 32; ++j) t.prefetch_entry(h[j]);
    for (size_t j = 0; j < 32; ++j) {
      const uint32_t s = t.find(keys[i + j], h[j], 0, false);
      found += s != Table::kNone;
    }
  }
  return found;
}

inline uint64_t rte_bursts(const rte_hash* h, std::vector<const void*>& ptrs) {
  uint64_t found = 0, mask = 0;
  void* data[32];
  for (size_t i = 0; i + 32 <= ptrs.size(); i += 32) {
    found += uint64_t(rte_hash_lookup_bulk_data(h, ptrs.data() + i, 32, &mask, data));
  }
  return found;
}

// An rte_hash for FlowKeys with `entries` slots (rte_hash_crc), the bench's two peers by `flags`.
inline rte_hash* create_table(const std::string& name, size_t entries, uint32_t flags) {
  rte_hash_parameters prm{};
  prm.name = name.c_str();
  prm.entries = uint32_t(entries);
  prm.key_len = sizeof(FlowKey);
  prm.hash_func = rte_hash_crc;
  prm.socket_id = SOCKET_ID_ANY;
  prm.extra_flag = flags;
  return rte_hash_create(&prm);
}

}  // namespace hash_peer

inline void bench_hash_flows(size_t flows, const PeerOpts& o, PeerReport& rep) {
  using namespace hash_peer;
  const std::string label = flows >= 1'000'000 ? std::to_string(flows / 1'000'000) + "M-flows"
                                               : std::to_string(flows / 1000) + "k-flows";
  const size_t entries = flows + flows / 4;
  // nfpark one by one, as rte_hash_add_key_data (rte_hash has no burst add).
  const auto insert_one_by_one = [&](Table& t) {
    bool ins;
    for (uint32_t i = 0; i < flows; ++i) {
      const FlowKey k = key_of(i);
      const uint32_t s = t.find_or_insert(k, t.hash(k), 0, ins);
      if (s != Table::kNone) t.at(s).value = i;
    }
  };
  double nf_one = 0;
  {
    Table one(flows, 0);
    Stopwatch sw1;
    insert_one_by_one(one);
    nf_one = sw1.cpu();
    if (one.size() != flows) return rep.fail("hash " + label + ": nfpark insert failed");
  }
  // In bursts of 32, as the NFs insert new flows (KeyedBurst: hash all, prefetch the tag lines,
  // prefetch the entries for insert, then find_or_insert).
  Table mine(flows, 0);
  Stopwatch sw;
  {
    FlowKey k[32];
    uint64_t h[32];
    bool ins;
    for (uint32_t i = 0; i < flows; i += 32) {
      const uint32_t n = std::min<uint32_t>(32, uint32_t(flows) - i);
      for (uint32_t j = 0; j < n; ++j) {
        k[j] = key_of(i + j);
        h[j] = mine.hash(k[j]);
        mine.prefetch_buckets(h[j]);
      }
      for (uint32_t j = 0; j < n; ++j) mine.prefetch_entry(h[j], true);
      for (uint32_t j = 0; j < n; ++j) {
        const uint32_t s = mine.find_or_insert(k[j], h[j], 0, ins);
        if (s != Table::kNone) mine.at(s).value = i + j;
      }
    }
  }
  const double nf_build = sw.cpu();
  if (mine.size() != flows) return rep.fail("hash " + label + ": nfpark burst insert failed");
  struct Peer {
    const char* name;
    uint8_t flags;
    rte_hash* h = nullptr;
    double build = 0;
    size_t mem = 0;
  };
  Peer peers[] = {{"dpdk-hash", 0}, {"dpdk-hash-lf", RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF}};
  for (Peer& p : peers) {
    const size_t heap0 = dpdk_heap_bytes();
    p.h =
        create_table(std::string("peer_") + p.name + "_" + std::to_string(flows), entries, p.flags);
    if (!p.h) return rep.fail("hash " + label + ": rte_hash_create failed");
    sw = Stopwatch();  // the inserts only, as nfpark's (its construction is not timed either)
    for (uint32_t i = 0; i < flows; ++i) {
      const FlowKey k = key_of(i);
      if (rte_hash_add_key_data(p.h, &k, reinterpret_cast<void*>(uintptr_t(i))) != 0)
        return rep.fail("hash " + label + ": rte_hash_add_key_data failed");
    }
    p.build = sw.cpu();
    p.mem = dpdk_heap_bytes() - heap0;
  }
  std::printf(
      "\nflow table %s (capacity %zu): insert nfpark %.1f ns/flow in bursts (%.1f one by one), "
      "rte_hash %.1f, lock-free %.1f | memory nfpark %zu KiB, rte_hash %zu KiB, lock-free %zu "
      "KiB\n",
      label.c_str(), entries, nf_build * 1e9 / double(flows), nf_one * 1e9 / double(flows),
      peers[0].build * 1e9 / double(flows), peers[1].build * 1e9 / double(flows),
      mine.bytes() / 1024, peers[0].mem / 1024, peers[1].mem / 1024);
  for (size_t i = 0; i < 2; ++i) {  // insert: one build each (N = 1)
    Ratio r;
    r.base.add(peers[i].build / double(flows)), r.variant.add(nf_build / double(flows));
    rep.ratios.push_back(peer_ratio(i ? "dpdk-hash-lf" : "dpdk-hash", label + " insert", r));
  }
  // One by one, N interleaved rebuilds into fresh tables (creating them is not timed): nfpark's
  // find_or_insert against rte_hash_add_key_data, plain and lock-free.
  Ratio one_by_one[2];
  for (int rr = 0; rr < o.reps; ++rr) {
    {
      Table t(flows, 0);
      Stopwatch b;
      insert_one_by_one(t);
      const double v = b.cpu() / double(flows);
      one_by_one[0].variant.add(v), one_by_one[1].variant.add(v);
    }
    for (size_t i = 0; i < 2; ++i) {
      rte_hash* h =
          create_table(std::string("peer_re_") + peers[i].name + "_" + std::to_string(flows),
                       entries, peers[i].flags);
      if (!h) return rep.fail("hash " + label + ": rte_hash_create failed");
      Stopwatch b;
      for (uint32_t f = 0; f < flows; ++f) {
        const FlowKey k = key_of(f);
        rte_hash_add_key_data(h, &k, reinterpret_cast<void*>(uintptr_t(f)));
      }
      one_by_one[i].base.add(b.cpu() / double(flows));
      rte_hash_free(h);
    }
  }
  std::printf(
      "  insert one by one, %d rebuilds: nfpark %.1f ns/flow | rte_hash %.1f | lock-free "
      "%.1f (min)\n    nfpark/rte_hash %s, nfpark/lock-free %s\n",
      o.reps, one_by_one[0].variant.min() * 1e9, one_by_one[0].base.min() * 1e9,
      one_by_one[1].base.min() * 1e9, one_by_one[0].text().c_str(), one_by_one[1].text().c_str());
  for (size_t i = 0; i < 2; ++i)
    rep.ratios.push_back(
        peer_ratio(i ? "dpdk-hash-lf" : "dpdk-hash", label + " insert-one-by-one", one_by_one[i]));
  const size_t n = o.quick ? 131072 : 524288;
  for (bool hit : {true, false}) {
    const char* kname = hit ? "hit" : "miss";
    std::vector<FlowKey> keys(n);
    uint64_t s = 5;
    for (FlowKey& k : keys) {
      const uint32_t i = uint32_t(mix64(s += 0x9E3779B97F4A7C15ULL) % flows);
      k = key_of(hit ? i : uint32_t(flows + i));
    }
    std::vector<const void*> ptrs(n);
    for (size_t i = 0; i < n; ++i) ptrs[i] = &keys[i];
    const uint64_t expect = hit ? n / 32 * 32 : 0;
    if (nfpark_bursts(mine, keys) != expect)
      rep.fail("hash " + label + " " + kname + ": nfpark found a wrong number of keys");
    for (Peer& p : peers)
      if (rte_bursts(p.h, ptrs) != expect)
        rep.fail("hash " + label + " " + kname + ": " + p.name + " found a wrong number");
    Ratio r0, r1;
    for (int r = 0; r < o.reps; ++r) {
      const double t_nf = per_item(n, [&] { nfpark_bursts(mine, keys); });
      const double t0 = per_item(n, [&] { rte_bursts(peers[0].h, ptrs); });
      const double t1 = per_item(n, [&] { rte_bursts(peers[1].h, ptrs); });
      r0.base.add(t0), r0.variant.add(t_nf);
      r1.base.add(t1), r1.variant.add(t_nf);
    }
    std::printf("  %-4s ns/lookup: nfpark %.1f | rte_hash %.1f | lock-free %.1f\n", kname,
                r0.variant.min() * 1e9, r0.base.min() * 1e9, r1.base.min() * 1e9);
    std::printf("    nfpark/rte_hash %s, nfpark/lock-free %s\n", r0.text().c_str(),
                r1.text().c_str());
    rep.ratios.push_back(peer_ratio("dpdk-hash", label + " " + kname, r0));
    rep.ratios.push_back(peer_ratio("dpdk-hash-lf", label + " " + kname, r1));
  }
  for (Peer& p : peers) rte_hash_free(p.h);
}

inline void bench_hash(const PeerOpts& o, PeerReport& rep) {
  for (size_t flows : {size_t(1000), size_t(1'000'000)}) bench_hash_flows(flows, o, rep);
}

}  // namespace nfpark::bench
