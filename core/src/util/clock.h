// Time source for the engine. Every time-dependent decision reads a Clock, so that tests and the
// simulator drive the engine on a manual clock and get the same result on every run.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace weighted {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t NowNs() const = 0;
  virtual bool manual() const = 0;
};

class RealClock final : public Clock {
 public:
  RealClock() : origin_(std::chrono::steady_clock::now()) {}
  // Relative to creation so that real and manual engines report comparable times.
  int64_t NowNs() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now() - origin_).count();
  }
  bool manual() const override { return false; }

 private:
  std::chrono::steady_clock::time_point origin_;
};

class ManualClock final : public Clock {
 public:
  int64_t NowNs() const override { return now_.load(std::memory_order_acquire); }
  bool manual() const override { return true; }
  void Set(int64_t ns) { now_.store(ns, std::memory_order_release); }

 private:
  std::atomic<int64_t> now_{0};
};

inline constexpr int64_t kNsPerMs = 1000000;

}  // namespace weighted
