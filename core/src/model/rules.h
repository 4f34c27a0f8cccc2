// Penalty rules (S-W1, S-W2): each rule that fires adds its penalty; the target weight is
// base x (1 - min(penalty, 1)).
#pragma once

#include <array>
#include <vector>

#include "config/config.h"
#include "stats/window.h"

namespace weighted {

// The service-wide reference for relative latency thresholds: for each latency metric, the
// lower median over endpoints that have data. The lower median (not the mean of the two middle
// values) keeps a 2-endpoint service able to flag the slower one.
struct ServiceReference {
  double p99_ms = 0, p95_ms = 0, mean_ms = 0;
  bool known = false;
  // The same for each resource, over the endpoints that have a value for it.
  std::array<double, kResources> resources{};
  std::array<bool, kResources> resource_known{};
  std::array<uint32_t, kResources> resource_count{};  // endpoints with a value for it
  // The servers' own latency: the lower median over the endpoints whose server reported a
  // fresh one, and how many did.
  double server_latency_ms = 0;
  uint32_t server_latency_count = 0;
};
// `known_endpoints`: those with a window of results (the client's latency and resources).
// `reporting`: every endpoint judged, for the servers' own figures, which need no window of
// this client's: in a fleet of thousands no endpoint may have one.
ServiceReference ComputeReference(const std::vector<const WindowStats*>& known_endpoints,
                                  const std::vector<const WindowStats*>& reporting = {});

struct RuleHit {
  Metric metric;
  double value = 0;      // the metric's window value (ms or fraction)
  double threshold = 0;  // the threshold in force (relative thresholds resolved to ms)
  double penalty = 0;    // the rule's penalty at this value (graded rules: between penalty and
                         // full_penalty)
  bool fired = false;
  bool evaluated = false;  // false when the endpoint lacks the data (unknown, not low)
};

struct Evaluation {
  double penalty = 0;  // sum of fired penalties (may exceed 1)
  double failing = 0;  // the part of it from rate rules (failures, not slowness or load)
  std::vector<RuleHit> hits;  // one per rule, in config order
};

// One rule's verdict. `has_requests` says whether the window holds at least min_requests
// results; without it, request-based rules are not evaluated (an endpoint with no data is
// unknown, not sick).
RuleHit Judge(const Rule& rule, const WindowStats& stats, bool has_requests,
              const ServiceReference& ref);

// The sum of the fired rules' penalties: what the cycle needs of every endpoint. The hits
// themselves are asked for only to explain a weight (events, snapshots), so they are
// recomputed then, from the same inputs, instead of being kept per endpoint.
// `failing`, when given, receives the part of the penalty from rate rules.
double Penalty(const std::vector<Rule>& rules, const WindowStats& stats, bool has_requests,
               const ServiceReference& ref, double* failing = nullptr);

// Every rule's verdict, and the penalty. Writes into `out`, reusing its storage.
void Evaluate(const std::vector<Rule>& rules, const WindowStats& stats, bool has_requests,
              const ServiceReference& ref, Evaluation* out);

}  // namespace weighted
