// Per-endpoint statistics: the hot recorder that report() writes with atomics (no lock), the
// per-cycle sample the controller drains it into, and the sliding window over recent samples
// (S-O1, S-O2, S-O3, S-P1).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>

#include "histogram.h"
#include "weighted/weighted.h"

namespace weighted {

inline constexpr int kOutcomes = WT_OUTCOME_COUNT;
inline constexpr int kResources = 4;  // cpu, memory, thread pool, connection pool

// What one controller cycle saw of one endpoint.
struct CycleSample {
  std::array<uint64_t, kOutcomes> outcomes{};
  uint64_t latency_sum_us = 0;  // over served answers: successes and business errors
  uint64_t latency_count = 0;
  SparseHistogram histogram;
  std::array<double, kResources> resource_sum{};
  std::array<uint32_t, kResources> resource_n{};
};

class HotStats {
 public:
  void Record(double latency_ms, int outcome);
  void RecordResources(const wt_resources& r);
  // Moves everything recorded so far into `out`; each record lands in exactly one drain.
  void Drain(CycleSample* out);
  // Lifetime count per outcome, drained or not (for accounting and exposition).
  uint64_t Lifetime(int outcome) const { return lifetime_[outcome].load(std::memory_order_relaxed); }

 private:
  std::array<std::atomic<uint64_t>, kOutcomes> outcomes_{};
  std::array<std::atomic<uint64_t>, kOutcomes> lifetime_{};
  std::atomic<uint64_t> latency_sum_us_{0};
  std::atomic<uint64_t> latency_count_{0};
  AtomicHistogram histogram_;
  // Resource samples in millionths so they fit integer atomics.
  std::array<std::atomic<uint64_t>, kResources> resource_sum_{};
  std::array<std::atomic<uint32_t>, kResources> resource_n_{};
};

// Statistics of one endpoint over the sliding window.
struct WindowStats {
  uint64_t requests = 0;  // all outcomes
  std::array<uint64_t, kOutcomes> outcomes{};
  double error_rate = 0;  // every non-success outcome / requests
  uint64_t latency_samples = 0;  // served answers, which the latency statistics describe
  double mean_ms = 0, p95_ms = 0, p99_ms = 0;
  std::array<double, kResources> resources{};      // window averages
  std::array<bool, kResources> resource_known{};   // any sample in the window
  double Rate(int outcome) const { return requests ? double(outcomes[outcome]) / requests : 0; }
};

// The last `slots` cycle samples; the newest is at the back.
class Window {
 public:
  void Push(CycleSample sample, size_t slots);
  void Clear() { samples_.clear(); }
  WindowStats Compute() const;

 private:
  std::deque<CycleSample> samples_;
};

}  // namespace weighted
