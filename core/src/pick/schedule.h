// How a pick is drawn: the tables built off the request path from a weight plan (model/weights.h)
// and published inside an immutable snapshot with one atomic pointer store, as gRPC's
// StaticStrideScheduler and Envoy's EDF scheduler are. It knows weights, indexes and load
// estimates, not why a weight is what it is.
#pragma once

#include <cstdint>

#include "config/config.h"
#include "pick/alias_table.h"
#include "pick/random.h"
#include "pick/roster.h"
#include "weighted/weighted.h"

namespace weighted {

struct Schedule {
  AliasTable main;                    // endpoints in rotation, by effective weight
  AliasTable probes;                  // half-isolated endpoints (S-W3, S-S3)
  uint64_t probe_threshold = 0;       // P(a pick is a probe), scaled to 2^32
  bool panic = false;                 // S-S2: plain round-robin over all endpoints
  PickMode mode = PickMode::kWeighted;
  double latency_decay_ns = 0;        // load-aware EWMA time constant
  double error_cost = 0;              // load-aware cost per unit of recent failure share
  double fast_weight = 1;             // how much the fast failure estimate counts (FleetFailures)
  uint64_t keepalive_threshold = 0;   // load-aware: P(pick by weight alone), scaled to 2^32
  uint32_t cycle = 0;                 // the service's controller cycles so far (in-flight expiry)

  // Chooses an endpoint of `roster` for one request. Requires a non-empty roster. A tracked pick's
  // ticket is the cycle that counted it (LoadEstimate::Release), in the calling thread's stripe.
  void Pick(const Roster& roster, PickerRandom& random, InflightStripe stripe, wt_pick* out) const;

 private:
  // Load-aware cost; inlined into the pick, which evaluates it for two or three candidates.
  [[gnu::always_inline]] inline double Cost(const LoadEstimate& load, double failure_share) const;
  uint32_t PickByCost(const Roster& roster, PickerRandom& random) const;  // P2C (load-aware)
};

}  // namespace weighted
