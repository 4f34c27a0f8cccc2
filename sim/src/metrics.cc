#include "weighted_sim/metrics.h"

#include <algorithm>
#include <cmath>

namespace weighted_sim {
namespace {

int64_t WindowSum(const std::vector<int64_t>& v, int k) {
  int64_t sum = 0;
  for (int i = std::max(0, k - kMovingWindowS + 1); i <= k && i < static_cast<int>(v.size()); ++i)
    sum += v[i];
  return sum;
}

bool Recovered(const std::vector<int64_t>& success, const std::vector<int64_t>& errors,
               const std::vector<int64_t>& oracle_success, int k) {
  const int64_t ok = WindowSum(success, k);
  const int64_t bad = WindowSum(errors, k);
  const double error_rate = ok + bad > 0 ? static_cast<double>(bad) / (ok + bad) : 0.0;
  const double oracle = static_cast<double>(WindowSum(oracle_success, k));
  return error_rate <= kRecoveryMaxErrorRate &&
         static_cast<double>(ok) >= kRecoveryThroughputFraction * oracle;
}

}  // namespace

double MeanSuccessTps(const std::vector<int64_t>& success, double duration_s) {
  int64_t sum = 0;
  for (int64_t s : success) sum += s;
  return duration_s > 0 ? static_cast<double>(sum) / duration_s : 0.0;
}

double MaxErrorRate(const std::vector<int64_t>& success, const std::vector<int64_t>& errors) {
  double worst = 0;
  for (size_t i = 0; i < success.size() && i < errors.size(); ++i) {
    const int64_t n = success[i] + errors[i];
    if (n > 0) worst = std::max(worst, static_cast<double>(errors[i]) / n);
  }
  return worst;
}

std::optional<double> MaxWindowErrorRate(const std::vector<int64_t>& success,
                                         const std::vector<int64_t>& errors, int from_s,
                                         int until_s) {
  const int last = std::min<int>(until_s, static_cast<int>(std::min(success.size(), errors.size())));
  std::optional<double> worst;
  for (int k = std::max(0, from_s) + kMovingWindowS - 1; k < last; ++k) {
    const int64_t ok = WindowSum(success, k), bad = WindowSum(errors, k);
    if (ok + bad == 0) continue;
    const double rate = static_cast<double>(bad) / static_cast<double>(ok + bad);
    worst = std::max(worst.value_or(0.0), rate);
  }
  return worst;
}

std::optional<double> RecoveryTime(const std::vector<int64_t>& success,
                                   const std::vector<int64_t>& errors,
                                   const std::vector<int64_t>& oracle_success, int onset_s,
                                   int next_event_s) {
  const int first = std::max(0, onset_s - 1);
  const int last = std::min<int>(next_event_s, static_cast<int>(success.size())) - 1;
  if (last < first) return std::nullopt;
  // Walk back from the last window while the condition holds: the start of that run is the
  // first window from which it holds without a break until the next event.
  int k = last;
  if (!Recovered(success, errors, oracle_success, k)) return std::nullopt;
  while (k - 1 >= first && Recovered(success, errors, oracle_success, k - 1)) --k;
  return std::max(0, k + 1 - onset_s);
}

std::optional<double> ReadmissionTime(const std::vector<int64_t>& sent_to_backend,
                                      const std::vector<int64_t>& sent_total, double fair_share,
                                      int end_s, int until_s) {
  const int last = std::min<int>(until_s, static_cast<int>(sent_total.size())) - 1;
  for (int k = std::max(0, end_s - 1); k <= last; ++k) {
    const int64_t total = WindowSum(sent_total, k);
    if (total == 0) continue;
    const double share = static_cast<double>(WindowSum(sent_to_backend, k)) / total;
    if (share >= kReadmissionShareFraction * fair_share) return std::max(0, k + 1 - end_s);
  }
  return std::nullopt;
}

double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0.0;
  const double rank = std::ceil(q * static_cast<double>(sorted.size()));
  const size_t i = static_cast<size_t>(std::clamp(rank, 1.0, static_cast<double>(sorted.size())));
  return sorted[i - 1];
}

}  // namespace weighted_sim
