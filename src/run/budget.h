// Budget: the memory a run will take, estimated from its config before anything is allocated,
// and the pool sizes the engine then creates (one rule for the dataplane and the simulator).
//
// What it counts (bytes the run touches, not what it reserves):
//   mempools   three pools of `pool_mbufs` mbufs (packets 2176 B rooms, headers 384 B, indirect
//              0 B) sized to what the mode can hold (PayloadPark slots x slices, 2 x QUEUE-MEM
//              queues x batch, NFSlicer entries), plus Reframer's 16384 and the rings' 6 x 4096.
//              Without hugepages DPDK keeps each object inside one 4 KiB page, so an object of
//              64 (header) + 128 (mbuf) + room bytes costs 4096 / floor(4096 / size): 4096 B for
//              a packet mbuf, 585 B for a header mbuf, 195 B for an indirect one — 4876 B for the
//              three, where the nominal sizes add up to 3136 B. Measured (peak RSS, PayloadPark,
//              slots 262144 -> 1048576; pool_mbufs 20000 -> 200000): 4.86-4.89 KiB per slot.
//   nicmem     the NIC-memory pool (nicmem mode): 4096 B per packet.
//   tables     PayloadPark slot tables (32 B a slot), the QUEUE-MEM header array (24 B an entry)
//              and queues (24 B a payload), NFSlicer rings (40 B an entry, rounded up to a power
//              of two), Reframer (17 B a held packet; 64 B a flow-table slot, 2^21 for its
//              default 1M flows), and the NF chain's tables (nf::check_chain).
//   base       64 MiB: EAL, rings, code.
// check_memory() refuses a run whose total exceeds the memory available, naming the setting
// behind the largest part and what it needs; and an --mem-mb below what the pools need.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "run/load.h"
#include "run/run_config.h"

namespace nfpark::run {

// Shared with src/dp (static_assert there): ring size, mbuf data rooms, NIC-pool cost.
constexpr uint32_t kRingSize = 4096;
constexpr uint32_t kDataRoom = 2048 + 128;   // RTE_MBUF_DEFAULT_BUF_SIZE
constexpr uint32_t kHeaderRoom = 256 + 128;  // header mbufs: 256 B + RTE_PKTMBUF_HEADROOM
constexpr uint32_t kReframeHold = 16384;     // packets Reframer may hold
constexpr uint32_t kNfRolePool = 16384;      // role nf: packet mbufs (headers, indirect: 1024)

// Bytes one mempool object of `room` data bytes occupies without hugepages.
uint64_t mbuf_cost(uint32_t room);

struct MemoryPart {
  std::string section, key;  // the setting that sizes it
  std::string what;          // e.g. "mempools for 65536 parked packets"
  uint64_t bytes = 0;
};

struct Budget {
  uint32_t pool_mbufs = 0;    // mbufs per pool (pkts, hdrs, ind)
  uint32_t reframe_hold = 0;  // Reframer's max_held_packets (0: off)
  uint32_t eal_mb = 0;        // EAL memory (-m): --mem-mb, or derived from the pools
  std::vector<MemoryPart> parts;
  uint64_t total() const;
  const MemoryPart& largest() const;
};

// The run's pools and memory; `chain_bytes` from nf::check_chain.
Budget plan_memory(const RunConfig& c, uint64_t chain_bytes);
// MemAvailable from /proc/meminfo (bytes); UINT64_MAX when it cannot be read.
uint64_t available_memory();
// Plans the loaded config and refuses it when it needs more than `available` bytes or more
// than its --mem-mb, naming the setting. `out` receives the plan.
bool check_memory(const Loader& l, uint64_t available, Budget& out, std::string& err);
// "1.5 GiB", "320.0 MiB", "12 KiB"
std::string human_bytes(uint64_t b);

}  // namespace nfpark::run
