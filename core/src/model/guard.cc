#include "model/guard.h"

#include <algorithm>

namespace weighted {

namespace {
// A held-back isolation keeps this share of base weight in rotation: drawn as a candidate now
// and then, so the load-aware cost comparison still decides how much it gets, and still judged.
constexpr double kHeldWeight = 0.1;
// Below this utilisation an endpoint's rate says little about its capacity: it is read as this
// busy, which credits it with ample room.
constexpr double kMinUtil = 0.05;
}  // namespace

double GuardUtilisation(const ControlState& c) {
  if (c.stats.resource_known[0]) return std::clamp(c.stats.resources[0], 0.0, 1.0);
  if (c.stats.latency_samples == 0 || c.baseline_ms <= 0 || c.stats.mean_ms <= 0) return -1;
  return std::clamp(1 - c.baseline_ms / c.stats.mean_ms, 0.0, 1.0);
}

GuardVerdict GuardFleet(const Config& cfg, double interval_s,
                        const std::vector<ControlState*>& endpoints) {
  GuardVerdict v;
  const auto& g = cfg.guard;
  v.enabled = g.enabled;
  // A cut moves traffic only by changing an endpoint's share of the weights: cutting every
  // endpoint alike moves nothing. So the guard compares shares before and after the proposed
  // weights; endpoints that lose share move their successes, the others must absorb them.
  double now_total = 0, next_total = 0, total_base = 0, isolated_base = 0;
  for (ControlState* c : endpoints) {
    c->floor = 0;
    c->may_isolate = true;
    total_base += c->base;
    // The unloaded latency: the lowest window mean seen, let up 5% a cycle, so that an endpoint
    // that became slower for good is judged by its new normal within ~15 cycles.
    if (c->stats.latency_samples > 0 && c->stats.mean_ms > 0) {
      c->baseline_ms = c->baseline_ms > 0 ? std::min(c->stats.mean_ms, c->baseline_ms * 1.05)
                                          : c->stats.mean_ms;
    }
    if (c->state == State::kIsolated) {
      isolated_base += c->base;
      continue;
    }
    now_total += c->weight;
    next_total += c->judged ? std::min(c->weight, c->base * (1 - std::min(c->penalty, 1.0)))
                            : c->weight;
  }
  struct Cut {
    ControlState* c;
    double target;  // where the rules would take the weight
    double moved;   // successes per second the cut would move onto the others
  };
  // An endpoint's capacity, its rate over its utilisation, needs traffic to be read: one that
  // served nothing in the cycle (idle, or between a client's bursts) would show no room at
  // all. It is then credited with the fleet's capacity per endpoint, from those that did.
  double fleet_rate = 0, fleet_util = 0;
  for (ControlState* c : endpoints) {
    if (c->state == State::kIsolated) continue;
    const double rate = double(c->cycle_results) / interval_s;
    if (const double u = GuardUtilisation(*c); rate > 0 && u >= 0) {
      fleet_rate += rate;
      fleet_util += std::max(u, kMinUtil);
    }
  }
  const double fleet_capacity = fleet_util > 0 ? fleet_rate / fleet_util : -1;
  std::vector<Cut> cuts;
  double headroom = 0;
  for (ControlState* c : endpoints) {
    if (c->state == State::kIsolated) continue;
    const double rate = double(c->cycle_results) / interval_s;
    const double target = c->base * (1 - std::min(c->penalty, 1.0));
    const double share_now = now_total > 0 ? c->weight / now_total : 0;
    const double share_next =
        next_total > 0 ? (c->judged ? std::min(c->weight, target) : c->weight) / next_total : 0;
    if (c->judged && target < c->weight) {
      if (share_next < share_now) {
        // What the cut moves is what the endpoint serves now: its last cycle's successes. The
        // window's error rate lags a cycle behind a sudden failure (its older half still holds
        // the successes from before), and held the isolation of a backend that had just gone
        // hard down while its peers were busy.
        const WindowStats last = c->window.Compute(1);
        const double success = double(last.outcomes[WT_OUTCOME_SUCCESS]) / interval_s;
        cuts.push_back({c, target, success * (1 - share_next / share_now)});
      }
      // A cut that keeps its share is no receiver either: its room is judged like anyone's.
      if (share_next < share_now) continue;
    }
    const double u = GuardUtilisation(*c);
    // A nearly idle endpoint (below kMinUtil) counts as kMinUtil busy: lots of room.
    const double capacity = rate > 0 ? rate / std::max(u, kMinUtil) : fleet_capacity;
    if (u < 0 || capacity < 0) continue;
    v.headroom_known = true;
    if (u < g.max_utilization) headroom += std::max(0.0, capacity * g.max_utilization - rate);
  }
  v.headroom_rps = headroom;
  // Sickest first: the guard's room goes to the cuts that matter most.
  std::stable_sort(cuts.begin(), cuts.end(),
                   [](const Cut& a, const Cut& b) { return a.c->penalty > b.c->penalty; });
  for (const Cut& cut : cuts) {
    ControlState& c = *cut.c;
    v.moved_rps += cut.moved;
    bool held = false;
    if (c.penalty >= 1) {
      // The cap: at least one endpoint may always be isolated, as in Envoy.
      const bool capped = isolated_base > 0 &&
                          isolated_base + c.base > cfg.isolation.max_share * total_base + 1e-9;
      if (capped) {
        c.may_isolate = false;
        held = true;
      }
    }
    if (g.enabled && v.headroom_known && cut.moved > headroom) {
      const double allowed = cut.moved > 0 ? headroom / cut.moved : 1.0;
      c.floor = c.weight - allowed * (c.weight - cut.target);
      if (c.penalty >= 1) c.may_isolate = false;
      headroom = 0;
      held = true;
    } else {
      headroom -= cut.moved;
    }
    if (!c.may_isolate) c.floor = std::max(c.floor, kHeldWeight * c.base);
    if (c.may_isolate && c.penalty >= 1) isolated_base += c.base;
    if (held) ++v.held;
  }
  return v;
}

}  // namespace weighted
