#include "dp/traffic_ports.h"

#include <algorithm>

#include "dp/run_report.h"

namespace nfpark::dp {

bool TrafficPorts::open_replay(rte_mempool* pool, uint32_t ring_size, rte_ring*& wire_in,
                               rte_ring*& wire_out, std::string& err) {
  n_ = 1;
  return Port::ring_ends("traffic", pool, ports_[0], wire_in, wire_out, err, ring_size);
}

bool TrafficPorts::open_replay(rte_mempool* pool, uint32_t ring_size, uint16_t queues,
                               std::vector<rte_ring*>& wire_in, std::vector<rte_ring*>& wire_out,
                               std::string& err) {
  n_ = 1;
  return Port::ring_ends("traffic", pool, ports_[0], wire_in, wire_out, err, ring_size, queues);
}

std::string TrafficPorts::with_queues(const std::string& spec, uint16_t queues) {
  const bool af_packet =
      spec.rfind("vdev:net_af_packet", 0) == 0 || spec.rfind("vdev:eth_af_packet", 0) == 0;
  if (queues <= 1 || !af_packet || spec.find("qpairs=") != std::string::npos) return spec;
  return spec + ",qpairs=" + std::to_string(queues);
}

bool TrafficPorts::open_live(const std::string& a, const std::string& b, rte_mempool* pool,
                             const BufferSplit* split, std::string& err, uint16_t queues) {
  n_ = 2;
  return Port::open(with_queues(a, queues), pool, ports_[0], err, split, queues) &&
         Port::open(with_queues(b, queues), pool, ports_[1], err, split, queues);
}

void TrafficPorts::send(rte_mbuf* const* v, size_t n, const BurstLen* len, int from) {
  if (!n) return;
  if (!live()) {  // one port; a long vector (a drain) goes kMaxTx frames a call, as below
    if (len && n <= kMaxTx) return ports_[0].tx(v, uint16_t(n), *len);
    for (size_t i = 0; i < n; i += kMaxTx)
      ports_[0].tx(v + i, uint16_t(std::min<size_t>(kMaxTx, n - i)));
    return;
  }
  // Most bursts leave by one port (they came in by the other): sent as they are. Frames that
  // came in by a traffic port are judged by that port alone (one compare each).
  Port& first = from >= 0 ? ports_[1 - from] : egress(v[0]);
  size_t same = from >= 0 ? n : 1;
  const uint16_t in = v[0]->port;
  if (same < n && (in == ports_[0].id() || in == ports_[1].id()))
    while (same < n && v[same]->port == in) ++same;
  while (same < n && &egress(v[same]) == &first) ++same;
  if (same == n) {
    if (len && n <= kMaxTx) {
      first.tx(v, uint16_t(n), *len);
      return;
    }
    for (size_t i = 0; i < n; i += kMaxTx)
      first.tx(v + i, uint16_t(std::min<size_t>(kMaxTx, n - i)));
    return;
  }
  // One burst per port (each port's packets keep their order), not one tx call per packet.
  for (auto& b : by_port_) b.clear();
  for (size_t i = 0; i < n; ++i) by_port_[&egress(v[i]) == &ports_[0] ? 0 : 1].push_back(v[i]);
  for (int t = 0; t < 2; ++t) {
    const std::vector<rte_mbuf*>& b = by_port_[t];
    for (size_t i = 0; i < b.size(); i += kMaxTx)
      ports_[t].tx(b.data() + i, uint16_t(std::min<size_t>(kMaxTx, b.size() - i)));
  }
}

bool TrafficPorts::backlogged() const {
  for (int i = 0; i < n_; ++i)
    if (ports_[i].backlogged()) return true;
  return false;
}

unsigned TrafficPorts::rx_pending() const {
  unsigned n = 0;
  for (int i = 0; i < n_; ++i) n += ports_[i].rx_pending();
  return n;
}

uint64_t TrafficPorts::drop_backlog() {
  uint64_t n = 0;
  for (int t = 0; t < n_; ++t) {
    const std::vector<rte_mbuf*> v = ports_[t].take_backlog();
    for (rte_mbuf* m : v) rte_pktmbuf_free(m);
    n += v.size();
  }
  return n;
}

void TrafficPorts::count_live(RunResult& res) {
  for (int t = 0; t < n_; ++t) {
    for (int i = 0; i < 1000 && !ports_[t].flush(); ++i) {
    }
    res.packets_in += ports_[t].rx_packets;
    res.bytes_in += ports_[t].rx_bytes;
    res.packets_out += ports_[t].tx_packets;
    res.bytes_out += ports_[t].tx_bytes;
  }
}

void TrafficPorts::report(RunResult& res) const {
  if (!live()) {
    report_port("traffic", ports_[0], res);
    return;
  }
  report_port("traffic_a", ports_[0], res);
  report_port("traffic_b", ports_[1], res);
  res.ports.values["hw_buffer_split"] = ports_[0].hw_split() && ports_[1].hw_split();
}

void TrafficPorts::stop() {
  for (int i = 0; i < n_; ++i) ports_[i].stop();
}

}  // namespace nfpark::dp
