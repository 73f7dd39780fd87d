#define ALLOW_EXPERIMENTAL_API 1  // rte_intr_instance_alloc and its setters (DPDK 22.11)
#include "dp/control_gate.h"

#include <rte_cycles.h>
#include <rte_interrupts.h>
#include <rte_pause.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace nfpark::dp {

namespace {
constexpr uint32_t kDefaultSliceUs = 1000;
}

ControlGate& ControlGate::instance() {
  static ControlGate gate;
  return gate;
}

void ControlGate::set_slice_us(uint32_t us) {
  slice_tsc_ = rte_get_tsc_hz() / 1000000 * us;
}

bool ControlGate::enable(std::string& err) {
  if (handle_) return true;
  efd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  rte_intr_handle* h = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
  if (efd_ < 0 || !h || rte_intr_type_set(h, RTE_INTR_HANDLE_EXT) != 0 ||
      rte_intr_fd_set(h, efd_) != 0 || rte_intr_callback_register(h, on_wake, this) != 0) {
    err = std::string("control gate: cannot register with the interrupt thread (") +
          std::strerror(errno) + ")";
    if (h) rte_intr_instance_free(h);
    if (efd_ >= 0) close(efd_);
    efd_ = -1;
    return false;
  }
  handle_ = h;
  if (!slice_tsc_) set_slice_us(kDefaultSliceUs);
  return true;
}

// The interrupt thread: consumes the one wake-up the data path wrote, says it is parked, and
// waits (blocked on a futex, not spinning) until the data path lets it go.
void ControlGate::on_wake(void* arg) {
  auto* g = static_cast<ControlGate*>(arg);
  uint64_t v = 0;
  if (read(g->efd_, &v, sizeof v) != sizeof v) return;     // nothing written: not a park request
  if (g->pin_.exchange(false, std::memory_order_acquire))  // this thread, onto the holder's CPUs
    (void)sched_setaffinity(0, sizeof g->cpus_, &g->cpus_);
  const uint32_t go = g->go_.load(std::memory_order_acquire);
  g->parked_.fetch_add(1, std::memory_order_acq_rel);
  while (g->go_.load(std::memory_order_acquire) == go) g->go_.wait(go, std::memory_order_acquire);
}

void ControlGate::park(uint64_t now_tsc) {
  if (!handle_) return;
  cpu_set_t cpus;  // the holder's CPUs (a syscall a slice): the interrupt thread goes there
  if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && !CPU_EQUAL(&cpus, &cpus_)) {
    cpus_ = cpus;
    spins_ = CPU_COUNT(&cpus) == 1 ? 0 : 2000;
    pin_.store(true, std::memory_order_release);
  }
  const uint32_t before = parked_.load(std::memory_order_acquire);
  const uint64_t one = 1;
  if (write(efd_, &one, sizeof one) != sizeof one) return;  // cannot fail below 2^64 - 2
  for (unsigned spins = 0; parked_.load(std::memory_order_acquire) == before; ++spins) {
    if (spins < spins_) {
      rte_pause();
    } else {
      sched_yield();  // the interrupt thread needs a core (2 shared cores under load)
    }
  }
  held_ = true;
  since_ = now_tsc;
}

void ControlGate::unpark() {
  held_ = false;
  ++cycles_;
  go_.fetch_add(1, std::memory_order_acq_rel);
  go_.notify_all();
}

void ControlGate::release() {
  if (held_) unpark();
}

void ControlGate::park_for_exit() {
  if (!handle_) return;
  hold();
  slice_tsc_ = UINT64_MAX;  // never let it go again: the process is ending
}
}  // namespace nfpark::dp
