#include "run/budget.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <fstream>

#include "nf/registry.h"

namespace nfpark::run {

namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kObjHeader = 64;  // rte_mempool_objhdr, cache-line aligned
constexpr uint64_t kMbuf = 128;      // struct rte_mbuf
constexpr uint64_t kBase = 64ull << 20;
constexpr uint64_t kMiB = 1ull << 20;

std::string num(uint64_t v) {
  return std::to_string(v);
}

// Packets the mode may hold at once, which the pools must supply on top of the rings, and the
// setting that decides it.
struct Holds {
  uint64_t packets;
  const char *section, *key;
};
Holds mode_holds(const RunConfig& c) {
  switch (c.mode) {
    case Mode::kPayloadPark:
      return {uint64_t(c.park.slots) * std::max<uint32_t>(c.park.slices, 1), "park", "slots"};
    case Mode::kQueueMem:
      return {c.queuemem.max_held(), "queuemem", "queues"};  // their headers: the header pool
    case Mode::kNfSlicer:  // a ring per worker (run/worker_config.h)
      return {uint64_t(std::bit_ceil(std::max<uint32_t>(c.slicer.entries, 1))) *
                  std::max<uint32_t>(c.slicer.cores, 1) * std::max<uint32_t>(c.workers, 1),
              "nfslicer", "entries"};
    default:
      return {0, "run", "mode"};
  }
}

}  // namespace

uint64_t mbuf_cost(uint32_t room) {
  const uint64_t size = kObjHeader + kMbuf + room;
  if (size >= kPage) return (size + kPage - 1) / kPage * kPage;
  return kPage / (kPage / size);
}

uint64_t Budget::total() const {
  uint64_t t = 0;
  for (const MemoryPart& p : parts) t += p.bytes;
  return t;
}

const MemoryPart& Budget::largest() const {
  return *std::max_element(
      parts.begin(), parts.end(),
      [](const MemoryPart& a, const MemoryPart& b) { return a.bytes < b.bytes; });
}

Budget plan_memory(const RunConfig& c, uint64_t chain_bytes) {
  Budget b;
  b.reframe_hold = c.reframe_us <= 0                ? 0
                   : c.reframe.cfg.max_held_packets ? c.reframe.cfg.max_held_packets
                                                    : kReframeHold;
  const uint64_t per_mbuf = mbuf_cost(kDataRoom) + mbuf_cost(kHeaderRoom) + mbuf_cost(0);
  // --workers N: N NF chains (each its own Reframer) and 4 more rings per extra worker (the
  // traffic port's and the NF link's queues); the stores are shared out (run/worker_config.h).
  const uint32_t workers = std::max<uint32_t>(c.workers, 1);
  uint64_t nic = 0;
  if (c.role == Role::kNf) {
    b.pool_mbufs = c.pool_mbufs ? c.pool_mbufs : (kNfRolePool + b.reframe_hold) * workers;
    b.parts.push_back(
        {"run", "pool_mbufs", "mempools for " + num(b.pool_mbufs) + " packets",
         b.pool_mbufs * mbuf_cost(kDataRoom) + 1024 * (per_mbuf - mbuf_cost(kDataRoom))});
  } else {
    const Holds h = mode_holds(c);
    const uint64_t want = h.packets + uint64_t(b.reframe_hold) * workers +
                          (6 + 4 * (workers - 1)) * uint64_t(kRingSize) + 4096 +
                          2 * kRingSize * (std::max<uint32_t>(c.nf_servers, 1) - 1);
    b.pool_mbufs = c.pool_mbufs ? c.pool_mbufs : uint32_t(std::min<uint64_t>(want, UINT32_MAX));
    const bool given = c.pool_mbufs != 0;
    b.parts.push_back({given ? "run" : h.section, given ? "pool_mbufs" : h.key,
                       "mempools for " + num(b.pool_mbufs) + " packets (" + human_bytes(per_mbuf) +
                           " each without hugepages)",
                       uint64_t(b.pool_mbufs) * per_mbuf});
    if (c.mode == Mode::kNicmem) {
      nic = uint64_t(c.nicmem_mbufs) * mbuf_cost(kDataRoom);
      b.parts.push_back({"nicmem", "pool", "the NIC-memory pool", nic});
    }
  }
  // The pools' share of EAL memory, as the engine has always sized it (nominal sizes, doubled)
  // plus the NIC pool: more than they touch, which costs nothing without hugepages.
  const uint64_t nominal = uint64_t(b.pool_mbufs) * (kDataRoom + kHeaderRoom + 3 * 256) + kBase;
  b.eal_mb = c.mem_mb ? c.mem_mb : uint32_t((2 * nominal + nic) / kMiB + 128);
  if (c.role != Role::kNf) {
    if (c.mode == Mode::kPayloadPark)
      b.parts.push_back({"park", "slots", "PayloadPark slot tables",
                         uint64_t(c.park.slots) * std::max<uint32_t>(c.park.slices, 1) * 32});
    if (c.mode == Mode::kQueueMem)
      b.parts.push_back({"queuemem", "header_array",
                         "the QUEUE-MEM header array, queues and flow summary",
                         uint64_t(c.queuemem.header_array) * 36 + c.queuemem.max_held() * 56 +
                             uint64_t(c.queuemem.ports) * c.queuemem.queues * 64});
    if (c.mode == Mode::kNfSlicer)
      b.parts.push_back({"nfslicer", "entries", "NFSlicer rings",
                         uint64_t(std::bit_ceil(std::max<uint32_t>(c.slicer.entries, 1))) * 40});
  }
  if (b.reframe_hold)
    b.parts.push_back({"run", "reframe_us", "Reframer's buffers and flow table",
                       (uint64_t(b.reframe_hold) * 17 + (2ull << 20) * 64) * workers});
  if (chain_bytes) b.parts.push_back({"run", "chain", "the NF chain's tables", chain_bytes});
  b.parts.push_back({"run", "mode", "EAL, rings and code", kBase});
  return b;
}

uint64_t available_memory() {
  std::ifstream f("/proc/meminfo");
  std::string key, unit;
  uint64_t v = 0;
  while (f >> key >> v >> unit)
    if (key == "MemAvailable:") return v * 1024;
  return UINT64_MAX;
}

std::string human_bytes(uint64_t b) {
  char s[32];
  if (b >= (1ull << 30))
    std::snprintf(s, sizeof s, "%.1f GiB", double(b) / double(1ull << 30));
  else if (b >= kMiB)
    std::snprintf(s, sizeof s, "%.1f MiB", double(b) / double(kMiB));
  else
    std::snprintf(s, sizeof s, "%llu KiB", (unsigned long long)((b + 1023) / 1024));
  return s;
}

bool check_memory(const Loader& l, uint64_t available, Budget& out, std::string& err) {
  const RunConfig& c = l.config();
  uint64_t chain_bytes = 0;
  std::string nerr;
  if (c.role != Role::kSwitch && !nf::check_chain(c.chain, c.nf_config.get(), nerr, &chain_bytes))
    return (err = l.where("run", "chain") + ": " + nerr), false;
  out = plan_memory(c, chain_bytes);
  const MemoryPart& big = out.largest();
  if (out.total() > available) {
    err = "not enough memory: " + l.where(big.section, big.key) + " needs " +
          human_bytes(big.bytes) + " for " + big.what + ", " + human_bytes(out.total()) +
          " in all, and " + human_bytes(available) + " is available; lower it";
    return false;
  }
  const uint64_t pools = out.parts.front().bytes +
                         (c.mode == Mode::kNicmem && c.role != Role::kNf ? out.parts[1].bytes : 0);
  if (c.mem_mb && uint64_t(c.mem_mb) * kMiB < pools + kBase) {
    err = l.where("run", "mem_mb") + ": " + num(c.mem_mb) + " MiB is less than the " +
          num((pools + kBase) / kMiB + 1) + " MiB the mempools need (" +
          l.where(out.parts.front().section, out.parts.front().key) + "); raise it or leave it 0";
    return false;
  }
  return true;
}

}  // namespace nfpark::run
