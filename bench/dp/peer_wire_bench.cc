// peer_wire_bench: the traffic source of the peer comparisons (scripts/peers/*.sh). It loads a
// pcap's frames into mbufs once and sends them, in order and over and over, as fast as a DPDK
// port takes them, from its own CPU; the device under test (nfpark, dpdk-testpmd, Open vSwitch,
// the kernel) sits on the other side of the port on another CPU. Every peer gets the same
// frames, the same port type and the same source, so their rates compare.
//
//   peer_wire_bench --port SPEC --pcap FILE [--packets N] [--warm N] [--cpu C] [--timeout S]
//     --port     a DPDK port: vdev:net_memif0,role=client,socket=/tmp/x.sock or
//                vdev:net_af_packet0,iface=veth0 (the DUT holds the other end)
//     --packets  packets measured (default 2000000), after --warm (default 200000)
//     --cpu      the CPU this process runs on (default 1; nfpark runs on CPU 0)
//     --timeout  give up after S seconds (default 60): the DUT stopped taking packets
// Prints `RESULT packets=N seconds=S mpps=R backpressure=F`: the measured packets the port
// accepted, the wall time they took and `backpressure`, the share of send calls the port did
// not take whole. A memif ring only refuses packets when the DUT does not drain it, so
// backpressure > 0 means the DUT, not this source, set the rate; backpressure ~0 means the
// source was the limit (the DUT kept up), and the rate is a lower bound of the DUT's.
// A frame is sent without a copy on this side: each send takes one more reference on its mbuf
// (the port frees it after transmitting). Exit 0 when every packet was sent, 1 otherwise.
#include <pcap/pcap.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_stats.h"
#include "dp/mbuf_pool.h"
#include "dp/port.h"

using namespace nfpark;

namespace {

struct Args {
  std::string port, pcap;
  uint64_t packets = 2'000'000, warm = 200'000;
  int cpu = 1;
  double timeout_s = 60;
};

bool parse(int argc, char** argv, Args& a) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--port")
      a.port = v;
    else if (k == "--pcap")
      a.pcap = v;
    else if (k == "--packets")
      a.packets = std::strtoull(v.c_str(), nullptr, 10);
    else if (k == "--warm")
      a.warm = std::strtoull(v.c_str(), nullptr, 10);
    else if (k == "--cpu")
      a.cpu = std::atoi(v.c_str());
    else if (k == "--timeout")
      a.timeout_s = std::atof(v.c_str());
    else
      return false;
  }
  return (argc % 2) == 1 && !a.port.empty() && !a.pcap.empty() && a.packets > 0;
}

// The pcap's frames (at most 4096 of them: the source cycles through them).
bool load_frames(const std::string& path, std::vector<std::vector<uint8_t>>& out) {
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* p = pcap_open_offline(path.c_str(), err);
  if (!p) return std::fprintf(stderr, "peer_wire_bench: %s: %s\n", path.c_str(), err), false;
  pcap_pkthdr* h;
  const u_char* d;
  while (out.size() < 4096 && pcap_next_ex(p, &h, &d) == 1) out.emplace_back(d, d + h->caplen);
  pcap_close(p);
  if (out.empty()) std::fprintf(stderr, "peer_wire_bench: %s: no frames\n", path.c_str());
  return !out.empty();
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (!parse(argc, argv, a)) {
    std::fprintf(stderr,
                 "usage: peer_wire_bench --port SPEC --pcap FILE [--packets N] [--warm N] "
                 "[--cpu C] [--timeout S]\n");
    return 2;
  }
  std::vector<std::vector<uint8_t>> frames;
  if (!load_frames(a.pcap, frames)) return 2;
  std::vector<std::string> args = {"peer_wire",
                                   "-m",
                                   "512",
                                   "--no-huge",
                                   "--no-pci",
                                   "--no-shconf",
                                   "--no-telemetry",
                                   "--log-level=*:error",
                                   "--lcores=0@" + std::to_string(a.cpu),
                                   "--file-prefix=peerwire" + std::to_string(getpid())};
  std::vector<char*> argvv;
  for (auto& s : args) argvv.push_back(s.data());
  if (rte_eal_init(int(argvv.size()), argvv.data()) < 0) {
    std::fprintf(stderr, "peer_wire_bench: EAL init failed\n");
    return 1;
  }
  rte_mempool* pool = dp::mbuf_pool_create("wire", 8191, 256, 10240);
  std::string err;
  dp::Port port;
  if (!pool || !dp::Port::open(a.port, pool, port, err)) {
    std::fprintf(stderr, "peer_wire_bench: %s\n", err.empty() ? "no mempool" : err.c_str());
    return 1;
  }
  std::vector<rte_mbuf*> mbufs;
  for (const auto& f : frames) {
    rte_mbuf* m = rte_pktmbuf_alloc(pool);
    if (!m || f.size() > rte_pktmbuf_tailroom(m)) {
      std::fprintf(stderr, "peer_wire_bench: frame of %zu B does not fit an mbuf\n", f.size());
      return 1;
    }
    std::memcpy(rte_pktmbuf_append(m, uint16_t(f.size())), f.data(), f.size());
    mbufs.push_back(m);
  }
  // The DUT's end of the link comes up in the background (memif: when the DUT listens).
  bench::Stopwatch up;
  for (;;) {
    rte_eth_link l{};
    rte_eth_link_get_nowait(port.id(), &l);
    if (l.link_status) break;
    if (up.wall() > a.timeout_s) {
      std::fprintf(stderr, "peer_wire_bench: link did not come up within %.0f s\n", a.timeout_s);
      return 1;
    }
    usleep(1000);
  }
  const uint64_t total = a.warm + a.packets;
  uint64_t sent = 0, calls = 0, short_calls = 0, base = 0;
  size_t next = 0;
  bool measuring = false;
  bench::Stopwatch sw, guard;
  rte_mbuf* b[32];
  while (sent < total && guard.wall() < a.timeout_s) {
    if (!measuring && sent >= a.warm) {  // the measured part starts here
      measuring = true;
      sw = bench::Stopwatch();
      base = sent, calls = short_calls = 0;
    }
    const uint16_t n = uint16_t(std::min<uint64_t>(32, total - sent));
    for (uint16_t i = 0; i < n; ++i) {
      b[i] = mbufs[next];
      next = next + 1 == mbufs.size() ? 0 : next + 1;
      rte_mbuf_refcnt_update(b[i], 1);
    }
    const uint16_t k = rte_eth_tx_burst(port.id(), 0, b, n);
    for (uint16_t i = k; i < n; ++i) rte_mbuf_refcnt_update(b[i], -1);
    next = (next + mbufs.size() - (n - k)) % mbufs.size();  // resend what was not taken
    sent += k;
    ++calls;
    short_calls += k < n;
    // A DUT that answers on this port (memif loop): take its packets and free them.
    const uint16_t r = rte_eth_rx_burst(port.id(), 0, b, 32);
    for (uint16_t i = 0; i < r; ++i) rte_pktmbuf_free(b[i]);
  }
  const double secs = measuring ? sw.wall() : 0, cpu = measuring ? sw.cpu() : 0;
  const uint64_t measured = measuring ? sent - base : 0;
  std::printf(
      "RESULT packets=%llu seconds=%.4f mpps=%.4f backpressure=%.3f cpu_seconds=%.4f "
      "frames=%zu\n",
      (unsigned long long)measured, secs, secs > 0 ? double(measured) / secs / 1e6 : 0,
      calls ? double(short_calls) / double(calls) : 0, cpu, frames.size());
  for (rte_mbuf* m : mbufs) rte_pktmbuf_free(m);
  port.stop();
  rte_eal_cleanup();
  if (sent < total) {
    std::fprintf(stderr, "peer_wire_bench: only %llu of %llu packets sent within %.0f s\n",
                 (unsigned long long)sent, (unsigned long long)total, a.timeout_s);
    return 1;
  }
  return 0;
}
