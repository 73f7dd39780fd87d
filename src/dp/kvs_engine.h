// KvsEngine: `nfpark kvs` on a DPDK port — the engine-neutral kvs::Server behind one port.
//
// Per burst (32 frames): classify each frame (kvs::Endpoint); answer ARP and ICMP echo in the
// same mbuf; feed IPv4 fragments to the reassembler; hand each UDP request to the server, in
// place in its mbuf, with MbufReplySink building the replies; send everything in order. The
// "NIC memory" region is a memzone of its own (IOVA-contiguous when the EAL can), separate from
// the mbuf pools; on a NIC that exposes device memory, this is where that memory would go.
// Counters: rx_frames, arp_replies, icmp_replies, udp_datagrams, fragments, multi_seg_drops,
//           drop.<reason> (kvs::Drop), and the sink's (reply datagrams, bytes copied vs sent
//           zero-copy); rx_frames == arp + icmp + udp + fragments + drops, checked by
//           balanced().
#pragma once
#include <atomic>
#include <memory>
#include <string>

#include "core/counters.h"
#include "core/time.h"
#include "dp/kvs_reply_sink.h"
#include "dp/port.h"
#include "kvs/endpoint.h"
#include "kvs/ipv4_reassembler.h"
#include "kvs/server.h"

namespace nfpark::dp {

struct KvsEngineConfig {
  kvs::ServerConfig server;
  uint32_t ip = 0;  // the server's IPv4 address (host order)
  uint16_t udp_port = 11211;
  uint64_t nicmem_bytes = 64ull << 20;  // the hot region ("NIC memory"); 0: no hot set
  bool zero_copy = true;                // send hot values as external segments
  uint32_t mbufs = 16384;               // per pool (frames, external segments)
  uint32_t reassembly_contexts = 8;
};

struct EngineCounters {
  uint64_t rx_frames = 0, arp_replies = 0, icmp_replies = 0, udp_datagrams = 0, fragments = 0,
           multi_seg_drops = 0, tx_frames = 0, tx_abandoned = 0;
  uint64_t drops[size_t(kvs::Drop::kCount)] = {};
};

class KvsEngine {
 public:
  KvsEngine() = default;
  KvsEngine(const KvsEngine&) = delete;
  KvsEngine& operator=(const KvsEngine&) = delete;
  ~KvsEngine();

  // After eal_init: pools, region and server; then open_port() or open_ring().
  bool init(const KvsEngineConfig& cfg, std::string& err);
  bool open_port(const std::string& spec, std::string& err);
  // A ring port whose RX and TX rings the caller feeds and drains (tests, benchmarks).
  bool open_ring(const std::string& name, rte_ring*& rx, rte_ring*& tx, std::string& err);

  unsigned poll(Nanos now);  // one burst; returns frames received
  // Polls until `stop` is set or `timeout_s` (0: none) has passed; when idle for 1000 polls,
  // sleeps 100 us between polls unless `busy`. Returns the seconds it ran.
  double serve(const std::atomic<bool>& stop, double timeout_s, bool busy);
  // The result: counters, accounting and pool checks (JSON or text).
  std::string report(const std::string& port, double seconds, bool json) const;
  bool flush();  // retries frames the port did not take yet; true when none are left
  // Stops and closes the port (returning the mbufs it holds) and frees everything.
  void close();
  bool pools_full() const;
  bool balanced() const;
  bool zero_copy() const { return zero_copy_; }
  void counters(const CounterSink& sink) const;

  kvs::Server& server() { return *server_; }
  const EngineCounters& engine_counters() const { return c_; }
  const ReplyCounters& reply_counters() const { return sink_->counters(); }
  const Port& port() const { return port_; }
  const kvs::Endpoint& endpoint() const { return *ep_; }

 private:
  bool after_open(std::string& err);
  void handle(rte_mbuf* m, Nanos now);
  void send();

  KvsEngineConfig cfg_;
  KvsPools pools_;
  const rte_memzone* region_ = nullptr;
  std::unique_ptr<kvs::Server> server_;
  std::unique_ptr<kvs::Endpoint> ep_;
  std::unique_ptr<kvs::Ipv4Reassembler> reasm_;
  std::unique_ptr<ShinfoPool> shinfo_;
  std::unique_ptr<MbufReplySink> sink_;
  Port port_;
  std::vector<rte_mbuf*> pending_;  // accepted for sending, not yet taken by the port
  bool port_open_ = false, zero_copy_ = false, pools_full_at_close_ = false;
  EngineCounters c_;
};

}  // namespace nfpark::dp
