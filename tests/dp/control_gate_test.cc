// ControlGate (src/dp/control_gate.h): while the data path holds the gate, no callback runs on
// DPDK's interrupt thread (where memif maps and unmaps the memory it shares with its peer);
// released, or at the end of a slice, the pending callbacks run. A stand-in for memif's control
// event here: a callback on an eventfd of our own, registered like memif registers its socket.
#define ALLOW_EXPERIMENTAL_API 1
#include "dp/control_gate.h"

#include <gtest/gtest.h>
#include <rte_interrupts.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "dp/mbuf_env.h"

namespace nfpark::dp {
namespace {

using namespace std::chrono_literals;

struct ControlEvent {  // what memif's control socket is to the interrupt thread
  int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  rte_intr_handle* h = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
  std::atomic<int> ran{0};
  cpu_set_t cpus{};  // the interrupt thread's CPUs when the callback last ran
  static void on(void* arg) {
    auto* e = static_cast<ControlEvent*>(arg);
    uint64_t v;
    if (read(e->fd, &v, sizeof v) != sizeof v) return;
    sched_getaffinity(0, sizeof e->cpus, &e->cpus);
    e->ran.fetch_add(1);
  }
  ControlEvent() {
    rte_intr_type_set(h, RTE_INTR_HANDLE_EXT);
    rte_intr_fd_set(h, fd);
    rte_intr_callback_register(h, on, this);
  }
  ~ControlEvent() {
    while (rte_intr_callback_unregister(h, on, this) == -EAGAIN) std::this_thread::yield();
    rte_intr_instance_free(h);
    close(fd);
  }
  void fire() const {
    const uint64_t one = 1;
    ASSERT_EQ(write(fd, &one, sizeof one), ssize_t(sizeof one));
  }
  // Waits up to `limit` for the callback to have run `n` times, calling `tick` meanwhile.
  template <class F>
  bool ran_within(int n, std::chrono::milliseconds limit, F tick) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (ran.load() < n && std::chrono::steady_clock::now() < end) tick();
    return ran.load() >= n;
  }
};

class ControlGateTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { fixture::setup_mbuf_env(); }
  void SetUp() override {
    std::string err;
    ASSERT_TRUE(gate.enable(err)) << err;
  }
  void TearDown() override {
    gate.release();
    gate.set_slice_us(1000);
  }
  ControlGate& gate = ControlGate::instance();
};

TEST_F(ControlGateTest, NoControlWorkRunsWhileTheGateIsHeld) {
  ControlEvent ev;
  ASSERT_TRUE(ev.ran_within(0, 0ms, [] {}));
  gate.set_slice_us(10'000'000);  // one slice longer than the test
  gate.hold();
  ASSERT_TRUE(gate.held());
  ev.fire();
  // The interrupt thread is parked in the gate: 200 ms of holding, the event still waits.
  EXPECT_FALSE(ev.ran_within(1, 200ms, [&] { gate.hold(); }));
  gate.release();
  EXPECT_TRUE(ev.ran_within(1, 5000ms, [] { std::this_thread::sleep_for(1ms); }));
}

TEST_F(ControlGateTest, ControlWorkRunsBetweenSlicesWhileTheDataPathKeepsHolding) {
  ControlEvent ev;
  gate.set_slice_us(1000);
  gate.hold();
  const uint64_t cycles = gate.cycles();
  for (int i = 1; i <= 3; ++i) {
    ev.fire();
    // The data path never lets go on its own; the gate lets the thread run once per slice.
    EXPECT_TRUE(ev.ran_within(i, 5000ms, [&] { gate.hold(); })) << i;
    EXPECT_TRUE(gate.held());
  }
  EXPECT_GT(gate.cycles(), cycles);
}

TEST_F(ControlGateTest, ReleaseAndHoldAreIdempotent) {
  ControlEvent ev;
  gate.release();
  gate.release();
  EXPECT_FALSE(gate.held());
  ev.fire();
  EXPECT_TRUE(ev.ran_within(1, 5000ms, [] { std::this_thread::sleep_for(1ms); }));
  gate.set_slice_us(10'000'000);
  gate.hold();
  gate.hold();  // already held: no second park request left behind
  gate.release();
  ev.fire();
  EXPECT_TRUE(ev.ran_within(2, 5000ms, [] { std::this_thread::sleep_for(1ms); }));
}

// The interrupt thread follows the CPUs of the thread that holds the gate (control_gate.h,
// "Where the interrupt thread runs"): a holder on one CPU, then another holder on another CPU.
TEST_F(ControlGateTest, TheInterruptThreadRunsOnTheHoldersCpus) {
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (online < 2) GTEST_SKIP() << "needs two CPUs";
  const std::vector<int> cpus = {int(online) - 1, 0};
  ControlEvent ev;
  int runs = 0;
  for (const int cpu : cpus) {
    std::thread holder([&] {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
      gate.set_slice_us(10'000'000);
      gate.hold();
      gate.release();
    });
    holder.join();
    ev.fire();
    ASSERT_TRUE(ev.ran_within(++runs, 5000ms, [] { std::this_thread::sleep_for(1ms); }));
    EXPECT_EQ(CPU_COUNT(&ev.cpus), 1) << cpu;
    EXPECT_TRUE(CPU_ISSET(cpu, &ev.cpus)) << cpu;
  }
  cpu_set_t mine;  // this thread holds again: the interrupt thread comes to its CPUs
  ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
  gate.set_slice_us(1000);
  gate.hold();
  gate.release();
  ev.fire();
  ASSERT_TRUE(ev.ran_within(++runs, 5000ms, [] { std::this_thread::sleep_for(1ms); }));
  EXPECT_TRUE(CPU_EQUAL(&ev.cpus, &mine));
}

}  // namespace
}  // namespace nfpark::dp
