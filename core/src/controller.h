// The controller (S-S1, S-P1, S-P2, S-W3): once per health-check cycle it turns each endpoint's
// window into a penalty and a target, and moves the weight toward the target under the profile's
// step and cooldown rules. Pure with respect to time: `now` is passed in.
#pragma once

#include <string>
#include <vector>

#include "config.h"
#include "endpoint.h"

namespace weighted {

struct PendingEvent {
  wt_event_type type;
  int64_t time_ns;
  std::string endpoint;
  double old_weight, new_weight;
  std::string reason;  // JSON object
};

// One cycle for one endpoint whose window has just been updated and evaluated (ep.ctl.stats,
// ep.ctl.penalty, ep.ctl.known set by the caller against `ref`). Appends the events it causes.
void StepEndpoint(const Config& cfg, const ServiceReference& ref, int64_t now_ns, Endpoint& ep,
                  std::vector<PendingEvent>* events);

// Slow-start factor in (0, 1] for an endpoint added at added_ns (Envoy's formula).
double SlowStartFactor(const Config& cfg, int64_t added_ns, int64_t now_ns);

// The reason JSON for an endpoint's last evaluation: {"penalty":..,"rules":[..fired..]}.
std::string ReasonJson(const ControlState& ctl, const Evaluation& eval);

}  // namespace weighted
