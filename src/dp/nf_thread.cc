#include "dp/nf_thread.h"

#include <rte_pause.h>

#include "core/time.h"

namespace nfpark::dp {

bool NfThread::idle() const {
  uint64_t e1 = epoch.load();
  bool b1 = busy.load();
  bool empty = port->rx_pending() == 0;
  bool b2 = busy.load();
  uint64_t e2 = epoch.load();
  return !b1 && !b2 && e1 == e2 && empty;
}

void NfThread::request_flush() {
  flush_req.store(true);
  SteadyClock clock;
  const Nanos until = clock.now() + 200 * kMilli;  // a stuck server cannot hold the run up
  while (flush_req.load() && clock.now() < until) rte_pause();
}

int nf_thread_main(void* arg) {
  auto* t = static_cast<NfThread*>(arg);
  SteadyClock clock;
  while (!t->stop.load(std::memory_order_relaxed)) {
    t->busy.store(true);
    t->epoch.fetch_add(1);
    if (t->flush_req.load()) {
      t->server->flush(*t->port, clock.now());
      t->flush_req.store(false);
    }
    uint16_t n = t->server->poll(*t->port, clock.now());
    // Nothing may stay in the server's hands between polls (the main lcore reads the other end
    // until it sets `stop`).
    while (!t->port->flush() && !t->stop.load(std::memory_order_relaxed)) {
    }
    t->clock.store(t->server->clock());
    t->busy.store(false);
    if (n) t->activity.fetch_add(1, std::memory_order_relaxed);
  }
  // Releases what it holds; what its port does not take stays in the port's backlog, where the
  // main lcore finds it once this lcore has stopped (SwitchLoop::finish).
  t->server->flush(*t->port, clock.now());
  for (int i = 0; i < 1000 && !t->port->flush(); ++i) {
  }
  return 0;
}

}  // namespace nfpark::dp
