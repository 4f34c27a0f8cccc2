// What one controller cycle saw of one endpoint: the unit the hot recorder drains into and the
// sliding window keeps one of per cycle.
#pragma once

#include <array>
#include <cstdint>
#include <utility>

#include "stats/histogram.h"
#include "stats/signals.h"

namespace weighted {

// What one controller cycle saw of one endpoint.
struct CycleSample {
  std::array<uint64_t, kOutcomes> outcomes{};
  uint64_t latency_sum_us = 0;  // over served answers: successes and business errors
  uint64_t latency_count = 0;
  SparseHistogram histogram;
  std::array<double, kResources> resource_sum{};
  std::array<uint32_t, kResources> resource_n{};
  std::array<double, kResources> server_sum{};  // the servers' own reports, apart
  std::array<uint32_t, kResources> server_n{};

  // Empties the sample but keeps the histogram's capacity, so a window slot is reused without
  // an allocation per endpoint per cycle.
  void Reset() {
    SparseHistogram h = std::move(histogram);
    h.clear();
    *this = CycleSample{};
    histogram = std::move(h);
  }
};

}  // namespace weighted
