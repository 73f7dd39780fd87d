// ControlGate: keeps DPDK's interrupt thread out of a port's shared state while the data path
// uses the port — what makes a memif peer going away (or coming back) safe.
//
// Why. The memif PMD (DPDK 22.11, drivers/net/memif) does its control work on the EAL interrupt
// thread: a peer's DISCONNECT message or a hung-up control socket runs memif_disconnect(),
// which clears ETH_MEMIF_FLAG_CONNECTED and then munmap()s and rte_free()s the shared regions
// (memif_free_regions). eth_memif_rx/tx compute the ring address from those regions *before*
// testing the flag, and nothing orders the test against the unmap: a burst that passed the test
// reads unmapped memory (SIGSEGV in eth_memif_rx, about 1 run in 12 when the switch went away).
// The PMD raises no link-state event (it never calls rte_eth_dev_callback_process), so an LSC
// callback cannot help, and testing the link before rx/tx only narrows the window.
//
// How. The interrupt thread runs one callback at a time. The gate registers a callback on an
// eventfd; the data-path thread "holds" the gate by waking that callback and waiting until it
// runs: from then on, the interrupt thread is parked inside our callback and cannot run
// memif_disconnect/memif_connect, so rx/tx see either a connected port with its regions mapped,
// or a disconnected one (rx 0, tx 0). Every `slice` (1 ms) of holding, the data path lets the
// thread go and takes it back: control messages (a disconnect, the next switch's handshake) are
// handled then, between two bursts, never during one.
//
// Where the interrupt thread runs. While the gate is held, the data path waits for the
// interrupt thread twice a slice (let go, taken back), so that thread must get a core at once.
// EAL puts it on the CPUs no lcore uses (here: core 1, the data path on core 0), and there it can
// starve: with the kernel's autogroups (one scheduling group per session, on by default), the
// process's group gets a weight on each CPU in proportion to its load there — on core 1 almost
// none, since the interrupt thread mostly sleeps — so with other work on core 1 the woken thread
// waited 0.5-1 s for it (measured with /proc/<tid>/schedstat: runnable, not run), and every
// packet over the memif link with it (pings of 1-1.5 s through the testbed under load). So the
// first park moves the interrupt thread onto the CPUs of the thread that holds the gate: the
// group's load is there, and the holder, waiting, yields its core to it (at once when they share
// one CPU: spinning cannot help then).
//
// Use. Port calls hold() before each rx/tx/flush of a gated port (memif) and release() in
// stop(); eal_cleanup() parks the thread for good (park_for_exit). One data-path thread per process
// uses gated ports (the thread that calls hold()); release() before that thread blocks for long.
// Cost: one wake-up of the interrupt thread per slice (counted in cycles()) and one
// sched_getaffinity call; nothing per packet.
#pragma once
#include <rte_cycles.h>
#include <sched.h>

#include <atomic>
#include <cstdint>
#include <string>

struct rte_intr_handle;

namespace nfpark::dp {

class ControlGate {
 public:
  static ControlGate& instance();
  // Registers the callback with the EAL interrupt thread (once per process).
  bool enable(std::string& err);
  bool enabled() const { return handle_ != nullptr; }
  // Returns with the interrupt thread parked; lets it run once per slice.
  void hold(uint64_t now_tsc) {
    if (!held_) {
      park(now_tsc);
    } else if (now_tsc - since_ > slice_tsc_) {
      unpark();
      park(now_tsc);
    }
  }
  void hold() { hold(rte_rdtsc()); }
  // Lets the interrupt thread go (idempotent).
  void release();
  // Before rte_eal_cleanup: parks the interrupt thread for good. Cleanup removes the devices
  // (memif unregisters its callbacks, which wakes that thread to rebuild its wait list) and then
  // unmaps DPDK's memory, where the interrupt handles live; a thread still walking them then
  // crashes (SIGSEGV in rte_intr_fd_get on the interrupt thread, seen at exit). Parked in our
  // callback, it touches nothing; the process ends with it.
  void park_for_exit();
  bool held() const { return held_; }
  uint64_t cycles() const {
    return cycles_;
  }  // times the interrupt thread was let go and taken back
  void set_slice_us(uint32_t us);

 private:
  ControlGate() = default;
  static void on_wake(void* arg);  // runs on the interrupt thread
  void park(uint64_t now_tsc);
  void unpark();
  rte_intr_handle* handle_ = nullptr;
  int efd_ = -1;
  std::atomic<uint32_t> parked_{0};  // bumped by on_wake when it parks
  std::atomic<uint32_t> go_{0};      // bumped by the data path to let it go
  bool held_ = false;
  uint64_t since_ = 0, slice_tsc_ = 0, cycles_ = 0;
  // The holder's CPUs, for the interrupt thread (on_wake applies them when `pin_` is set).
  cpu_set_t cpus_{};
  std::atomic<bool> pin_{false};
  unsigned spins_ = 2000;  // rte_pause() rounds before yielding: 0 when the holder has one CPU
};

}  // namespace nfpark::dp
