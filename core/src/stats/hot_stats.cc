#include "stats/hot_stats.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace weighted {

namespace {
constexpr double kMicro = 1e6;
}

void HotStats::Record(double latency_ms, int outcome) {
  // Latency statistics describe service time, so only answers that were served count. A fast
  // failure (refused, 5xx) would make a broken endpoint look fast and raise its healthy peers'
  // relative latency (Prequal's "sinkholing"); a timeout's latency is the client's deadline,
  // and the timeout already counts as an error.
  if (outcome != WT_OUTCOME_SUCCESS) {
    // A business error's count goes before its bucket: Drain() relies on that order.
    Count(outcome).fetch_add(1, std::memory_order_relaxed);
    if (outcome != WT_OUTCOME_BUSINESS_ERROR) return;
  }
  const double us = latency_ms * 1000.0;
  latency_sum_us_.fetch_add(static_cast<uint64_t>(us), std::memory_order_relaxed);
  histogram_.Record(BucketOf(us));  // one bucket per served answer: its count is the latency count
}

void HotStats::RecordResources(uint32_t present, const double (&values)[kResources]) {
  for (int i = 0; i < kResources; ++i) {
    if (!(present & (1u << i))) continue;
    resource_sum_[i].fetch_add(static_cast<uint64_t>(std::llround(values[i] * kMicro)),
                               std::memory_order_relaxed);
    resource_n_[i].fetch_add(1, std::memory_order_relaxed);
  }
}

void HotStats::RecordServerResources(uint32_t present,
                                     const std::array<double, kResources>& values,
                                     int64_t now_ns) {
  for (int i = 0; i < kResources; ++i) {
    if (!(present & (1u << i))) continue;
    // values are in [0, 1]: rounding by + 0.5 is llround's result without its libm call.
    server_sum_[i].fetch_add(static_cast<uint64_t>(values[i] * kMicro + 0.5),
                             std::memory_order_relaxed);
    server_n_[i].fetch_add(1, std::memory_order_relaxed);
    // A plain store, not a max: two reports racing leave either time, both current.
    server_at_[i].store(now_ns, std::memory_order_relaxed);
  }
  server_reports_.fetch_add(1, std::memory_order_relaxed);
}

void HotStats::RecordServerRates(uint32_t present, double rps, double eps, int64_t now_ns) {
  constexpr uint32_t kRates = (1u << 4) | (1u << 5);  // kReportRps | kReportEps
  if (!(present & kRates)) return;
  // An idle server's report (no requests) says nothing of its error rate: the last figure stands
  // until it is older than load_report.max_age_ms. Dropping it would lift the price from an
  // endpoint that every client has just drained, and bring the whole fleet back at once.
  if ((present & (1u << 4)) && !(rps > 0)) return;
  rps_bits_.store(std::bit_cast<uint64_t>(rps), std::memory_order_relaxed);
  eps_bits_.store(std::bit_cast<uint64_t>(eps), std::memory_order_relaxed);
  rates_present_.store(present & kRates, std::memory_order_relaxed);
  rates_at_.store(now_ns, std::memory_order_relaxed);
}

void HotStats::RecordServerErrorRate(double rate, int64_t now_ns) {
  source_error_bits_.store(std::bit_cast<uint64_t>(rate), std::memory_order_relaxed);
  source_error_at_.store(now_ns, std::memory_order_relaxed);
  server_reports_.fetch_add(1, std::memory_order_relaxed);
}

bool HotStats::ServerErrorRate(int64_t now_ns, int64_t max_age_ns, double* rate) const {
  // INT64_MIN is "never": checked before "now - at", which cannot overflow for a real time.
  const auto fresh = [&](int64_t at) { return at != INT64_MIN && now_ns - at <= max_age_ns; };
  const ServerRates r = Rates();
  const bool header = r.has_rps && r.has_eps && r.rps > 0 && fresh(r.at_ns);
  const int64_t source_at = source_error_at_.load(std::memory_order_relaxed);
  const bool source = fresh(source_at);
  if (!header && !source) return false;
  if (header && (!source || r.at_ns >= source_at)) {
    *rate = std::min(1.0, r.eps / r.rps);  // a report's eps counts errors among its rps
  } else {
    *rate = std::bit_cast<double>(source_error_bits_.load(std::memory_order_relaxed));
  }
  return true;
}

void HotStats::RecordServerLatency(double ms, int64_t now_ns) {
  // One figure and its time, as the error rate: the latest report says what the server serves
  // now. Two racing reports leave either, both current.
  latency_bits_.store(std::bit_cast<uint64_t>(ms), std::memory_order_relaxed);
  latency_at_.store(now_ns, std::memory_order_relaxed);
}

bool HotStats::ServerLatency(int64_t now_ns, int64_t max_age_ns, double* ms) const {
  const int64_t at = latency_at_.load(std::memory_order_relaxed);
  if (at == INT64_MIN || now_ns - at > max_age_ns) return false;
  *ms = std::bit_cast<double>(latency_bits_.load(std::memory_order_relaxed));
  return true;
}

HotStats::ServerRates HotStats::Rates() const {
  ServerRates r;
  const uint32_t p = rates_present_.load(std::memory_order_relaxed);
  r.has_rps = p & (1u << 4);
  r.has_eps = p & (1u << 5);
  r.rps = std::bit_cast<double>(rps_bits_.load(std::memory_order_relaxed));
  r.eps = std::bit_cast<double>(eps_bits_.load(std::memory_order_relaxed));
  r.at_ns = rates_at_.load(std::memory_order_relaxed);
  return r;
}

void HotStats::Drain(CycleSample* out) {
  // A relaxed load first: an idle counter costs no locked exchange (a cycle drains every
  // endpoint, and most resource counters are never used).
  auto take = [](auto& a) { return a.load(std::memory_order_relaxed) ? a.exchange(0) : 0; };
  auto add = [](std::atomic<uint64_t>& a, uint64_t n) {
    a.store(a.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  };
  // The histogram before the counts. A business error counts itself before it records its
  // bucket (Record), so a bucket taken here has its count taken below, in this drain or an
  // earlier one (the bucket's exchange acquires what its recorder did before it). The served
  // total minus the business total can then lag the successes, never exceed them.
  const bool had = !out->histogram.empty();
  const uint64_t served = histogram_.Drain(&out->histogram);
  if (had) std::sort(out->histogram.begin(), out->histogram.end());
  out->latency_count += served;
  add(drained_served_, served);
  out->latency_sum_us += take(latency_sum_us_);
  for (int i = 0; i < kOutcomes; ++i) {
    if (i == WT_OUTCOME_SUCCESS) continue;
    const uint64_t n = take(Count(i));
    out->outcomes[i] += n;
    add(drained_[i], n);
  }
  // Successes = served - business errors, as running totals: a business error whose count was
  // taken but whose bucket was not makes the difference lag by one, and the next drain that
  // takes the bucket hands the success on. Once all is drained the total is exact.
  const uint64_t served_total = drained_served_.load(std::memory_order_relaxed);
  const uint64_t business_total = drained_[WT_OUTCOME_BUSINESS_ERROR].load(std::memory_order_relaxed);
  const uint64_t handed = drained_[WT_OUTCOME_SUCCESS].load(std::memory_order_relaxed);
  if (served_total > business_total + handed) {
    const uint64_t n = served_total - business_total - handed;
    out->outcomes[WT_OUTCOME_SUCCESS] += n;
    add(drained_[WT_OUTCOME_SUCCESS], n);
  }
  for (int i = 0; i < kResources; ++i) {
    out->resource_sum[i] += take(resource_sum_[i]) / kMicro;
    out->resource_n[i] += take(resource_n_[i]);
    out->server_sum[i] += take(server_sum_[i]) / kMicro;
    out->server_n[i] += take(server_n_[i]);
  }
}

uint64_t HotStats::Lifetime(int outcome) const {
  auto get = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  if (outcome != WT_OUTCOME_SUCCESS) return get(drained_[outcome]) + get(Count(outcome));
  const uint64_t served = get(drained_served_) + histogram_.Pending();
  const uint64_t business = Lifetime(WT_OUTCOME_BUSINESS_ERROR);
  return served > business ? served - business : 0;
}

}  // namespace weighted
