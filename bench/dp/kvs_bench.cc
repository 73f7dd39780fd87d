// kvs_bench: GET throughput of `nfpark kvs` with hot values sent zero-copy vs copied, for
// 64 B, 1 KiB and 4 KiB values, under a skewed (Zipf 0.99) and a uniform key popularity.
//
// Rig: the real KvsEngine on a ring port, one lcore. Per burst of 32: 32 request frames are
// allocated and filled (as a NIC would deliver them), the engine polls them, and every reply
// mbuf is freed without its payload being read — a NIC DMA-reads the bytes, the CPU does not.
// Two engines hold the same 16384 items: "zero-copy" (64 MiB hot region, frequency-promoted
// hot set, hot values attached as external segments) and "copy" (no hot set: every value is
// copied from the item log into the reply, once). Each repetition runs both over the same key
// sequence, interleaved; the hot set is warmed first. Ratio = copy time / zero-copy time per
// GET (thread CPU): > 1 means zero-copy serves more GETs per second.
// What this machine can show: with no NIC, "NIC memory" is host memory, so the gain is only the
// copy avoided (CPU cycles and cache footprint), not the PCIe and memory-bandwidth relief the
// paper measures (+21% to +79% on MICA, whose baseline copies twice).
#include <rte_ring.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "bench_stats.h"
#include "core/bytes.h"
#include "core/checksum.h"
#include "dp/eal.h"
#include "dp/kvs_engine.h"
#include "dp/mbuf_pool.h"

namespace nfpark::bench {
namespace {

constexpr uint32_t kKeys = 16384, kServerIp = 0x0A000002, kClientIp = 0x0A000001;
constexpr Nanos kNow = 1'700'000'000 * kSecond;

std::string key(uint32_t i) {
  return "key:" + std::to_string(i);
}

struct Rig {
  dp::KvsEngine engine;
  rte_ring *rx = nullptr, *tx = nullptr;
  std::vector<std::vector<uint8_t>> requests;  // one GET frame per key

  bool init(const char* name, uint32_t value, bool zero_copy, std::string& err) {
    dp::KvsEngineConfig c;
    c.ip = kServerIp;
    c.zero_copy = zero_copy;
    c.nicmem_bytes = 64ull << 20;
    c.mbufs = 16384;
    c.server.cache.log_bytes = std::max<uint64_t>(16ull << 20, uint64_t(kKeys) * (value + 64) * 2);
    c.server.cache.hot_items = kKeys;
    if (!engine.init(c, err) || !engine.open_ring(name, rx, tx, err)) return false;
    std::mt19937_64 rng(value);
    std::string v(value + 2, 'v');
    for (uint32_t i = 0; i < kKeys; ++i) {
      for (uint32_t j = 0; j < value; j += 8) v[j] = char('a' + rng() % 26);
      v[value] = '\r';
      v[value + 1] = '\n';
      engine.server().cache().store(kvs::Cache::Mode::kSet, key(i), 0, 0,
                                    reinterpret_cast<const uint8_t*>(v.data()), value + 2, 0, kNow);
      requests.push_back(frame("get " + key(i) + "\r\n"));
    }
    return true;
  }
  std::vector<uint8_t> frame(const std::string& body) const {
    std::vector<uint8_t> f(50 + body.size());
    std::memcpy(f.data(), engine.endpoint().mac().data(), 6);
    f[6] = 0x02;
    store_be16(f.data() + 12, 0x0800);
    uint8_t* ip = f.data() + 14;
    ip[0] = 0x45;
    store_be16(ip + 2, uint16_t(f.size() - 14));
    ip[8] = 64;
    ip[9] = 17;
    store_be32(ip + 12, kClientIp);
    store_be32(ip + 16, kServerIp);
    store_be16(ip + 10, ipv4_header_checksum(ip, 20));
    store_be16(ip + 20, 40000);
    store_be16(ip + 22, 11211);
    store_be16(ip + 24, uint16_t(16 + body.size()));
    store_be16(ip + 32, 1);
    std::memcpy(ip + 36, body.data(), body.size());
    return f;
  }
  // Runs the GETs of `keys` through the engine; returns false if a reply went missing.
  bool run(const std::vector<uint32_t>& keys, rte_mempool* req_pool) {
    rte_mbuf* in[dp::kBurst];
    void* out[512];
    for (size_t i = 0; i < keys.size(); i += dp::kBurst) {
      const unsigned n = unsigned(std::min<size_t>(dp::kBurst, keys.size() - i));
      if (rte_pktmbuf_alloc_bulk(req_pool, in, n) != 0) return false;
      for (unsigned k = 0; k < n; ++k) {
        const std::vector<uint8_t>& f = requests[keys[i + k]];
        std::memcpy(rte_pktmbuf_append(in[k], uint16_t(f.size())), f.data(), f.size());
      }
      rte_ring_enqueue_burst(rx, reinterpret_cast<void**>(in), n, nullptr);
      engine.poll(kNow);
      for (unsigned got; (got = rte_ring_dequeue_burst(tx, out, 512, nullptr)) > 0;)
        rte_pktmbuf_free_bulk(reinterpret_cast<rte_mbuf**>(out), got);
    }
    return true;
  }
};

std::vector<uint32_t> key_sequence(bool zipf, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint32_t> ks(n);
  if (!zipf) {
    for (auto& k : ks) k = uint32_t(rng() % kKeys);
    return ks;
  }
  std::vector<double> cdf(kKeys);
  double sum = 0;
  for (uint32_t i = 0; i < kKeys; ++i) cdf[i] = sum += 1.0 / std::pow(double(i + 1), 0.99);
  // Popular keys scattered over the key space (not key:0, key:1, ...).
  std::vector<uint32_t> perm(kKeys);
  for (uint32_t i = 0; i < kKeys; ++i) perm[i] = i;
  std::shuffle(perm.begin(), perm.end(), rng);
  for (auto& k : ks) {
    const double u = std::uniform_real_distribution<double>(0, sum)(rng);
    k = perm[size_t(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin())];
  }
  return ks;
}

bool bench(uint32_t value, bool zipf, bool quick, rte_mempool* req_pool,
           std::vector<std::string>& summary) {
  static int n = 0;
  std::string err;
  Rig zc, cp;
  if (!zc.init(("kb_zc" + std::to_string(n)).c_str(), value, true, err) ||
      !cp.init(("kb_cp" + std::to_string(n++)).c_str(), value, false, err)) {
    std::fprintf(stderr, "kvs_bench: %s\n", err.c_str());
    return false;
  }
  const size_t per_rep = quick ? 60000 : 300000;
  const int reps = quick ? 3 : 5;
  const std::vector<uint32_t> warm = key_sequence(zipf, per_rep, 1);
  if (!zc.run(warm, req_pool) || !cp.run(warm, req_pool)) return false;
  CounterMap before;
  zc.engine.counters(before.sink());
  Ratio r;
  for (int rep = 0; rep < reps; ++rep) {
    const std::vector<uint32_t> ks = key_sequence(zipf, per_rep, 100 + uint64_t(rep));
    Stopwatch a;
    if (!cp.run(ks, req_pool)) return false;
    r.base.add(a.cpu() / double(ks.size()));
    Stopwatch b;
    if (!zc.run(ks, req_pool)) return false;
    r.variant.add(b.cpu() / double(ks.size()));
  }
  CounterMap after;
  zc.engine.counters(after.sink());
  auto d = [&](const char* k) { return double(after.get(k) - before.get(k)); };
  const double gets = d("gets");
  const char* dist = zipf ? "zipf0.99" : "uniform";
  std::printf(
      "  %5u B  %-9s copy %6.3f Mget/s  zero-copy %6.3f Mget/s  %-26s hot hits %5.1f%%  "
      "zc bytes/get %6.0f  copied bytes/get %6.0f\n",
      value, dist, 1e-6 / r.base.min(), 1e-6 / r.variant.min(), r.text().c_str(),
      100 * d("hot_hits") / gets, d("bytes_zero_copy") / gets, d("bytes_copied") / gets);
  summary.push_back("RATIO kvs zero-copy/copy " + std::to_string(value) + "B " + dist +
                    " GET-rate " + r.text());
  zc.engine.close();
  cp.engine.close();
  if (!zc.engine.pools_full() || !cp.engine.pools_full()) {
    std::fprintf(stderr, "kvs_bench: an mbuf leaked\n");
    return false;
  }
  return true;
}

}  // namespace
}  // namespace nfpark::bench

int main(int argc, char** argv) {
  using namespace nfpark;
  const bool quick = bench::parse_quick(argc, argv,
                                        "usage: kvs_bench [--quick]\n"
                                        "  GET rate, hot values zero-copy vs copied\n");
  dp::EalOptions eo;
  eo.mem_mb = 768;
  std::string err;
  if (!dp::eal_init(eo, err)) {
    std::fprintf(stderr, "kvs_bench: %s\n", err.c_str());
    return 1;
  }
  rte_mempool* req = dp::mbuf_pool_create("kb_req", 4096, 256, RTE_MBUF_DEFAULT_BUF_SIZE);
  std::printf("kvs_bench%s: one lcore, EAL --no-huge, ring port, %u keys, GETs in bursts of 32\n",
              quick ? " --quick" : "", bench::kKeys);
  std::vector<std::string> summary;
  bool ok = req != nullptr;
  // NFPARK_BENCH_ONLY=4096:zipf (or 64:uniform, ...): one case only (e.g. under perf record).
  const char* only = std::getenv("NFPARK_BENCH_ONLY");
  for (uint32_t v : {64u, 1024u, 4096u}) {
    for (bool zipf : {true, false}) {
      const std::string name = std::to_string(v) + (zipf ? ":zipf" : ":uniform");
      if (only && name != only) continue;
      ok = ok && bench::bench(v, zipf, quick, req, summary);
    }
  }
  std::printf("\n");
  for (const auto& l : summary) std::printf("%s\n", l.c_str());
  rte_mempool_free(req);
  dp::eal_cleanup();
  return ok ? 0 : 1;
}
