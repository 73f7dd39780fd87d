// NfThread: the NF server on its own lcore (`nfpark run --nf-lcore`), and the handshake that
// lets the main lcore end a run safely. With several NF servers (--nf-servers M) the one lcore
// serves them all, each its own NfServer on its own ring pair, in turn (this machine has two
// cores: one for the switch, one for the NF side).
//
// The main lcore may end the run only when the server holds nothing: `epoch` counts polls and
// `busy` is set during one, so a reader that sees the same epoch and !busy before and after
// finding the server's RX ring empty knows that no packet was in the server's hands in between.
// At the end the main lcore asks the server to release what it holds (fault delays, Reframer)
// with request_flush(), then sets `stop` and waits for the lcore, which never waits for a port
// once `stop` is set: what its port did not take is left in the port's backlog.
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

#include "core/time.h"
#include "dp/nf_server.h"
#include "dp/port.h"

namespace nfpark::dp {

struct NfThread {
  std::vector<NfServer*> servers;  // server k serves ports[k]
  std::vector<Port*> ports;
  std::atomic<bool> stop{false};
  std::atomic<bool> busy{false};
  std::atomic<uint64_t> epoch{0};
  std::atomic<uint64_t> activity{0};   // polls that moved packets (the main lcore's "work")
  std::atomic<bool> flush_req{false};  // main asks the server to release what it holds
  // The server's clock as of its last poll, published once that poll's output is all in the
  // ring to the switch (so a reader that then finds that ring empty has merged all of it).
  std::atomic<Nanos> clock{INT64_MIN};
  // Time spent in polls that moved packets (steady clock), written by the NF lcore only: read it
  // once the lcore has stopped (ports."nf_lcore.busy_ns": what the NF lcore costs per packet).
  uint64_t busy_ns = 0;

  // Nothing is in the server's hands or waiting on its RX ring.
  bool idle() const;
  // Asks the server lcore to release what it holds and waits until it has (200 ms at most).
  void request_flush();
};

// The lcore function (rte_eal_remote_launch): polls until `stop`, then flushes.
int nf_thread_main(void* nf_thread);

}  // namespace nfpark::dp
