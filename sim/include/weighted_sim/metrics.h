// The benchmark's metrics, exactly as docs/benchmark.md defines them. Pure functions over
// per-second series, so tests can check them on small hand-made series.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace weighted_sim {

inline constexpr int kMovingWindowS = 5;
inline constexpr double kRecoveryMaxErrorRate = 0.01;
inline constexpr double kRecoveryThroughputFraction = 0.9;
inline constexpr double kReadmissionShareFraction = 0.9;

// Successful responses per second over the whole run.
double MeanSuccessTps(const std::vector<int64_t>& success, double duration_s);

// Largest errors / (successes + errors) over 1-s bins that completed anything.
double MaxErrorRate(const std::vector<int64_t>& success, const std::vector<int64_t>& errors);

// Largest error rate of a 5-s moving window (bins k-4..k) lying wholly in [from_s, until_s),
// over windows that completed anything; nullopt when no such window exists.
std::optional<double> MaxWindowErrorRate(const std::vector<int64_t>& success,
                                         const std::vector<int64_t>& errors, int from_s,
                                         int until_s);

// Seconds from the onset at `onset_s` until the 5-s moving error rate stays <= 1% and the 5-s
// moving success throughput stays >= 90% of the oracle's over the same window, up to
// `next_event_s` (the next fault event, or the end of the run). The moving window "at k" covers
// bins k-4..k and ends at k+1; candidates run from k = onset-1 (0: never broke) to
// next_event-1. nullopt = never.
std::optional<double> RecoveryTime(const std::vector<int64_t>& success,
                                   const std::vector<int64_t>& errors,
                                   const std::vector<int64_t>& oracle_success, int onset_s,
                                   int next_event_s);

// Seconds from a fault's end at `end_s` until the backend's 5-s moving share of the requests
// sent is at least 90% of `fair_share` (its base weight over the sum), first reached before
// `until_s`. nullopt = never.
std::optional<double> ReadmissionTime(const std::vector<int64_t>& sent_to_backend,
                                      const std::vector<int64_t>& sent_total, double fair_share,
                                      int end_s, int until_s);

// Nearest-rank percentile of an ascending-sorted vector (q in (0, 1]); 0 for an empty one.
double Percentile(const std::vector<double>& sorted, double q);

}  // namespace weighted_sim
