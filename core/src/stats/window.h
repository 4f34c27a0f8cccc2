// The sliding window over an endpoint's recent cycle samples and the statistics the rules read
// (S-P1: windowed values, not instantaneous ones).
#pragma once

#include <array>
#include <cstdint>
#include <cstddef>
#include <vector>

#include "config/config.h"
#include "stats/cycle_sample.h"
#include "stats/signals.h"

namespace weighted {

enum class ResourceOrigin : uint8_t { kNone, kClient, kServer };
inline const char* OriginName(ResourceOrigin o) {
  return o == ResourceOrigin::kClient ? "client" : o == ResourceOrigin::kServer ? "server" : "none";
}

// Statistics of one endpoint over the sliding window.
struct WindowStats {
  uint64_t requests = 0;  // all outcomes
  std::array<uint64_t, kOutcomes> outcomes{};
  double error_rate = 0;  // every non-success outcome / requests
  uint64_t latency_samples = 0;  // served answers, which the latency statistics describe
  double mean_ms = 0, p95_ms = 0, p99_ms = 0;
  // What the rules read: per resource the client's or the server's window average, as
  // ResolveResources() chose (before it, the client's).
  std::array<double, kResources> resources{};
  std::array<bool, kResources> resource_known{};   // any sample in the window
  std::array<ResourceOrigin, kResources> resource_origin{};
  // The servers' own reports (load reports, metric sources) over the same window.
  std::array<double, kResources> server_resources{};
  std::array<bool, kResources> server_known{};
  // The server's own error rate (all its clients' traffic: a load report's eps / rps, or a
  // metric source), fresh within load_report.max_age_ms at the cycle; see HotStats.
  double server_error_rate = 0;
  bool server_error_known = false;
  // The server's own recent service time (ms, load_report.latency_metric or the metric
  // source's latency_ms query), fresh within load_report.max_age_ms at the cycle.
  double server_latency_ms = 0;
  bool server_latency_known = false;
  double Rate(int outcome) const { return requests ? double(outcomes[outcome]) / requests : 0; }
};

// Chooses, per resource, the client's or the server's window average for the rules: the
// preferred one when it is there, else the other. A server's figure counts only while its last
// report (server_at[i], engine nanoseconds) is at most max_age_ns old at `now`.
void ResolveResources(ResourceSource prefer, int64_t max_age_ns, int64_t now,
                      const std::array<int64_t, kResources>& server_at, WindowStats* s);

// The last `slots` cycle samples, in a ring of exactly `slots` entries (a std::deque costs
// ~600 bytes per endpoint before it holds anything).
class Window {
 public:
  // The slot for a new sample, emptied (the oldest is dropped when the window is full).
  CycleSample& Next(size_t slots);
  void Push(CycleSample sample, size_t slots) { Next(slots) = std::move(sample); }
  void Clear() { start_ = count_ = 0; }
  // Over the whole window, or over its `newest` most recent samples.
  WindowStats Compute(size_t newest = SIZE_MAX) const;

 private:
  void Resize(size_t slots);
  const CycleSample& At(size_t i) const { return ring_[(start_ + i) % ring_.size()]; }  // 0 = oldest

  std::vector<CycleSample> ring_;
  size_t start_ = 0, count_ = 0;
};

}  // namespace weighted
