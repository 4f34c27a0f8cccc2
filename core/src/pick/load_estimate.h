// What the load-aware picker knows of one endpoint: requests in flight, a peak-EWMA latency
// (Finagle) and failure shares, kept with plain atomics so that a pick and a report never take a
// lock. Updated on report (Record), aged by the controller once per cycle (NewCycle), read by
// the schedule's cost comparison.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>

#include "stats/cycle_sample.h"

namespace weighted {

struct LoadEstimate {
  // Tracked picks not yet finished, by the parity of the controller cycle that counted them.
  // NewCycle zeroes a parity's count as the cycle after next begins, so a lost pick expires
  // instead of weighing on its endpoint for ever (or until a binding's finalizer runs).
  // Finishing a pick that old changes nothing (Release).
  std::array<std::atomic<int32_t>, 2> inflight{};
  // Peak EWMA of latency. Updated racily on report: a lost update under contention shifts one
  // sample's influence, never corrupts the value.
  std::atomic<double> ewma_ms{0};
  std::atomic<int64_t> ewma_at_ns{0};
  // Recent failure share, an EWMA over outcomes (alpha 1/16), so a failing endpoint's cost rises
  // within a few requests rather than at the next controller cycle.
  std::atomic<double> failure_ewma{0};
  // Failure share over the picker's decay time (latency_decay_ms): failures and outcomes, each
  // decayed with exp(-dt / tau); the share is their ratio, taken when read (a stored copy would
  // cost 8 bytes per endpoint for nothing). Not halved by the cycle, so an endpoint failing a
  // steady share of requests keeps that estimate while it gets few picks; cleared (with
  // failure_ewma) after a cycle whose results were all successes (NewCycle).
  std::atomic<double> fail_decayed{0};
  std::atomic<double> outcomes_decayed{0};
  std::atomic<int64_t> fail_at_ns{0};

  // Picks in flight; a finish racing with the expiry can leave a count at -1 for a cycle.
  int32_t InFlight() const {
    return std::max(0, inflight[0].load(std::memory_order_relaxed) +
                           inflight[1].load(std::memory_order_relaxed));
  }
  // A tracked pick counted in controller cycle `cycle`.
  void Take(uint32_t cycle) { inflight[cycle & 1].fetch_add(1, std::memory_order_relaxed); }
  // Finishes a pick counted in cycle `counted`, now that the service is in cycle `cycle`.
  // Counted in cycle c, the count lives until cycle c + 2 begins; after that it has expired, and
  // taking it off again would eat a newer pick's count. (Unsigned: a wrapped counter still works.)
  void Release(uint32_t counted, uint32_t cycle) {
    if (cycle - counted <= 1) {
      inflight[counted & 1].fetch_sub(1, std::memory_order_relaxed);
    }
  }
  // One outcome at engine time `now_ns`; `decay_ns` is the picker's time constant. Out of line:
  // inlined, its two exp() calls made the weighted mode's report path too large to inline.
  void Record(double latency_ms, bool failed, int64_t now_ns, double decay_ns);
  // Cycle `cycle` begins with `sample` just drained: the counts of cycle - 2 expire, and the
  // failure estimates age (see the definition). `fleet_steady`: the service's steady failure
  // share (FleetFailures) as the cycle began.
  void NewCycle(uint32_t cycle, const CycleSample& sample, uint64_t clean_results,
                double fleet_steady);
  // The larger of the fast and the steady failure share, in [0, 1]: the evidence shown.
  double FailureShare() const;
  // The steady share, in [0, 1].
  double SteadyShare() const;
  // The share the load-aware cost prices: the steady share, plus `fast_weight` (in [0, 1]) of
  // what the fast estimate adds above it (FleetFailures::FastWeight).
  double PricedShare(double fast_weight) const;
};

// A service's failure evidence as a cycle sees it, over its endpoints' estimates.
struct FleetFailures {
  double failures = 0, outcomes = 0;  // decayed sums over every endpoint
  double lo = 1, hi = 0;              // lowest and highest steady share among those with evidence
  void Add(const LoadEstimate& e);
  double Steady() const { return outcomes > 0 ? std::min(failures / outcomes, 1.0) : 0.0; }
  // How much the fast estimate counts in the price this cycle. It is what sees a failure within
  // a few requests, and also what is noisy: ~31 outcomes' worth of evidence. When one endpoint
  // fails and the rest do not (or nobody fails yet) its noise is beside the point, so it counts
  // fully; when every endpoint fails alike (a bad dependency behind all of them) the fast
  // estimates differ by noise alone, and pricing that noise herds traffic from one endpoint to
  // the next. So it counts by the spread of the steady shares, ((hi - lo) / hi)^3.
  double FastWeight() const;
};

// Inline: the load-aware pick reads it for two or three candidates.

inline double LoadEstimate::SteadyShare() const {
  const double all = outcomes_decayed.load(std::memory_order_relaxed);
  return all > 0 ? std::min(fail_decayed.load(std::memory_order_relaxed) / all, 1.0) : 0.0;
}

inline double LoadEstimate::PricedShare(double fast_weight) const {
  const double steady = SteadyShare();
  const double fast = failure_ewma.load(std::memory_order_relaxed);
  return fast > steady ? steady + fast_weight * (fast - steady) : steady;
}

inline double LoadEstimate::FailureShare() const {
  // The larger of the fast estimate (last ~16 outcomes, halved each cycle: reacts within a few
  // requests) and the share over the decay time (steady: a 15%-failing endpoint that gets few
  // picks keeps its 15% instead of drifting back to "healthy" between two of its failures).
  const double all = outcomes_decayed.load(std::memory_order_relaxed);
  const double steady = all > 0 ? fail_decayed.load(std::memory_order_relaxed) / all : 0.0;
  return std::max(failure_ewma.load(std::memory_order_relaxed), std::min(steady, 1.0));
}

}  // namespace weighted
