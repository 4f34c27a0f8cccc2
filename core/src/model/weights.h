// From health weights to scheduling weights (S-W1, S-W3, S-S2, S-S3): what each endpoint's share
// of picks should be after slow start and isolation, how often a pick is a probe of a
// half-isolated endpoint, and whether the service falls back to round-robin. The scheduler
// (pick/) builds its tables from this plan and knows nothing of why.
#pragma once

#include <cstdint>
#include <vector>

#include "config/config.h"
#include "model/endpoint_state.h"

namespace weighted {

struct WeightPlan {
  // Endpoints in rotation (by index) with their scheduling weights, all > 0.
  std::vector<uint32_t> main_items;
  std::vector<double> main_weights;
  // Half-isolated endpoints (by index) with their probe weights, all > 0.
  std::vector<uint32_t> probe_items;
  std::vector<double> probe_weights;
  uint64_t probe_threshold = 0;  // P(a pick is a probe), scaled to 2^32
  bool panic = false;            // every weight is below panic.threshold of its base (S-S2)
};

// The plan for the endpoints in `endpoints` (index i is pick index i). Sets each endpoint's
// ctl.effective, the weight it is scheduled with.
WeightPlan PlanWeights(const Config& cfg, int64_t now, const std::vector<ControlState*>& endpoints);

}  // namespace weighted
