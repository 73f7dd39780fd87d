#include "dp/port.h"

#include <net/if.h>
#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_eth_ring.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "dp/mbuf_ops.h"

namespace nfpark::dp {

namespace {

// The value of `key=` in a devargs string, or "".
std::string devarg(const std::string& args, const std::string& key) {
  size_t at = 0;
  while (at < args.size()) {
    size_t end = args.find(',', at);
    if (end == std::string::npos) end = args.size();
    const std::string kv = args.substr(at, end - at);
    if (kv.rfind(key + "=", 0) == 0) return kv.substr(key.size() + 1);
    at = end + 1;
  }
  return "";
}

// The MTU of a kernel interface in this network namespace, 0 if unknown.
uint32_t if_mtu(const std::string& name) {
  if (name.empty() || name.size() >= IFNAMSIZ) return 0;
  const int s = socket(AF_INET, SOCK_DGRAM, 0);
  if (s < 0) return 0;
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, name.c_str(), name.size());
  const int rc = ioctl(s, SIOCGIFMTU, &ifr);
  close(s);
  return rc == 0 && ifr.ifr_mtu > 0 ? uint32_t(ifr.ifr_mtu) : 0;
}

}  // namespace

uint32_t Port::limit_for(const std::string& spec, uint16_t id) {
  if (spec.rfind("vdev:", 0) == 0) {
    const std::string args = spec.substr(5);
    if (args.rfind("net_memif", 0) == 0) return kMemifMaxFrame;
    if (args.rfind("net_pcap", 0) == 0) return 65535;
    if (args.rfind("net_af_packet", 0) == 0) {
      const std::string fs = devarg(args, "framesz");
      const uint32_t framesz = fs.empty() ? 2048 : uint32_t(std::strtoul(fs.c_str(), nullptr, 10));
      uint32_t limit = framesz > 32 ? framesz - 32 : 0;  // TPACKET2_HDRLEN - sizeof(sockaddr_ll)
      if (const uint32_t mtu = if_mtu(devarg(args, "iface"))) limit = std::min(limit, mtu + 18);
      return limit;
    }
  }
  rte_eth_dev_info info{};
  if (rte_eth_dev_info_get(id, &info) == 0 && info.max_rx_pktlen) return info.max_rx_pktlen;
  return UINT32_MAX;
}

void Port::reset_meta(rte_mbuf** pkts, uint16_t n) {
  if (MbufMeta::cut_offset < 0) return;  // not registered (a tool without nfpark metadata)
  for (uint16_t i = 0; i < n; ++i) MbufMeta::reset(pkts[i]);
}

bool Port::setup(uint16_t id, rte_mempool* pool, std::string& err, const BufferSplit* split,
                 bool* hw_split, uint16_t queues) {
  rte_eth_conf conf{};
  rte_eth_dev_info info{};
  if (rte_eth_dev_info_get(id, &info) != 0) {
    err = "port " + std::to_string(id) + ": cannot read device info";
    return false;
  }
  if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)
    conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
  if (queues > info.max_rx_queues || queues > info.max_tx_queues) {
    err = "port " + std::to_string(id) + ": " + std::to_string(queues) +
          " queues asked (one per worker), the device offers " +
          std::to_string(std::min(info.max_rx_queues, info.max_tx_queues)) +
          " (lower --workers, or give the device more queues, e.g. qpairs= for af_packet)";
    return false;
  }
  int rc = rte_eth_dev_configure(id, queues, queues, &conf);
  if (rc < 0) {
    err = "port " + std::to_string(id) + ": configure failed (" + std::to_string(rc) + ")";
    return false;
  }
  uint16_t nrx = 1024, ntx = 1024;
  rte_eth_dev_adjust_nb_rx_tx_desc(id, &nrx, &ntx);
  int sock = rte_eth_dev_socket_id(id);
  if (sock < 0) sock = 0;
  const bool can_split = split && (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_BUFFER_SPLIT);
  if (hw_split) *hw_split = false;
  if (can_split) {  // two segments per packet: headers to hdr_pool, the rest to data_pool
    rte_eth_rxconf rxconf = info.default_rxconf;
    rte_eth_rxseg segs[2] = {};
    segs[0].split.mp = split->hdr_pool;
    segs[0].split.length = split->hdr_len;
    segs[1].split.mp = split->data_pool;
    rxconf.rx_seg = segs;
    rxconf.rx_nseg = 2;
    rxconf.offloads |= RTE_ETH_RX_OFFLOAD_BUFFER_SPLIT;
    if (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER)
      rxconf.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
    bool all = true;
    for (uint16_t q = 0; q < queues && all; ++q)
      all = rte_eth_rx_queue_setup(id, q, nrx, unsigned(sock), &rxconf, nullptr) == 0;
    if (all) {
      if (hw_split) *hw_split = true;
      pool = nullptr;  // queues set up
    }
  }
  for (uint16_t q = 0; q < queues; ++q) {
    if ((pool && (rc = rte_eth_rx_queue_setup(id, q, nrx, unsigned(sock), nullptr,
                                              split ? split->data_pool : pool)) < 0) ||
        (rc = rte_eth_tx_queue_setup(id, q, ntx, unsigned(sock), nullptr)) < 0) {
      err = "port " + std::to_string(id) + ": queue setup failed (" + std::to_string(rc) + ")";
      return false;
    }
  }
  if ((rc = rte_eth_dev_start(id)) < 0) {
    err = "port " + std::to_string(id) + ": start failed (" + std::to_string(rc) + ")";
    return false;
  }
  rte_eth_promiscuous_enable(id);
  return true;
}

bool Port::open(const std::string& spec, rte_mempool* pool, Port& p, std::string& err,
                const BufferSplit* split, uint16_t queues) {
  uint16_t id = 0;
  p.name_ = spec;
  if (spec.rfind("vdev:", 0) == 0) {
    std::string args = spec.substr(5);
    std::string name = args.substr(0, args.find(','));
    std::string dev_args =
        args.find(',') == std::string::npos ? "" : args.substr(args.find(',') + 1);
    if (rte_eth_dev_get_port_by_name(name.c_str(), &id) != 0) {
      if (rte_vdev_init(name.c_str(), dev_args.c_str()) != 0 ||
          rte_eth_dev_get_port_by_name(name.c_str(), &id) != 0) {
        err = "port '" + spec + "': cannot create virtual device (check the devargs)";
        return false;
      }
    }
  } else if (spec.rfind("pci:", 0) == 0) {
    if (rte_eth_dev_get_port_by_name(spec.substr(4).c_str(), &id) != 0) {
      err = "port '" + spec + "': no such device (is it bound to a DPDK driver?)";
      return false;
    }
  } else {
    char* end = nullptr;
    unsigned long v = std::strtoul(spec.c_str(), &end, 10);
    if (spec.empty() || *end || !rte_eth_dev_is_valid_port(uint16_t(v))) {
      err = "port '" + spec + "': expected ring:NAME, vdev:DEVARGS, pci:ADDR or a port id";
      return false;
    }
    id = uint16_t(v);
  }
  p.id_ = id;
  if (spec.rfind("vdev:net_memif", 0) == 0) {  // control on the interrupt thread: control_gate.h
    if (!ControlGate::instance().enable(err)) return false;
    p.gate_ = &ControlGate::instance();
  }
  if (!setup(id, pool, err, split, &p.hw_split_, queues)) return false;
  p.queues_ = queues;
  p.started_ = true;
  p.foreign_ = true;
  p.max_frame_ = limit_for(spec, id);
  return true;
}

static rte_ring* make_ring(const std::string& name, unsigned size) {
  return rte_ring_create(name.c_str(), size, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
}

bool Port::ring_ends(const std::string& name, rte_mempool* pool, Port& p, rte_ring*& rx,
                     rte_ring*& tx, std::string& err, unsigned size) {
  std::vector<rte_ring*> rxs, txs;
  if (!ring_ends(name, pool, p, rxs, txs, err, size, 1)) return false;
  rx = rxs[0];
  tx = txs[0];
  return true;
}

// Ring names: queue 0 keeps the name a one-queue port always had.
static std::string ring_name(const std::string& base, uint16_t q) {
  return q == 0 ? base : base + std::to_string(q);
}

bool Port::ring_ends(const std::string& name, rte_mempool* pool, Port& p,
                     std::vector<rte_ring*>& rx, std::vector<rte_ring*>& tx, std::string& err,
                     unsigned size, uint16_t queues) {
  rx.assign(queues, nullptr);
  tx.assign(queues, nullptr);
  for (uint16_t q = 0; q < queues; ++q) {
    rx[q] = make_ring(ring_name(name + "_rx", q), size);
    tx[q] = make_ring(ring_name(name + "_tx", q), size);
    if (!rx[q] || !tx[q]) {
      err = "ring port '" + name + "': cannot create rings (out of memory? raise --mem-mb)";
      return false;
    }
  }
  int id = rte_eth_from_rings(name.c_str(), rx.data(), queues, tx.data(), queues, 0);
  if (id < 0) {
    err = "ring port '" + name + "': cannot create ethdev";
    return false;
  }
  p.id_ = uint16_t(id);
  p.name_ = "ring:" + name;
  p.rx_ring_ = rx[0];
  p.rx_rings_ = rx;
  if (!setup(p.id_, pool, err, nullptr, nullptr, queues)) return false;
  p.queues_ = queues;
  p.started_ = true;
  return true;
}

bool Port::ring_pair(const std::string& name, rte_mempool* pool, Port& a, Port& b, std::string& err,
                     unsigned size, uint16_t queues) {
  std::vector<rte_ring*> ab(queues), ba(queues);
  for (uint16_t q = 0; q < queues; ++q) {
    ab[q] = make_ring(ring_name(name + "_ab", q), size);
    ba[q] = make_ring(ring_name(name + "_ba", q), size);
    if (!ab[q] || !ba[q]) {
      err = "ring pair '" + name + "': cannot create rings (out of memory? raise --mem-mb)";
      return false;
    }
  }
  int ia = rte_eth_from_rings((name + "_a").c_str(), ba.data(), queues, ab.data(), queues, 0);
  int ib = rte_eth_from_rings((name + "_b").c_str(), ab.data(), queues, ba.data(), queues, 0);
  if (ia < 0 || ib < 0) {
    err = "ring pair '" + name + "': cannot create ethdevs";
    return false;
  }
  a.id_ = uint16_t(ia);
  b.id_ = uint16_t(ib);
  a.rx_ring_ = ba[0];
  b.rx_ring_ = ab[0];
  a.rx_rings_ = ba;
  b.rx_rings_ = ab;
  a.name_ = "ring:" + name + "_a";
  b.name_ = "ring:" + name + "_b";
  if (!setup(a.id_, pool, err, nullptr, nullptr, queues) ||
      !setup(b.id_, pool, err, nullptr, nullptr, queues))
    return false;
  a.queues_ = b.queues_ = queues;
  a.started_ = b.started_ = true;
  return true;
}

Port Port::queue(uint16_t q) const {
  Port v;
  v.id_ = id_;
  v.queue_ = q;
  v.queues_ = queues_;
  v.view_ = true;
  v.max_frame_ = max_frame_;
  v.foreign_ = foreign_;
  v.name_ = name_ + "#" + std::to_string(q);
  v.rx_ring_ = q < rx_rings_.size() ? rx_rings_[q] : nullptr;
  v.hw_split_ = hw_split_;
  return v;  // no gate: see queue() in port.h
}

bool Port::wait_peer(const std::atomic<int>& stop, double timeout_s) {
  if (!gate_) return true;
  const uint64_t until = rte_get_timer_cycles() + uint64_t(timeout_s * double(rte_get_timer_hz()));
  while (stop.load() == 0 && rte_get_timer_cycles() < until) {
    rte_eth_link link{};
    if (rte_eth_link_get_nowait(id_, &link) == 0 && link.link_status == RTE_ETH_LINK_UP) {
      gate_->hold();
      was_up_ = true;
      return true;
    }
    rte_delay_us_sleep(1000);  // the interrupt thread runs the handshake meanwhile
  }
  return false;
}

void Port::drop_too_long(rte_mbuf* const* pkts, uint16_t n) {
  fit_.clear();
  for (uint16_t i = 0; i < n; ++i) {
    if (pkts[i]->pkt_len <= max_frame_) {
      fit_.push_back(pkts[i]);
    } else {
      ++too_long;
      rte_pktmbuf_free(pkts[i]);
    }
  }
}

bool Port::gone() {
  // Read while the gate is held: the interrupt thread, which writes it, is parked. (memif's
  // link_update does nothing in a primary process: this reads the device's link word.)
  rte_eth_link link{};
  const bool up = rte_eth_link_get_nowait(id_, &link) == 0 && link.link_status == RTE_ETH_LINK_UP;
  was_up_ |= up;
  return was_up_ && !up;
}

void Port::tx(rte_mbuf* const* pkts, uint16_t n, const BurstLen& len) {
  uint64_t bytes = len.bytes;  // the common case: every frame fits, no pass here
  if (len.longest > max_frame_) {
    drop_too_long(pkts, n);
    pkts = fit_.data();
    n = uint16_t(fit_.size());
    bytes = 0;
    for (uint16_t i = 0; i < n; ++i) bytes += pkts[i]->pkt_len;
  }
  tx_bytes += bytes;
  tx_packets += n;
  if (gate_) {
    gate_->hold();
    if (gone()) {
      peer_gone += n;
      for (uint16_t i = 0; i < n; ++i) rte_pktmbuf_free(pkts[i]);
      return;
    }
  }
  uint16_t sent = 0;
  if (backlog_.empty()) sent = rte_eth_tx_burst(id_, queue_, const_cast<rte_mbuf**>(pkts), n);
  backlog_.insert(backlog_.end(), pkts + sent, pkts + n);
}

bool Port::flush_backlog() {
  if (gate_) {
    gate_->hold();
    if (gone()) {
      peer_gone += backlog_.size();
      for (rte_mbuf* m : backlog_) rte_pktmbuf_free(m);
      backlog_.clear();
      return true;
    }
  }
  size_t done = 0;
  while (done < backlog_.size()) {
    uint16_t want = uint16_t(std::min<size_t>(kBurst, backlog_.size() - done));
    uint16_t sent = rte_eth_tx_burst(id_, queue_, backlog_.data() + done, want);
    done += sent;
    if (sent < want) break;
  }
  backlog_.erase(backlog_.begin(), backlog_.begin() + ptrdiff_t(done));
  return backlog_.empty();
}

std::vector<rte_mbuf*> Port::take_backlog() {
  std::vector<rte_mbuf*> v;
  v.swap(backlog_);
  for (rte_mbuf* m : v) tx_bytes -= m->pkt_len;
  tx_packets -= v.size();
  return v;
}

void Port::stop() {
  if (view_) return;            // the port is its owner's to stop
  if (gate_) gate_->release();  // the interrupt thread runs the driver's stop/close work
  if (!started_) return;
  rte_eth_dev_stop(id_);
  started_ = false;
}

}  // namespace nfpark::dp
