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
  for (int spin = 0; flush_req.load() && spin < 100000000; ++spin) rte_pause();
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
    while (!t->port->flush()) {  // nothing may stay in the server's hands between polls
    }
    t->clock.store(t->server->clock());
    t->busy.store(false);
    if (n) t->activity.fetch_add(1, std::memory_order_relaxed);
  }
  t->server->flush(*t->port, clock.now());
  while (!t->port->flush()) {
  }
  return 0;
}

}  // namespace nfpark::dp
