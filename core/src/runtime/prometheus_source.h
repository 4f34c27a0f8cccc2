// The Prometheus source (config sources.prometheus, S-I2): a thread of the engine's own asks a
// Prometheus server for one instant vector per resource and records each series whose label is
// an endpoint id as that endpoint's server-reported value. Nothing on the request path or in a
// controller cycle waits for it: a poll only ever writes the endpoints' hot recorders, as a
// report does. Its health (fresh, stale, the last error) is what the snapshot shows and what the
// source_stale / source_fresh events announce.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "config/config.h"
#include "model/pending_event.h"
#include "stats/signals.h"

namespace weighted {

// Freshness of one source, from its polls' results at the times given: no clock of its own, so
// the rules are tested on made-up times.
class SourceHealth {
 public:
  explicit SourceHealth(int64_t started_ns) : started_ns_(started_ns) {}
  // After a poll at `now`: ok, or the error. Returns the event the change calls for, if any.
  std::optional<wt_event_type> OnPoll(int64_t now, bool ok, const std::string& error,
                                      int64_t stale_ns);
  bool stale() const { return stale_; }
  bool ever_ok() const { return last_ok_ns_ != INT64_MIN; }
  int64_t last_ok_ns() const { return last_ok_ns_; }
  int64_t started_ns() const { return started_ns_; }
  const std::string& last_error() const { return last_error_; }
  uint64_t polls() const { return polls_; }
  uint64_t failed() const { return failed_; }

 private:
  int64_t started_ns_;
  int64_t last_ok_ns_ = INT64_MIN;
  bool stale_ = false;
  std::string last_error_;
  uint64_t polls_ = 0, failed_ = 0;
};

// What the snapshot shows of a source.
struct SourceView {
  std::string name, url, state;  // state: "starting", "fresh", "stale"
  std::optional<int64_t> age_ms;  // since the last successful poll
  std::string last_error;
  uint64_t polls = 0, failed = 0, series = 0, matched = 0;
  std::string library;
};

// Parses a Prometheus /api/v1/query answer (an instant vector) into (label value, sample value)
// pairs; returns "" or what was wrong with it. Samples that are not numbers in [0, 1] (NaN,
// +Inf, a ratio over 1) are left out and named in *skipped; CPU over 1 counts as 1 (`cap`).
// `max_ms` > 0: the samples are milliseconds in [0, max_ms] instead of fractions.
std::string ParseVector(std::string_view body, std::string_view label, bool cap,
                        std::vector<std::pair<std::string, double>>* out, std::string* skipped,
                        double max_ms = 0);

// What RecordFn's `resource` is for the error-rate query: not a resource, the fleet's view of
// the server's failures; and for the latency query, the server's service time in ms.
inline constexpr int kSourceErrorRate = kResources;
inline constexpr int kSourceLatency = kResources + 1;
// The latency query's samples above this (an hour, limits.max_latency_ms's default) are absurd.
inline constexpr double kMaxSourceLatencyMs = 3600.0 * 1000.0;

class PrometheusSource {
 public:
  // Records one resource (or kSourceErrorRate) of the endpoint with this id in every service that has it; returns how
  // many endpoints took it. Raises engine-wide events.
  using RecordFn = std::function<size_t(std::string_view id, int resource, double value)>;
  using EventFn = std::function<void(std::vector<PendingEvent>)>;

  PrometheusSource(RecordFn record, EventFn raise) : record_(std::move(record)), raise_(std::move(raise)) {}
  ~PrometheusSource() { Stop(); }

  // Starts, restarts (a changed source section) or stops (url "") the polling thread.
  void Configure(const Config::Sources::Prometheus& cfg);
  void Stop();
  std::optional<SourceView> View() const;  // nullopt when off

 private:
  void Loop(Config::Sources::Prometheus cfg);
  // One poll: every query once. Returns "" or the first error.
  std::string Poll(const Config::Sources::Prometheus& cfg, class HttpGet& http);

  RecordFn record_;
  EventFn raise_;
  std::optional<Config::Sources::Prometheus> cfg_;  // the running thread's
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex wait_mu_;
  std::condition_variable wake_;

  mutable std::mutex mu_;  // guards what View() reads
  std::optional<SourceHealth> health_;
  uint64_t series_ = 0, matched_ = 0;
};

}  // namespace weighted
