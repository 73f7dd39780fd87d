// Element:  mbuf_pool — a packet mbuf pool whose mbufs spread over the cache's sets when EAL runs
//           without hugepages (`--no-huge`, every run and test in this lab).
// Config:   name, mbufs, per-lcore cache (mbufs), data room (bytes, headroom included), NUMA
//           socket (default 0); as rte_pktmbuf_pool_create, no private area, the best ops.
// Counters: none.
// Paper:    none (DPDK's mempool, packed differently).
//
// Why. Without hugepages DPDK 22.11's mempool places each object (mbuf + 2 KiB data room: 2368
// B) so that it does not cross a 4 KiB page: one mbuf per page, so every mbuf header starts at
// the same offset in its page and all of them fall into one L1 set (64 sets × 64 B = 4 KiB) —
// and their data lines into one other. A burst of 32 mbufs cannot stay in a 12-way set: each
// pass over a burst's headers (rx, the mode's counts, the NF, tx) misses L1 once per packet
// (cachegrind: 14.6 D1 read misses a packet for nfpark's baseline `forward`, 9 of them in its
// own per-burst passes; testpmd, whose pool is made the same way, 5.5). Here the pool is made
// with RTE_MEMPOOL_F_NO_IOVA_CONTIG when EAL has no hugepages and IOVA is the virtual address:
// objects are then packed (one every 37 cache lines), so consecutive mbufs use different sets,
// and an object crossing a page boundary is still IOVA-contiguous (IOVA = VA). With hugepages,
// or physical IOVAs, the pool is rte_pktmbuf_pool_create's, unchanged.
#pragma once
#include <rte_mempool.h>

#include <cstdint>

namespace nfpark::dp {

// rte_pktmbuf_pool_create(name, n, cache, 0, data_room, socket), packed as above when
// packed_ok(). nullptr (rte_errno set) on failure.
rte_mempool* mbuf_pool_create(const char* name, uint32_t n, uint32_t cache, uint16_t data_room,
                              int socket = 0);

// EAL runs without hugepages with IOVA as VA: mbuf_pool_create packs its objects.
bool mbuf_pool_packed_ok();

}  // namespace nfpark::dp
