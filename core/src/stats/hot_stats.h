// The hot recorder: what report() writes with atomics (no lock), drained by the controller into
// one CycleSample per cycle (S-O1, S-O2, S-O3).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "stats/cycle_sample.h"
#include "stats/histogram.h"
#include "stats/signals.h"
#include "weighted/weighted.h"

namespace weighted {

class HotStats {
 public:
  void Record(double latency_ms, int outcome);
  // One sample of the resources whose WT_RES_* bit is set in `present` (fractions in [0, 1]).
  void RecordResources(uint32_t present, const double (&values)[kResources]);
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

}  // namespace weighted
