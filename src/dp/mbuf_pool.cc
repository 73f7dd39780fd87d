#include "dp/mbuf_pool.h"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>

namespace nfpark::dp {

bool mbuf_pool_packed_ok() {
  return !rte_eal_has_hugepages() && rte_eal_iova_mode() == RTE_IOVA_VA;
}

rte_mempool* mbuf_pool_create(const char* name, uint32_t n, uint32_t cache, uint16_t data_room,
                              int socket) {
  if (!mbuf_pool_packed_ok()) return rte_pktmbuf_pool_create(name, n, cache, 0, data_room, socket);
  // rte_pktmbuf_pool_create_by_ops (DPDK 22.11 lib/mbuf/rte_mbuf.c) with one flag more.
  rte_pktmbuf_pool_private priv{};
  priv.mbuf_data_room_size = data_room;
  priv.mbuf_priv_size = 0;
  rte_mempool* mp = rte_mempool_create_empty(name, n, unsigned(sizeof(rte_mbuf)) + data_room, cache,
                                             sizeof(rte_pktmbuf_pool_private), socket,
                                             RTE_MEMPOOL_F_NO_IOVA_CONTIG);
  if (!mp) return nullptr;
  int rc = rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), nullptr);
  if (rc == 0) {
    rte_pktmbuf_pool_init(mp, &priv);
    rc = rte_mempool_populate_default(mp);
  }
  if (rc < 0) {
    rte_mempool_free(mp);
    rte_errno = -rc;
    return nullptr;
  }
  // The flag leaves the objects without an IOVA (RTE_BAD_IOVA); with IOVA as VA it is the
  // address (an object that crosses a page is still contiguous there), as DPDK's own pool has it.
  rte_mempool_obj_iter(
      mp,
      [](rte_mempool*, void*, void* obj, unsigned) {
        rte_mempool_get_header(obj)->iova = rte_iova_t(reinterpret_cast<uintptr_t>(obj));
      },
      nullptr);
  rte_mempool_obj_iter(mp, rte_pktmbuf_init, nullptr);
  return mp;
}

}  // namespace nfpark::dp
