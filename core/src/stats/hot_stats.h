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
  // The same from the server itself (a load report, a metric source) at `now_ns`: kept apart
  // from the client's samples, with the time each resource was last reported (its freshness).
  void RecordServerResources(uint32_t present, const std::array<double, kResources>& values,
                             int64_t now_ns);
  // The server's own rates from its last report that carried them (kReportRps, kReportEps).
  void RecordServerRates(uint32_t present, double rps, double eps, int64_t now_ns);
  // The server's error rate as a metric source computed it (a fraction) at `now_ns`.
  void RecordServerErrorRate(double rate, int64_t now_ns);
  // The server's own error rate, from whichever came last: a load report's eps / rps (with
  // rps > 0) or a metric source's figure; false when neither is at most max_age_ns old.
  bool ServerErrorRate(int64_t now_ns, int64_t max_age_ns, double* rate) const;
  // The server's own recent service time (ms): a load report's latency metric or a metric
  // source's, whichever came last, at `now_ns`.
  void RecordServerLatency(double ms, int64_t now_ns);
  // The last one, false when it is older than max_age_ns (or none came).
  bool ServerLatency(int64_t now_ns, int64_t max_age_ns, double* ms) const;
  void CountBadReport() { bad_reports_.fetch_add(1, std::memory_order_relaxed); }
  // When a server last reported `resource` (INT64_MIN: never), and the rates' last report.
  int64_t ServerReportedAt(int resource) const {
    return server_at_[resource].load(std::memory_order_relaxed);
  }
  struct ServerRates {
    double rps = 0, eps = 0;
    bool has_rps = false, has_eps = false;
    int64_t at_ns = INT64_MIN;
  };
  ServerRates Rates() const;
  uint64_t bad_reports() const { return bad_reports_.load(std::memory_order_relaxed); }
  uint64_t server_reports() const { return server_reports_.load(std::memory_order_relaxed); }
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
  // The server's reports, after everything the client's report path touches.
  std::array<std::atomic<uint64_t>, kResources> server_sum_{};
  std::array<std::atomic<uint32_t>, kResources> server_n_{};
  std::array<std::atomic<int64_t>, kResources> server_at_{INT64_MIN, INT64_MIN, INT64_MIN,
                                                          INT64_MIN};
  std::atomic<uint64_t> rps_bits_{0}, eps_bits_{0};  // doubles, bit for bit
  std::atomic<int64_t> rates_at_{INT64_MIN};
  std::atomic<uint32_t> rates_present_{0};
  std::atomic<uint64_t> source_error_bits_{0};
  std::atomic<int64_t> source_error_at_{INT64_MIN};
  std::atomic<uint64_t> latency_bits_{0};
  std::atomic<int64_t> latency_at_{INT64_MIN};
  std::atomic<uint64_t> server_reports_{0}, bad_reports_{0};
};

}  // namespace weighted
