#include "dp/nf_thread.h"

#include <rte_pause.h>

#include "core/time.h"

namespace nfpark::dp {

bool NfThread::idle() const {
  uint64_t e1 = epoch.load();
  bool b1 = busy.load();
  bool empty = true;
  for (Port* p : ports) empty = empty && p->rx_pending() == 0;
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
    const Nanos t0 = clock.now();
    t->busy.store(true);
    t->epoch.fetch_add(1);
    const size_t m = t->servers.size();
    if (t->flush_req.load()) {
      for (size_t k = 0; k < m; ++k) t->servers[k]->flush(*t->ports[k], clock.now());
      t->flush_req.store(false);
    }
    uint32_t n = 0;
    Nanos nf_clock = INT64_MIN;  // the oldest clock of the servers that have one
    for (size_t k = 0; k < m; ++k) {
      n += t->servers[k]->poll(*t->ports[k], clock.now());
      // Nothing may stay in the server's hands between polls (the main lcore reads the other
      // end until it sets `stop`).
      while (!t->ports[k]->flush() && !t->stop.load(std::memory_order_relaxed)) {
      }
      const Nanos c = t->servers[k]->clock();
      if (c != INT64_MIN && (nf_clock == INT64_MIN || c < nf_clock)) nf_clock = c;
    }
    t->clock.store(nf_clock);
    t->busy.store(false);
    if (n) {
      t->activity.fetch_add(1, std::memory_order_relaxed);
      t->busy_ns += uint64_t(clock.now() - t0);
    }
  }
  // Releases what it holds; what its port does not take stays in the port's backlog, where the
  // main lcore finds it once this lcore has stopped (SwitchLoop::finish).
  for (size_t k = 0; k < t->servers.size(); ++k) {
    t->servers[k]->flush(*t->ports[k], clock.now());
    for (int i = 0; i < 1000 && !t->ports[k]->flush(); ++i) {
    }
  }
  return 0;
}

}  // namespace nfpark::dp
