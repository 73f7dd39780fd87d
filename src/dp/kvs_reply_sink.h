// MbufReplySink: turns the KVS's reply datagrams into mbufs — text and cold values copied into
// the frame, hot values attached as external segments pointing at the stable buffer.
//
// A zero-copy datagram is a chain: [Ethernet/IPv4/UDP + frame header + any text, copied] ->
// [external segment: a slice of the stable buffer in the "NIC memory" region]. The external
// segments of one response share one rte_mbuf_ext_shared_info from a fixed pool (ShinfoPool);
// its reference count is one per attached segment plus one held while the response is built.
// When the port has sent (and freed) the last segment, DPDK calls the shared info's free
// callback, which hands the response's HotRef back to the hot set — nmKVS's "Tx completion
// callback decrements the reference count", on stock DPDK. The region itself is never read.
// Falls back to copying (counted) when no mbuf or shared info is left or the port cannot send
// chains. Single-threaded: the callback runs in the thread that frees the mbufs (the TX path).
#pragma once
#include <rte_mbuf.h>

#include <cstdint>
#include <vector>

#include "kvs/endpoint.h"
#include "kvs/reply.h"

namespace nfpark::dp {

struct KvsPools {
  rte_mempool* frames = nullptr;  // reply frames (headers + copied bytes; 2 KiB data room)
  rte_mempool* ext = nullptr;     // mbufs without data room, for external segments
};

struct ReplyCounters {
  uint64_t datagrams = 0, zero_copy_datagrams = 0, bytes_copied = 0, bytes_zero_copy = 0,
           text_bytes = 0, no_mbuf = 0, zc_fallbacks = 0;
};

// Shared infos for zero-copy responses, with the callback that returns their HotRef.
class ShinfoPool {
 public:
  ShinfoPool(uint32_t n, kvs::RefReleaser* releaser);
  ShinfoPool(const ShinfoPool&) = delete;
  ShinfoPool& operator=(const ShinfoPool&) = delete;
  rte_mbuf_ext_shared_info* get(kvs::HotRef ref);  // refcnt 1 (the builder's); null if none
  uint32_t in_use() const { return in_use_; }

 private:
  struct Slot {
    rte_mbuf_ext_shared_info info;
    kvs::HotRef ref;
    ShinfoPool* pool;
    uint32_t next;
  };
  static void on_free(void* addr, void* opaque);
  std::vector<Slot> slots_;
  uint32_t free_ = 0, in_use_ = 0;
  kvs::RefReleaser* releaser_;
};

class MbufReplySink final : public kvs::DatagramSink {
 public:
  MbufReplySink(KvsPools pools, const kvs::Endpoint& ep, ShinfoPool& shinfo,
                kvs::RefReleaser* releaser, const uint8_t* region, rte_iova_t region_iova,
                bool zero_copy);
  void to(const kvs::Peer& peer) { peer_ = peer; }
  void datagram(const uint8_t (&frame)[kvs::kUdpFrameHeader], const kvs::Slice* s, uint32_t n,
                uint32_t bytes) override;
  void take_ref(kvs::HotRef ref) override;

  std::vector<rte_mbuf*> out;  // frames to send, in order (the engine adds ARP/ICMP replies)
  const ReplyCounters& counters() const { return c_; }

 private:
  bool attach(rte_mbuf* head, rte_mbuf*& tail, const kvs::Slice& s);
  rte_mbuf_ext_shared_info* shinfo_for(kvs::HotRef ref);

  KvsPools pools_;
  const kvs::Endpoint& ep_;
  ShinfoPool& shinfo_;
  kvs::RefReleaser* releaser_;
  const uint8_t* region_;
  rte_iova_t region_iova_;
  bool zero_copy_;
  kvs::Peer peer_;
  uint16_t ip_id_ = 0;
  // The response being emitted: its HotRef and shared info (one hot value per response).
  kvs::HotRef open_ref_;
  rte_mbuf_ext_shared_info* open_info_ = nullptr;
  ReplyCounters c_;
};

}  // namespace nfpark::dp
