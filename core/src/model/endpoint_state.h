// What the controller keeps of one endpoint between cycles: its weights, its state in the
// health state machine, and the window it judges the endpoint on. Only the controller touches
// it, under its service's mutex.
#pragma once

#include <cstdint>

#include "stats/window.h"

namespace weighted {

enum class State : uint8_t {
  kHealthy,     // no rule fires; weight at (or stepping up to) base
  kDegraded,    // some rules fire; weight cut to base x (1 - penalty)
  kIsolated,    // penalty >= 1: probe traffic only (S-W3, S-S3)
  kRecovering,  // left isolation (or was force-restored); stepping back up
  kFailing,     // rate rules fire (its failures, not its speed or load): cut, and avoided by
                // the picker; shown with its evidence, never as healthy or recovering
};

// What the rules judged an endpoint on in its last cycle.
enum class Evidence : uint8_t {
  kWindow,     // its window: at least window.min_requests results (isolated: exit_min_probes)
  kHeld,       // too few results: its last full window, decayed, blended with the few it got
  kNone,       // too few results and nothing held: unknown, which is not low
  kLastCycle,  // a burst's cut being undone: the last cycle's own results, which fire nothing
};

inline const char* EvidenceName(Evidence e) {
  switch (e) {
    case Evidence::kWindow: return "window";
    case Evidence::kHeld: return "held";
    case Evidence::kNone: return "none";
    case Evidence::kLastCycle: return "last_cycle";
  }
  return "none";
}

inline const char* StateName(State s) {
  switch (s) {
    case State::kHealthy: return "healthy";
    case State::kDegraded: return "degraded";
    case State::kIsolated: return "isolated";
    case State::kRecovering: return "recovering";
    case State::kFailing: return "failing";
  }
  return "unknown";
}

// What the load-aware picker had seen of an endpoint as a cycle ended: its cost inputs. Kept
// beside the controller's window so that an event or a snapshot explains a share with both.
struct PickerEvidence {
  int32_t inflight = 0;
  double latency_ms = 0;     // peak-EWMA latency; 0 before the endpoint's first answer
  double failure_share = 0;  // the larger of the fast and the steady estimate, in [0, 1]
};

struct ControlState {
  double base = 1;
  double weight = 1;  // health weight, before slow start and isolation
  double target = 1;
  State state = State::kHealthy;
  bool known = false;  // the window has min_requests results (unknown is not low)
  bool slow_start = false;
  bool judged = false;  // a cycle has evaluated it since it joined
  int64_t last_change_ns = INT64_MIN / 2;  // for the cooldown; "long ago" at creation
  int64_t isolated_since_ns = 0;
  int64_t added_ns = 0;
  uint64_t forced_restores = 0;
  double effective = 1;  // the scheduling weight last published (after slow start, isolation)
  Window window;
  WindowStats stats;     // as of the last cycle
  double penalty = 0;    // as of the last cycle (Service::EvaluationOf explains it)
  double failing = 0;    // the part of penalty from rate rules: > 0 makes the state failing
  // What the rules read (Judged()): the window, or, while it holds too few results, `blend`
  // of the last full window (`held`, taken at held_ns) and the few results since. A starved
  // endpoint keeps the evidence that starved it, fading, instead of turning unknown.
  Evidence evidence = Evidence::kNone;
  bool has_held = false;
  int64_t held_ns = 0;
  WindowStats held;
  WindowStats blend;
  // A cut made to a healthy endpoint (burst_from: the weight before it; 0: none pending), and
  // when, so that a short burst's cut is undone once a cycle's own results are clean.
  double burst_from = 0;
  int64_t burst_ns = 0;
  const WindowStats& Judged() const {
    return evidence == Evidence::kHeld || evidence == Evidence::kLastCycle ? blend : stats;
  }
  bool HasEvidence() const { return evidence != Evidence::kNone; }
  // The traffic the endpoint got: its results (completed picks and reports) in the last cycle,
  // and their share of its service's. What the picker did, whatever the weights say.
  uint64_t cycle_results = 0;
  double share = 0;
  double cycle_mean_ms = 0;  // the last cycle's mean latency of served answers (0: none)
  PickerEvidence picker;  // as the last cycle ended
  // The capacity guard's (model/guard.h): the lowest weight this cycle's cut may reach (0: no
  // limit), whether an isolation may take effect, and the endpoint's unloaded latency.
  double floor = 0;
  bool may_isolate = true;
  double baseline_ms = 0;
};

}  // namespace weighted
