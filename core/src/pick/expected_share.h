// The share of picks a published schedule is expected to give each endpoint over the next
// controller cycle: the schedule's own draw (panic round-robin, probes, the weighted alias draw,
// keep-alive picks, the load-aware comparison) applied to the cost inputs its picks start from.
// It is a prediction from the model, never a copy of the measured share: what the weights and
// the picker's estimates imply, so that a measured share far from it says the model is wrong.
//
// Captured when a schedule is published (cheap: a few numbers per endpoint), computed when first
// read (an export), so neither the pick path nor a cycle nobody reads pays for it.
#pragma once

#include <cstdint>
#include <vector>

#include "model/endpoint_state.h"
#include "model/weights.h"
#include "pick/alias_table.h"
#include "pick/roster.h"
#include "pick/schedule.h"

namespace weighted {

class ExpectedShare {
 public:
  // The schedule `s` just built from `plan` (pick indexes into `roster`; `controls[i]` is pick
  // index i's), for a controller cycle of `interval_s` seconds. Reads the picker's estimates
  // now, and from the controls the last cycle's results and mean latency.
  void Capture(const Schedule& s, const WeightPlan& plan, const Roster& roster,
               const std::vector<ControlState*>& controls, double interval_s);
  // By pick index; sums to 1 over a non-empty roster.
  const std::vector<double>& Shares();

  // Samples of the comparison per fixed-point round, and rounds: the load-aware part is
  // estimated by running the picker's rule on sampled costs (sampling error below 0.8
  // percentage points at 2^12 samples, a tenth of what the load-aware share swings between
  // cycles; the seed is fixed, so the same inputs give the same shares).
  static constexpr uint32_t kSamples = 1u << 12;
  static constexpr int kRounds = 8;

 private:
  struct Input {
    double weight = 0;       // scheduling weight in the main table (0: not in rotation)
    double latency_ms = 0;   // peak-EWMA latency; 0: no history yet
    double mean_ms = 0;      // mean latency of the last cycle's served answers; 0: none
    double p99_ms = 0;       // the window's p99 of served answers; 0: none
    double steady = 0;       // LoadEstimate::SteadyFloor
    double fast = 0;         // the fast failure estimate
    double evidence = 0;     // LoadEstimate::FailureShare: what it shows an alternative
  };
  // Schedule::PickByCost's failure term for `e` against an alternative showing `alt`:
  // error_cost x the priced share (PricedFailureShare).
  double FailureTerm(const Input& e, double alt) const;
  void Solve();
  // Shares of the cost comparison among the main endpoints, given each one's mean in-flight.
  void Compare(const std::vector<double>& mean_inflight, std::vector<double>* wins) const;

  std::vector<Input> in_;
  std::vector<uint32_t> main_items_, probe_items_;
  std::vector<double> probe_weights_;
  AliasTable main_;
  bool panic_ = false, load_aware_ = false;
  double probe_share_ = 0, keepalive_share_ = 0, rate_ = 0;
  double error_cost_ = 0, fast_weight_ = 1;
  bool solved_ = true;
  std::vector<double> shares_;
};

}  // namespace weighted
