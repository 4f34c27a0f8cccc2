#include "model/weights.h"

#include <algorithm>
#include <cmath>

#include "model/controller.h"

namespace weighted {

namespace {
constexpr uint64_t kProbeCap = uint64_t{1} << 31;  // probes never take more than half the picks
}

WeightPlan PlanWeights(const Config& cfg, int64_t now, const std::vector<ControlState*>& endpoints) {
  WeightPlan plan;
  double main_total = 0;
  uint64_t window_requests = 0;
  bool all_low = !endpoints.empty();
  std::vector<double> probe_base;
  for (uint32_t i = 0; i < endpoints.size(); ++i) {
    ControlState& c = *endpoints[i];
    window_requests += c.stats.requests;
    if (c.state == State::kIsolated) {
      c.effective = 0;
      plan.probe_items.push_back(i);
      probe_base.push_back(c.base);
      continue;
    }
    c.effective = c.weight * (c.slow_start ? SlowStartFactor(cfg, c.added_ns, now) : 1.0);
    if (c.effective >= cfg.panic.threshold * c.base) all_low = false;
    if (c.effective > 0) {
      plan.main_items.push_back(i);
      plan.main_weights.push_back(c.effective);
      main_total += c.effective;
    }
  }
  if (!plan.probe_items.empty()) {
    // Each isolated endpoint gets probe_share of its base weight, but at least enough picks for
    // probe_min_per_s at the service's observed request rate (S-S3: recovery must be seen).
    const double window_s = std::max(1.0, cfg.window.length_ms / 1000.0);
    const double rate = window_requests / window_s;
    double probe_total = 0;
    for (size_t k = 0; k < plan.probe_items.size(); ++k) {
      double w = cfg.isolation.probe_share * probe_base[k];
      if (rate > 0 && main_total > 0) {
        w = std::max(w, main_total * cfg.isolation.probe_min_per_s / rate);
      }
      probe_base[k] = std::max(w, 1e-12);
      probe_total += probe_base[k];
    }
    plan.probe_weights = std::move(probe_base);
    const double share = main_total > 0 ? probe_total / (probe_total + main_total) : 1.0;
    plan.probe_threshold = std::min<uint64_t>(kProbeCap, std::llround(share * 4294967296.0));
  }
  plan.panic = cfg.panic.enabled && all_low;
  return plan;
}

}  // namespace weighted
