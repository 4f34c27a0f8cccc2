// Per-endpoint statistics: the hot recorder that report() writes with atomics (no lock), the
// per-cycle sample the controller drains it into, and the sliding window over recent samples
// (S-O1, S-O2, S-O3, S-P1).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

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

  // Empties the sample but keeps the histogram's capacity, so a window slot is reused without
  // an allocation per endpoint per cycle.
  void Reset() {
    SparseHistogram h = std::move(histogram);
    h.clear();
    *this = CycleSample{};
    histogram = std::move(h);
  }
};

class HotStats {
 public:
  void Record(double latency_ms, int outcome);
  void RecordResources(const wt_resources& r);
  // Moves everything recorded so far into `out`; each record lands in exactly one drain.
  void Drain(CycleSample* out);
  // Lifetime count per outcome, drained or not (for accounting and exposition). Exact when no
  // report or Drain() runs at the same time: callers hold the service's mutex, as Drain() does,
  // or read an endpoint that left the set (no longer drained or reported to).
  uint64_t Lifetime(int outcome) const;

 private:
  // A success costs two atomic read-modify-writes (latency sum, histogram bucket) and no count
  // of its own: successes are the served answers (the histogram's records) minus the business
  // errors. Every other outcome costs one count; a business error, being served, three.
  // Lifetime totals and the latency count are derived at drain time too. The latency path's
  // fields come first (see Endpoint's layout).
  std::atomic<uint64_t> latency_sum_us_{0};
  AtomicHistogram histogram_;
  // Counts of the outcomes other than success: outcome o at o - 1.
  static_assert(WT_OUTCOME_SUCCESS == 0);
  std::array<std::atomic<uint64_t>, kOutcomes - 1> failures_{};
  std::atomic<uint64_t>& Count(int outcome) { return failures_[outcome - 1]; }
  const std::atomic<uint64_t>& Count(int outcome) const { return failures_[outcome - 1]; }
  // Written by Drain() only. drained_[WT_OUTCOME_SUCCESS] is the successes handed to cycles.
  std::array<std::atomic<uint64_t>, kOutcomes> drained_{};
  std::atomic<uint64_t> drained_served_{0};
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

// The last `slots` cycle samples, in a ring of exactly `slots` entries (a std::deque costs
// ~600 bytes per endpoint before it holds anything).
class Window {
 public:
  // The slot for a new sample, emptied (the oldest is dropped when the window is full).
  CycleSample& Next(size_t slots);
  void Push(CycleSample sample, size_t slots) { Next(slots) = std::move(sample); }
  void Clear() { start_ = count_ = 0; }
  WindowStats Compute() const;

 private:
  void Resize(size_t slots);
  const CycleSample& At(size_t i) const { return ring_[(start_ + i) % ring_.size()]; }  // 0 = oldest

  std::vector<CycleSample> ring_;
  size_t start_ = 0, count_ = 0;
};

}  // namespace weighted
