// The discrete-event loop: one policy, one scenario, one seed. Events at equal times run in the
// order they were scheduled, so a run is a pure function of (scenario, policy, seed).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weighted_sim/policy.h"
#include "weighted_sim/scenario.h"
#include "weighted_sim/series.h"

namespace weighted_sim {

struct RunOutput {
  std::string policy;
  Series series;
  std::vector<double> latencies_ms;  // every completed request as the client saw it, sorted
  int64_t sent = 0;
  int64_t sent_while_sick = 0;       // sent while at least one backend had an active fault
  int64_t sent_to_sick = 0;          // of those, sent to a backend with an active fault
  int64_t probes = 0;                // picks the policy flagged as probes (engine only)
  int64_t panic_picks = 0;           // picks made in panic (engine only)
  std::optional<Policy::Decisions> decisions;  // engine only
  std::vector<Policy::ShareError> share_errors;  // engine only: Policy::ShareErrors, first client
};

RunOutput Simulate(const Scenario& scenario, std::string_view policy, uint64_t seed);

}  // namespace weighted_sim
