// weighted_sim: a deterministic discrete-event simulator that replays the article's experiment
// (and others) against this engine and against the load balancers users run instead.
//
// The one entry point the bindings need:
//
//   std::string RunScenarioJson(std::string_view scenario_json, std::string_view options_json);
//
// scenario_json: a scenario as in examples/scenarios/*.json (see scenario.h, docs/benchmark.md).
// options_json:  {} or any of
//   {"policies": ["round_robin", ...],  // default: the scenario's list, else every policy
//    "seed": 1,                         // default: the scenario's seed
//    "series": true,                    // false: summaries only
//    "oracle": true,                    // false: no oracle run, no recovery times
//    "engine_configs": {"engine_x": {...}}}  // extra engine variants, by name and config
// Throws std::invalid_argument on a bad scenario, options or policy name.
//
// The result (deterministic: the same inputs give the same bytes):
// {
//   "scenario": {"name": str, "description": str, "duration_s": num, "seed": int,
//                "backends": [{"id": str, "weight": num, "workers": int}],
//                "fault_events": [{"t_s": num, "kind": "onset"|"end", "backend": int,
//                                  "type": "gc"|...}]},
//   "policies": [str, ...],               // in table order; "oracle" is always run
//   "summary": {
//     "<policy>": {
//       "mean_success_tps": num,          // successful responses / duration
//       "max_error_rate": num,            // max over 1-s bins, a fraction
//       "error_rate": num,                // all errors / all completions
//       "max_error_rate_5s_settled": num|null,  // max over 5-s moving windows lying wholly
//                                         // after the first 10 s of a fault and before its
//                                         // end (or the run's); null = no fault or no window
//       "recovery_s": num|null,           // first fault onset; null = never
//       "recoveries": [{"onset_s": num, "next_event_s": num, "recovery_s": num|null}],
//       "readmission_s": num|null,        // first fault end; null = never or no fault end
//       "readmissions": [{"end_s": num, "backend": int, "readmission_s": num|null}],
//       "mean_cpu": num,                  // mean reported CPU over backends and seconds
//       "p50_ms": num, "p99_ms": num, "p999_ms": num,
//       "sick_share": num|null,           // share of requests sent to sick backends, while any
//                                         // backend was sick; null = no fault
//       "requests": int, "successes": int, "errors": int, "timeouts": int,
//       "probes": int, "panic_picks": int, // picks the engine flagged WT_PICK_PROBE / _PANIC
//       "weight_changes": int, "isolations": int  // engine only: its weight_changed and
//                                         // isolated events
//     }, ...
//   },
//   "series": {                           // absent with "series": false
//     "<policy>": {
//       "t_s": [0, 1, ...],               // bin k covers [k, k+1) s
//       "success": [int], "errors": [int], "timeouts": [int], "sent": [int],
//       "mean_latency_ms": [num], "p99_latency_ms": [num],
//       "backends": [{"id": str, "sent": [int], "success": [int], "errors": [int],
//                     "share": [num],     // sent / all sent in that second
//                     "weight": [num|null],  // the policy's normalised weight; null = none
//                     "cpu": [num], "memory": [num], "queue": [int], "sick": [0|1]}]
//     }, ...
//   }
// }
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "weighted_sim/scenario.h"
#include "weighted_sim/simulator.h"

namespace weighted_sim {

std::string RunScenarioJson(std::string_view scenario_json, std::string_view options_json);

struct RecoveryRow {
  double onset_s = 0;
  double next_event_s = 0;
  std::optional<double> recovery_s;
};

struct ReadmissionRow {
  double end_s = 0;
  int backend = 0;
  std::optional<double> readmission_s;
};

struct Summary {
  double mean_success_tps = 0;
  double max_error_rate = 0;
  // The error budget's target metric: worst 5-s window from 10 s after a fault's onset.
  std::optional<double> max_error_rate_5s_settled;
  double error_rate = 0;
  std::vector<RecoveryRow> recoveries;
  std::vector<ReadmissionRow> readmissions;
  double mean_cpu = 0;
  double p50_ms = 0, p99_ms = 0, p999_ms = 0;
  std::optional<double> sick_share;
  int64_t requests = 0, successes = 0, errors = 0, timeouts = 0, probes = 0, panic_picks = 0;
  std::optional<Policy::Decisions> decisions;
  // The expected share's accuracy (engine only): max and p95 of |expected - measured| over every
  // endpoint and cycle, in percentage points, and how many such pairs.
  std::optional<double> share_error_max_pp, share_error_p95_pp;
  int64_t share_error_samples = 0;
  std::vector<Policy::ShareError> share_errors;
};

struct PolicyResult {
  RunOutput run;
  Summary summary;
  double wall_ms = 0;  // not part of the JSON: it would break byte-for-byte determinism
};

struct Results {
  Scenario scenario;
  uint64_t seed = 1;
  std::vector<PolicyResult> policies;  // requested ones in table order, then the oracle
};

struct RunOptions {
  std::vector<std::string> policies;  // empty: the scenario's list, else every policy
  std::optional<uint64_t> seed;
  bool series = true;
  // false: the oracle is not run and recovery times, which are judged against it, stay empty
  // (a fleet of 10,000 clients would run 10,000 oracles).
  bool oracle = true;
};

Results RunScenario(const Scenario& scenario, const RunOptions& options);
// Computes the metrics of one run against the oracle's run of the same scenario and seed.
Summary Summarize(const Scenario& scenario, const RunOutput& run, const RunOutput& oracle);
std::string ResultsToJson(const Results& results, bool with_series);
// The article's S-X2 table with this benchmark's extra rows, one column per policy, Markdown.
std::string MarkdownTable(const Results& results);

}  // namespace weighted_sim
