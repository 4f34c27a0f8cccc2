// One simulated backend: `workers` slots, a bounded FIFO queue (a full queue answers 503 at
// once), a service-time distribution, faults, and the resource report a real server exports
// (CPU = busy share of its workers over the report interval).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "weighted_sim/fault.h"
#include "weighted_sim/policy.h"
#include "weighted_sim/rng.h"
#include "weighted_sim/scenario.h"

namespace weighted_sim {

class Backend {
 public:
  enum class Admit {
    kStarted,     // a worker took it; `Started` says when it finishes
    kQueued,      // waits for a worker
    kRejected,    // queue full: 503 after reject_ms
    kRefused,     // hard down: connection error after connect_error_ms
    kFastFailed,  // fast-fail fault: 5xx after its error latency, no worker used
  };
  struct Started {
    uint64_t request = 0;
    int64_t done_ns = 0;
    bool error = false;  // answered 5xx after the normal service time (leak, background)
  };
  struct Arrival {
    Admit admit = Admit::kQueued;
    Started started;        // kStarted only
    int64_t answer_ns = 0;  // kRejected / kRefused / kFastFailed: when the error arrives
  };

  Backend(const BackendSpec& spec, int index, const std::vector<FaultSpec>* faults, uint64_t seed);

  Arrival Arrive(uint64_t request, int64_t now_ns);
  // The request in service that finishes now frees its worker; the head of the queue, if any,
  // starts and is returned.
  std::optional<Started> Finish(int64_t now_ns);
  // Closes the current report interval and returns what the server exports for it.
  BackendReport Report(int64_t now_ns);

  Effects EffectsAt(int64_t now_ns) const;
  double ServiceMeanMs(int64_t now_ns) const;  // true mean, faults applied
  double ErrorRate(int64_t now_ns) const;      // true probability of a non-success answer
  int busy() const { return busy_; }
  int queued() const { return static_cast<int>(queue_.size()); }
  int outstanding() const { return busy_ + queued(); }
  const BackendSpec& spec() const { return spec_; }

 private:
  Started Start(uint64_t request, int64_t now_ns);
  void AccountBusy(int64_t now_ns);
  double SampleServiceMs();
  // What is left of a stall at now_ns: work started in a pause finishes after it.
  static double StallLeftMs(const Effects& e, int64_t now_ns);

  BackendSpec spec_;
  int index_;
  const std::vector<FaultSpec>* faults_;
  Rng service_rng_;
  Rng error_rng_;
  int busy_ = 0;
  std::deque<uint64_t> queue_;
  // Report interval accounting.
  int64_t interval_start_ns_ = 0;
  int64_t last_change_ns_ = 0;
  double busy_ns_ = 0;  // integral of busy workers over time in this interval
  int64_t answered_ = 0;
  int64_t failed_ = 0;
  double service_ms_ = 0;  // service times of requests started in this interval
  int64_t started_ = 0;
  double last_latency_ms_ = 0;
};

}  // namespace weighted_sim
