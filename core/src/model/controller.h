// The controller (S-S1, S-P1, S-P2, S-W3): once per health-check cycle it turns each endpoint's
// window into a penalty and a target, and moves the weight toward the target under the profile's
// step and cooldown rules. Pure with respect to time: `now` is passed in.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "model/endpoint_state.h"
#include "model/pending_event.h"
#include "model/rules.h"

namespace weighted {

// A cycle's verdict on a service's endpoints: the fleet reference the relative rules compared
// against and the rules in force, kept so that a weight can be explained later with what that
// cycle judged (snapshots, events), even after a reload changed the rules.
struct Judgement {
  ServiceReference ref;
  std::vector<Rule> rules;
};

// Judges every endpoint whose window the cycle has just updated (ctl.stats): whether its window
// holds enough results (ctl.known), what the rules read (ctl.evidence: the window, the held
// evidence of a starved endpoint, or a burst's clean last cycle), the fleet reference over the
// known ones, and each endpoint's penalty (ctl.penalty) and its failing part (ctl.failing).
// Writes the verdict's inputs to *judged.
void JudgeFleet(const Config& cfg, int64_t now_ns, const std::vector<ControlState*>& endpoints,
                Judgement* judged);

// One cycle for one endpoint judged by JudgeFleet against `ref`: target, state and the weight's
// step. Appends the events it causes, naming the endpoint `id`.
void StepEndpoint(const Config& cfg, const ServiceReference& ref, int64_t now_ns,
                  const std::string& id, ControlState& c, std::vector<PendingEvent>* events);

// Slow-start factor in (0, 1] for an endpoint added at added_ns (Envoy's formula).
double SlowStartFactor(const Config& cfg, int64_t added_ns, int64_t now_ns);

// The reason JSON for an endpoint's last evaluation: {"penalty", "requests", "known",
// "rules": [the fired ones], "share": of the last cycle's results, "picker": its evidence in the
// load-aware mode, else null, "state", "evidence" (what the rules read), "failing" (the rate
// rules' part of the penalty)}.
std::string ReasonJson(const ControlState& ctl, const Evaluation& eval, bool load_aware);

}  // namespace weighted
