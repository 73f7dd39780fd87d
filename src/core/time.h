// Time in nfpark: nanoseconds as a signed 64-bit count, read from an injected Clock.
// Elements never read a wall clock: the engine reads its clock once per batch and passes
// `now` down, so the DPDK engine (TSC) and a virtual clock (tests, simulator) are interchangeable.
#pragma once
#include <chrono>
#include <cstdint>

namespace nfpark {

using Nanos = int64_t;  // nanoseconds
constexpr Nanos kMicro = 1000;
constexpr Nanos kMilli = 1000 * kMicro;
constexpr Nanos kSecond = 1000 * kMilli;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Nanos now() const = 0;
};

// Monotonic host time (std::chrono::steady_clock).
class SteadyClock final : public Clock {
 public:
  Nanos now() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

// Time that moves only when told to: exact, repeatable tests and replay at trace time.
class VirtualClock final : public Clock {
 public:
  explicit VirtualClock(Nanos start = 0) : now_(start) {}
  Nanos now() const override { return now_; }
  void set(Nanos t) { now_ = t; }
  void advance(Nanos d) { now_ += d; }

 private:
  Nanos now_;
};

}  // namespace nfpark
