// Quantiles over a window's per-cycle histograms: the upper quantiles (p95, p99) that the
// latency rules read, by a walk down from the top bucket that merges the window's slots on the
// fly instead of copying them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "stats/histogram.h"

namespace weighted {

// Quantiles qs[0..n) (each in [0, 1]) over a set of sparse histograms, in microseconds, in one
// pass; 0 when empty. Parts sorted by bucket (as Drain() leaves them) are merged without a copy.
void Quantiles(const SparseHistogram* const* parts, size_t count, const double* qs, double* out,
               int n);
// The same for parts known to be sorted by bucket (skips the check).
// `total` is the parts' record count when the caller knows it (0: count them).
void QuantilesOfSorted(const SparseHistogram* const* parts, size_t count, const double* qs,
                       double* out, int n, uint64_t total = 0);

// The window's p95 and p99 (microseconds; 0 when empty) over at most two sorted parts (null:
// absent) holding `total` records.
void UpperQuantilesOfTwo(const SparseHistogram* a, const SparseHistogram* b, uint64_t total,
                         double* p95, double* p99);

// Quantile q in [0, 1] over a set of sparse histograms, in microseconds; 0 when empty.
double Quantile(const std::vector<const SparseHistogram*>& parts, double q);

}  // namespace weighted
