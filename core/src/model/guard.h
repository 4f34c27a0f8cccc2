// The capacity guard: a cut or an isolation moves traffic onto the endpoints that keep theirs,
// and near saturation they have no room for it, so one slow endpoint removed turns into errors
// on all the others. Before the cycle's cuts take effect, the guard estimates what the rest can
// absorb (each endpoint's rate and utilisation) and lets the cuts move only that much, sickest
// first. A cap on the share of base weight isolated at once backs it up (Envoy's
// max_ejection_percent). Pure: the cycle passes everything in.
#pragma once

#include <cstdint>
#include <vector>

#include "config/config.h"
#include "model/endpoint_state.h"

namespace weighted {

// What the guard saw and did in a service's last cycle.
struct GuardVerdict {
  double headroom_rps = 0;  // successes per second the endpoints not cut could still take
  double moved_rps = 0;     // successes per second the cycle's cuts and isolations would move
  uint32_t held = 0;        // endpoints whose cut or isolation was held back (guard or cap)
  bool headroom_known = false;  // some endpoint had a utilisation to judge by
  bool enabled = false;         // guard.enabled when the cycle ran
};

// Sets each endpoint's ctl.floor (the lowest weight its cut may reach this cycle) and
// ctl.may_isolate, from the penalties JudgeFleet has just set. `interval_s`: the cycle length.
GuardVerdict GuardFleet(const Config& cfg, double interval_s,
                        const std::vector<ControlState*>& endpoints);

// An endpoint's utilisation in [0, 1] as the guard reads it: CPU where the window has it, else
// its latency's inflation over its own unloaded latency (a queue's 1 - L0 / L); < 0 unknown.
double GuardUtilisation(const ControlState& c);

}  // namespace weighted
