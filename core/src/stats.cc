#include "stats.h"

#include <algorithm>
#include <cmath>

namespace weighted {

namespace {
constexpr double kMicro = 1e6;
}

void HotStats::Record(double latency_ms, int outcome) {
  outcomes_[outcome].fetch_add(1, std::memory_order_relaxed);
  lifetime_[outcome].fetch_add(1, std::memory_order_relaxed);
  // Latency statistics describe service time, so only answers that were served count. A fast
  // failure (refused, 5xx) would make a broken endpoint look fast and raise its healthy peers'
  // relative latency (Prequal's "sinkholing"); a timeout's latency is the client's deadline,
  // and the timeout already counts as an error.
  if (outcome != WT_OUTCOME_SUCCESS && outcome != WT_OUTCOME_BUSINESS_ERROR) return;
  const double us = latency_ms * 1000.0;
  latency_sum_us_.fetch_add(static_cast<uint64_t>(us), std::memory_order_relaxed);
  latency_count_.fetch_add(1, std::memory_order_relaxed);
  histogram_.Record(BucketOf(us));
}

void HotStats::RecordResources(const wt_resources& r) {
  const double values[kResources] = {r.cpu, r.memory, r.thread_pool, r.connection_pool};
  for (int i = 0; i < kResources; ++i) {
    if (!(r.present & (1u << i))) continue;
    resource_sum_[i].fetch_add(static_cast<uint64_t>(std::llround(values[i] * kMicro)),
                               std::memory_order_relaxed);
    resource_n_[i].fetch_add(1, std::memory_order_relaxed);
  }
}

void HotStats::Drain(CycleSample* out) {
  for (int i = 0; i < kOutcomes; ++i) out->outcomes[i] += outcomes_[i].exchange(0);
  out->latency_sum_us += latency_sum_us_.exchange(0);
  out->latency_count += latency_count_.exchange(0);
  histogram_.Drain(&out->histogram);
  std::sort(out->histogram.begin(), out->histogram.end());
  for (int i = 0; i < kResources; ++i) {
    out->resource_sum[i] += resource_sum_[i].exchange(0) / kMicro;
    out->resource_n[i] += resource_n_[i].exchange(0);
  }
}

void Window::Push(CycleSample sample, size_t slots) {
  samples_.push_back(std::move(sample));
  while (samples_.size() > std::max<size_t>(slots, 1)) samples_.pop_front();
}

WindowStats Window::Compute() const {
  WindowStats s;
  uint64_t lat_sum = 0, lat_n = 0;
  std::array<double, kResources> rsum{};
  std::array<uint64_t, kResources> rn{};
  std::vector<const SparseHistogram*> parts;
  for (const CycleSample& c : samples_) {
    for (int i = 0; i < kOutcomes; ++i) s.outcomes[i] += c.outcomes[i];
    lat_sum += c.latency_sum_us;
    lat_n += c.latency_count;
    for (int i = 0; i < kResources; ++i) {
      rsum[i] += c.resource_sum[i];
      rn[i] += c.resource_n[i];
    }
    if (!c.histogram.empty()) parts.push_back(&c.histogram);
  }
  for (uint64_t n : s.outcomes) s.requests += n;
  if (s.requests) s.error_rate = double(s.requests - s.outcomes[WT_OUTCOME_SUCCESS]) / s.requests;
  s.latency_samples = lat_n;
  if (lat_n) s.mean_ms = double(lat_sum) / lat_n / 1000.0;
  s.p95_ms = Quantile(parts, 0.95) / 1000.0;
  s.p99_ms = Quantile(parts, 0.99) / 1000.0;
  for (int i = 0; i < kResources; ++i) {
    s.resource_known[i] = rn[i] > 0;
    s.resources[i] = rn[i] ? rsum[i] / rn[i] : 0;
  }
  return s;
}

double Quantile(const std::vector<const SparseHistogram*>& parts, double q) {
  SparseHistogram merged;
  for (const SparseHistogram* p : parts) merged.insert(merged.end(), p->begin(), p->end());
  if (merged.empty()) return 0;
  std::sort(merged.begin(), merged.end());
  uint64_t total = 0;
  for (const auto& [b, c] : merged) total += c;
  // The rank of the q-quantile, 1-based: the smallest value with at least q x total at or below.
  const uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(q * total)));
  uint64_t seen = 0;
  for (const auto& [b, c] : merged) {
    seen += c;
    if (seen >= rank) return BucketValue(b);
  }
  return BucketValue(merged.back().first);
}

}  // namespace weighted
