#include "dp/kvs_engine.h"

#include <rte_ethdev.h>
#include <rte_memzone.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "core/bytes.h"
#include "core/json.h"
#include "dp/kvs_tap.h"
#include "dp/mbuf_pool.h"

namespace nfpark::dp {

KvsEngine::~KvsEngine() {
  close();
  sink_.reset();
  shinfo_.reset();
  server_.reset();
  rte_mempool_free(pools_.frames);
  rte_mempool_free(pools_.ext);
  if (region_) rte_memzone_free(region_);
}

bool KvsEngine::init(const KvsEngineConfig& cfg, std::string& err) {
  cfg_ = cfg;
  if (std::string e = cfg.server.check(); !e.empty()) return (err = e), false;
  static std::atomic<unsigned> instance{0};  // names are per process: tests make several
  const std::string tag = std::to_string(instance++);
  // Spread over the cache's sets without hugepages, as every pool of a run (dp/mbuf_pool.h).
  pools_.frames = mbuf_pool_create(("kvs_frames" + tag).c_str(), cfg.mbufs, 256,
                                   RTE_MBUF_DEFAULT_BUF_SIZE, int(rte_socket_id()));
  pools_.ext = mbuf_pool_create(("kvs_ext" + tag).c_str(), cfg.mbufs, 256, 0, int(rte_socket_id()));
  if (!pools_.frames || !pools_.ext)
    return (err = "kvs: cannot create mbuf pools (raise --mem-mb or lower --mbufs)"), false;
  uint8_t* region = nullptr;
  uint64_t region_bytes = cfg.zero_copy ? cfg.nicmem_bytes : 0;
  if (region_bytes) {
    // The "NIC memory" region: a memzone of its own, IOVA-contiguous when the EAL can do it.
    const std::string name = "kvs_nicmem" + tag;
    region_ = rte_memzone_reserve_aligned(name.c_str(), region_bytes, int(rte_socket_id()),
                                          RTE_MEMZONE_IOVA_CONTIG, 4096);
    if (!region_)
      region_ =
          rte_memzone_reserve_aligned(name.c_str(), region_bytes, int(rte_socket_id()), 0, 4096);
    if (!region_)
      return (err = "kvs: cannot reserve " + std::to_string(region_bytes >> 20) +
                    " MiB of hot region (raise --mem-mb or lower --hot-mb)"),
             false;
    region = static_cast<uint8_t*>(region_->addr);
  }
  server_ = std::make_unique<kvs::Server>(cfg.server, region, region_bytes);
  reasm_ = std::make_unique<kvs::Ipv4Reassembler>(cfg.reassembly_contexts, 2 * kSecond);
  shinfo_ = std::make_unique<ShinfoPool>(cfg.mbufs, &server_->cache());
  return true;
}

bool KvsEngine::after_open(std::string& err) {
  port_open_ = true;
  rte_ether_addr mac{};
  if (rte_eth_macaddr_get(port_.id(), &mac) != 0)
    return (err = "kvs: cannot read the port's MAC"), false;
  std::array<uint8_t, 6> m{};
  std::memcpy(m.data(), mac.addr_bytes, 6);
  ep_ = std::make_unique<kvs::Endpoint>(m, cfg_.ip, cfg_.udp_port);
  rte_eth_dev_info info{};
  rte_eth_dev_info_get(port_.id(), &info);
  // Zero-copy replies are chains; a port that cannot send chains gets copies instead.
  const bool chains = (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) ||
                      std::string(info.driver_name ? info.driver_name : "") == "net_ring";
  zero_copy_ = cfg_.zero_copy && region_ && chains;
  const bool contig = region_ && (region_->flags & RTE_MEMZONE_IOVA_CONTIG);
  sink_ = std::make_unique<MbufReplySink>(
      pools_, *ep_, *shinfo_, &server_->cache(),
      region_ ? static_cast<const uint8_t*>(region_->addr) : nullptr,
      contig ? region_->iova : RTE_BAD_IOVA, zero_copy_);
  return true;
}

bool KvsEngine::open_port(const std::string& spec, std::string& err) {
  if (!Port::open(spec, pools_.frames, port_, err)) return false;
  return after_open(err);
}

bool KvsEngine::open_ring(const std::string& name, rte_ring*& rx, rte_ring*& tx, std::string& err) {
  if (!Port::ring_ends(name, pools_.frames, port_, rx, tx, err)) return false;
  return after_open(err);
}

void KvsEngine::handle(rte_mbuf* m, Nanos now) {
  ++c_.rx_frames;
  if (m->nb_segs != 1) {  // ports here deliver one segment per frame (no RX scatter asked)
    ++c_.multi_seg_drops;
    rte_pktmbuf_free(m);
    return;
  }
  uint8_t* f = rte_pktmbuf_mtod(m, uint8_t*);
  const kvs::Classified c = ep_->classify(f, m->data_len);
  switch (c.kind) {
    case kvs::FrameKind::kArpRequest:
      m->data_len = uint16_t(ep_->arp_reply(f));
      m->pkt_len = m->data_len;
      sink_->out.push_back(m);  // the reply reuses the request's mbuf
      ++c_.arp_replies;
      return;
    case kvs::FrameKind::kIcmpEcho:
      ep_->icmp_reply(f, c);
      m->data_len = uint16_t(14 + c.ip_len);  // drops any Ethernet padding
      m->pkt_len = m->data_len;
      sink_->out.push_back(m);
      ++c_.icmp_replies;
      return;
    case kvs::FrameKind::kUdp:
      ++c_.udp_datagrams;
      sink_->to(kvs::Endpoint::peer(f, f + 14));
      server_->datagram(f + c.payload_off, c.payload_len, kvs::Endpoint::peer(f, f + 14).id(), now,
                        zero_copy_, *sink_);
      break;
    case kvs::FrameKind::kFragment: {
      ++c_.fragments;
      const kvs::Ipv4Reassembler::Packet p = reasm_->add(f + 14, c.ip_len, now);
      uint32_t off = 0, len = 0;
      if (p.data && ep_->udp_payload(p.data, p.len, off, len) == kvs::Drop::kNone) {
        kvs::Peer peer = kvs::Endpoint::peer(f, p.data);
        sink_->to(peer);
        server_->datagram(p.data + off, len, peer.id(), now, zero_copy_, *sink_);
      }
      break;
    }
    case kvs::FrameKind::kDrop:
      ++c_.drops[size_t(c.drop)];
      break;
  }
  rte_pktmbuf_free(m);
}

void KvsEngine::send() {
  std::vector<rte_mbuf*>& out = sink_->out;
  if (!out.empty()) {
    pending_.insert(pending_.end(), out.begin(), out.end());
    out.clear();
  }
  flush();
}

bool KvsEngine::flush() {
  size_t done = 0;
  while (done < pending_.size()) {
    const auto want = uint16_t(std::min<size_t>(kBurst, pending_.size() - done));
    const uint16_t n = rte_eth_tx_burst(port_.id(), 0, pending_.data() + done, want);
    done += n;
    if (n < want) break;
  }
  c_.tx_frames += done;
  pending_.erase(pending_.begin(), pending_.begin() + ptrdiff_t(done));
  return pending_.empty();
}

unsigned KvsEngine::poll(Nanos now) {
  rte_mbuf* pkts[kBurst];
  const uint16_t n = port_.rx(pkts, kBurst);
  // The burst's GETs look their keys up with overlapping cache misses: every index bucket,
  // then every record, then the requests in order (MICA's batched prefetch).
  std::string_view keys[kBurst];
  for (uint16_t i = 0; i < n; ++i) {
    const uint8_t* f = rte_pktmbuf_mtod(pkts[i], const uint8_t*);
    const uint32_t len = pkts[i]->data_len;
    if (len < 14 + 20 + 8 || load_be16(f + 12) != 0x0800 || f[23] != 17) continue;
    const uint32_t udp = 14 + uint32_t(f[14] & 0x0F) * 4 + 8;
    if (udp < len) keys[i] = kvs::first_get_key(f + udp, len - udp);
    if (!keys[i].empty()) server_->cache().prefetch(keys[i], 0);
  }
  for (uint16_t i = 0; i < n; ++i)
    if (!keys[i].empty()) server_->cache().prefetch(keys[i], 1);
  for (uint16_t i = 0; i < n; ++i) handle(pkts[i], now);
  send();
  return n;
}

bool KvsEngine::balanced() const {
  uint64_t drops = c_.multi_seg_drops;
  for (uint64_t d : c_.drops) drops += d;
  return c_.rx_frames == c_.arp_replies + c_.icmp_replies + c_.udp_datagrams + c_.fragments + drops;
}

void KvsEngine::close() {
  if (port_open_) {
    for (int i = 0; i < 100 && !flush(); ++i) rte_delay_us_sleep(1000);
    port_.stop();
    rte_eth_dev_close(port_.id());  // the port gives back the mbufs its queues hold
    port_open_ = false;
  }
  c_.tx_abandoned += pending_.size();
  for (rte_mbuf* m : pending_) rte_pktmbuf_free(m);  // frees their stable-buffer references
  pending_.clear();
  if (sink_) {
    for (rte_mbuf* m : sink_->out) rte_pktmbuf_free(m);
    sink_->out.clear();
  }
  if (pools_.frames) {
    pools_full_at_close_ = rte_mempool_full(pools_.frames) && rte_mempool_full(pools_.ext);
  }
}

bool KvsEngine::pools_full() const {
  if (port_open_) return false;
  return pools_full_at_close_;
}

void KvsEngine::counters(const CounterSink& s) const {
  s("rx_frames", c_.rx_frames);
  s("tx_frames", c_.tx_frames);
  s("arp_replies", c_.arp_replies);
  s("icmp_replies", c_.icmp_replies);
  s("udp_datagrams", c_.udp_datagrams);
  s("fragments", c_.fragments);
  s("reassembled", reasm_ ? reasm_->counters().reassembled : 0);
  s("multi_seg_drops", c_.multi_seg_drops);
  for (size_t i = 1; i < size_t(kvs::Drop::kCount); ++i)
    s("drop." + std::string(kvs::to_string(kvs::Drop(i))), c_.drops[i]);
  if (sink_) {
    const ReplyCounters& r = sink_->counters();
    s("reply_datagrams", r.datagrams);
    s("zero_copy_datagrams", r.zero_copy_datagrams);
    s("bytes_copied", r.bytes_copied);
    s("bytes_zero_copy", r.bytes_zero_copy);
    s("text_bytes", r.text_bytes);
    s("zero_copy_fallbacks", r.zc_fallbacks);
    s("reply_no_mbuf", r.no_mbuf);
  }
  s("tx_abandoned", c_.tx_abandoned);
  if (server_) server_->counters(s);
}

}  // namespace nfpark::dp

namespace nfpark::dp {

double KvsEngine::serve(const std::atomic<bool>& stop, double timeout_s, bool busy) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(clock::now() - t0).count(); };
  unsigned idle = 0;
  for (uint64_t i = 0; !stop; ++i) {
    const Nanos now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
    const bool got = poll(now) > 0;
    if (timeout_s > 0 && (i % 256 == 0 || !got) && elapsed() > timeout_s) break;
    if (got) {
      idle = 0;
      continue;
    }
    flush();
    if (!busy && ++idle > 1000) std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return elapsed();
}

std::string KvsEngine::report(const std::string& port, double seconds, bool json) const {
  CounterMap m;
  counters(m.sink());
  if (json) {
    JsonWriter j;
    j.begin_object();
    j.value("port", port);
    j.value("ip", ipv4_to_string(cfg_.ip));
    j.value("udp_port", int(cfg_.udp_port));
    j.value("zero_copy", zero_copy_);
    j.value("seconds", seconds);
    j.value("balanced", balanced());
    j.value("pools_full", pools_full());
    j.begin_object("counters");
    for (auto& [k, v] : m.values) j.value(k, v);
    j.end_object();
    j.end_object();
    return j.str() + "\n";
  }
  char b[160];
  std::snprintf(b, sizeof b, "nfpark kvs: %.1f s on %s\n", seconds, port.c_str());
  std::string out = b;
  for (auto& [k, v] : m.values) {
    if (!v) continue;
    std::snprintf(b, sizeof b, "  %-22s %llu\n", k.c_str(), static_cast<unsigned long long>(v));
    out += b;
  }
  std::snprintf(b, sizeof b, "  %-22s %s\n  %-22s %s\n", "rx = handled + drops",
                balanced() ? "yes" : "NO", "pools full at exit", pools_full() ? "yes" : "NO");
  return out + b;
}

}  // namespace nfpark::dp
