// The engine's configuration: one JSON document, parsed and validated here, shared by every
// binding. Every number the model uses lives in this struct; the defaults below are the
// "default" profile, and ArticleProfile() gives the article's literal rules (docs/algorithm.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace weighted {

// Which window statistic a penalty rule reads.
enum class Metric : uint8_t {
  kLatencyP99,
  kLatencyP95,
  kLatencyMean,
  kErrorRate,          // all error classes together
  kHttp5xxRate,
  kTimeoutRate,
  kConnectErrorRate,
  kBusinessErrorRate,
  kCpu,
  kMemory,
  kThreadPool,
  kConnectionPool,
  // The server's own recent service time (a load report's load_report.latency_metric, or the
  // metric source's latency_ms query): what a client of a fleet of thousands, hearing from an
  // endpoint every few windows, cannot measure itself. Last, so that stored rule hits keep
  // their numbers.
  kServerLatency,
};
inline constexpr int kMetricCount = 13;

// The JSON spellings, indexed by Metric (config.cc checks the order against the enum).
inline constexpr std::string_view kMetricNames[] = {
    "latency_p99",   "latency_p95",  "latency_mean",       "error_rate",
    "http_5xx_rate", "timeout_rate", "connect_error_rate", "business_error_rate",
    "cpu",           "memory",       "thread_pool",        "connection_pool",
    "server_latency",
};

// "latency_p99", "error_rate", "cpu", ... (the JSON spelling).
std::string_view MetricName(Metric m);
// Metrics in milliseconds (threshold_ms, relative): the client's latencies and the server's.
bool IsLatencyMetric(Metric m);
bool IsResourceMetric(Metric m);

struct Rule {
  Metric metric = Metric::kLatencyP99;
  // Absolute threshold: ms for latency metrics, a fraction in [0, 1] for rates and resources.
  // A rule fires when the value is strictly greater. Unset (< 0) when only `relative` is used.
  double threshold = -1;
  // Latency metrics only: fires when value > relative x (the service's lower-median endpoint
  // value for the same metric; for server_latency, over the endpoints whose server reported
  // one, at least two). 0 = not used. With both set, both must be exceeded.
  double relative = 0;
  double penalty = 0;  // added to the endpoint's penalty when the rule fires; in (0, 1]
  // Resource metrics only: fires only when the value is also above the service's lower-median
  // endpoint value plus this margin (a fraction), so that a fleet that runs hot as a whole is
  // not cut as a whole. Unset (< 0): the absolute threshold alone.
  double margin = -1;
  // Rate metrics only: the penalty grows linearly from `penalty` just above the threshold to
  // `full_penalty` at this rate and beyond, so that an endpoint failing every request weighs
  // more than one failing 1.1% of them. Unset (< 0): the flat penalty of the article.
  double full_rate = -1;
  double full_penalty = 1;
};

// Rates of failures: the metrics whose rules make an endpoint "failing" rather than "degraded",
// and the only ones that may be graded (Rule::full_rate).
bool IsRateMetric(Metric m);

enum class StepLimit : uint8_t {
  kIncreasesOnly,  // default profile: cuts and isolation act at once, increases are stepped
  kBoth,           // article profile: every change is at most max_step, then a cooldown
};

// Which report of a resource the rules read when both the client (wt_service_report_resources)
// and the server (a load report header, the Prometheus source) have a fresh one.
enum class ResourceSource : uint8_t {
  kServer,  // the server's own figure wins: it measures itself, the client only guesses
  kClient,  // the caller's report wins; server reports fill the resources it does not report
};

// Which of a service's endpoints this client uses (subsetting).
enum class SubsetMode : uint8_t {
  kOff,    // every endpoint
  kFixed,  // subset.size endpoints
  kAuto,   // as many as keep subset.auto_min_requests results per endpoint per window
};

enum class PickMode : uint8_t {
  kWeighted,   // exact: frequencies equal weights in expectation (alias table)
  kLoadAware,  // two candidates drawn by weight; lower (in_flight + 1) x latency EWMA wins
};

// The JSON name, type, range and meaning of each field are declared in config/keys.cc; a field
// added here without a line there fails tests/cpp/config_keys_test.cc.
struct Config {
  std::string profile = "default";  // "default" or "article"
  uint64_t seed = 0;                // 0 = random per engine; else picks are reproducible

  struct Controller {
    int64_t interval_ms = 5000;  // health-check cycle (S-S1)
    double max_step = 0.1;       // largest change per cycle, as a fraction of base weight
    int64_t cooldown_ms = 10000; // hold after a change before the next stepped change (S-P1)
    StepLimit step_limit = StepLimit::kIncreasesOnly;
    // A cut made to a healthy endpoint is undone at once (no step, no cooldown) when, within
    // this long, a cycle's own results fire no rule: one stall or a second of timeouts costs
    // one cycle, not the window plus the climb back. 0: off (the article's literal steps).
    int64_t burst_ms = 10000;
  } controller;

  struct Window {
    int64_t length_ms = 10000;  // sliding window for all statistics (S-P1)
    uint32_t min_requests = 10; // fewer results than this in the window = "unknown", not "low"
    // An endpoint that gets too few results to judge (one the picker starves because it fails)
    // is judged on its last full window, worth min_requests results and halved every this long,
    // blended with the few results it still gets. 0: forgotten at once (unknown).
    int64_t evidence_half_life_ms = 30000;
  } window;

  std::vector<Rule> rules;  // defaults set by DefaultRules()

  struct Isolation {
    double probe_share = 0.02;       // share of a healthy endpoint's traffic an isolated one gets
    double probe_min_per_s = 1.0;    // at least this many probes per second per isolated endpoint
    uint32_t exit_min_probes = 3;    // healthy results needed in the window to leave isolation
    int64_t max_ms = 30000;          // S-P2 maximum isolation time
    double restore_fraction = 0.5;   // weight (of base) forced back after max_ms, with an alert
    // At most this share of the service's base weight isolated at once (one endpoint always
    // may be): isolating more removes capacity the rest cannot carry (Envoy's
    // max_ejection_percent). The article profile sets 1.
    double max_share = 0.5;
  } isolation;

  // The capacity guard (model/guard.h): cuts and isolations move only the traffic the other
  // endpoints can absorb below max_utilization. The article profile turns it off.
  struct Guard {
    bool enabled = true;
    double max_utilization = 0.9;
  } guard;

  struct Panic {
    bool enabled = true;
    double threshold = 0.2;  // all weights below this fraction of base -> round-robin (S-S2)
  } panic;

  struct SlowStart {
    int64_t window_ms = 30000;   // 0 disables slow start
    double min_fraction = 0.1;   // Envoy's min_weight_percent
    double aggression = 1.0;     // Envoy: weight x max(min, (t / window)^(1 / aggression))
  } slow_start;

  struct Picker {
    // Load-aware is the default because it wins on the article's experiment and on every fault
    // scenario of the benchmark (docs/benchmark.md); the article profile keeps plain weights.
    PickMode mode = PickMode::kLoadAware;
    int64_t latency_decay_ms = 10000;  // EWMA decay for load-aware mode (Finagle's tau)
    // Load-aware cost multiplier per unit of failure share: cost x (1 + error_cost x f). 500
    // makes an endpoint failing 1% of requests (the default error rule's threshold) cost 6x a
    // healthy one, and one failing 15% cost 76x (docs/benchmark.md, section 6).
    double error_cost = 500;
    // Load-aware: share of picks made by weight alone, without the cost comparison, so that
    // endpoints it avoids keep a trickle of traffic and stay observed (S-S3).
    double keepalive_share = 0.01;
  } picker;

  // The service's error budget: the share of requests allowed to fail over a short window.
  // With one set, a feedback controller (model/budget.h) moves the load-aware picker's
  // error_cost each cycle so that the observed error rate stays under it while endpoints that
  // fail a fraction of requests keep the traffic they serve successfully. 0 = off: the picker
  // uses picker.error_cost as it is.
  struct Budget {
    double max_error_rate = 0;    // 0 = off; else the budget, a fraction in (0, 1)
    int64_t window_ms = 5000;     // observed error rate over this long (whole cycles)
    // The controller aims at this fraction of the budget, so that the noise of a short window
    // stays under the budget itself.
    double target_fraction = 0.8;
    double min_error_cost = 1;       // bounds of the price the controller sets
    double max_error_cost = 100000;  // at it and still over budget: "not met", errors minimised
  } budget;

  struct Events {
    uint32_t queue_capacity = 1024;
  } events;

  // A deterministic subset of each service's endpoints for this client (docs/config.md,
  // "subset"): many clients each with a few endpoints, so that each endpoint a client uses
  // carries enough of its traffic to be judged. Off by default: one client, all endpoints.
  struct Subset {
    SubsetMode mode = SubsetMode::kOff;
    std::string client_id;  // required when mode is not off: the hash's key for this client
    uint32_t size = 20;     // kFixed: endpoints per client (all of them if the set is smaller)
    // kAuto: the size is the service's results per window / this, at least min_size. 100
    // results at 15% failures hold ~15 errors, where the default error rule (1%) cannot miss.
    uint32_t auto_min_requests = 100;
    // Finagle's deterministic aperture keeps at least 12 peers, so that one sick endpoint
    // never holds more than a twelfth of a client's traffic.
    uint32_t min_size = 12;
    // Comma-separated service names the subset applies to; "" = every service.
    std::string services;
    // The fleet's size and this client's place in it, when the deployment knows them (a
    // StatefulSet's ordinal and replicas, a peer list): 0 = unknown, and the subset is chosen by
    // rendezvous on client_id. Known, it is a deterministic aperture (runtime/subset.h), which
    // spreads clients over endpoints evenly instead of binomially.
    uint32_t client_count = 0;
    uint32_t client_index = 0;
  } subset;

  // Load reports servers send on their responses (the endpoint-load-metrics header, ORCA's
  // fields): which resources they feed and how long a report counts.
  struct LoadReport {
    ResourceSource prefer = ResourceSource::kServer;
    // A server-reported resource whose last report is older than this is not used (the client's
    // own report, if any, is): a backend that stopped reporting must not be judged on a figure
    // from before. Two cycles of the default interval: a report on every response arrives far
    // more often, and a poll every interval_ms of the Prometheus source still fits.
    int64_t max_age_ms = 10000;
    // The named_metrics (or utilization) entries that carry the two pools; ORCA names neither.
    std::string thread_pool_metric = "thread_pool";
    std::string connection_pool_metric = "connection_pool";
    // The named_metrics entry that carries the server's recent service time in ms (the
    // server_latency rule's figure); ORCA names none.
    std::string latency_metric = "latency_ms";
  } load_report;

  // Metric sources the engine polls itself, on a thread of its own.
  struct Sources {
    struct Prometheus {
      std::string url;  // "" = off; e.g. "http://127.0.0.1:9090"
      int64_t interval_ms = 5000;
      int64_t timeout_ms = 2000;  // one HTTP request; at most interval_ms
      // A source with no successful poll for this long is stale: an event, and the snapshot
      // says so. Three polls missed, so one slow answer is not an alert.
      int64_t stale_ms = 15000;
      std::string label = "instance";  // the series label whose value is an endpoint id
      struct Queries {  // PromQL instant queries, one per resource; "" = not queried
        std::string cpu, memory, thread_pool, connection_pool;
        // The server's own error rate, a fraction per endpoint: with every client's traffic
        // summed, what no single client of a fleet sees.
        std::string error_rate;
        // The server's recent service time per endpoint, in ms (the server_latency rule).
        std::string latency_ms;
      } queries;
    } prometheus;
  } sources;

  // The state file (export/state_file.h): a memory-mapped copy of the engine's state that other
  // processes attach to. Off while `state_file` is empty.
  struct Export {
    std::string state_file;              // a path; "{service}" and "{pid}" are filled in
    std::string state_file_mode = "0600";  // octal permission bits of the file
    std::string service_name;            // "{service}"; empty: the program's name
    uint32_t state_history = 240;        // per-cycle points kept: 20 minutes at 5 s cycles
    uint32_t state_events = 1024;        // events kept for readers that attach later
  } exports;

  struct Limits {
    size_t max_config_bytes = 1 << 20;
    uint32_t max_services = 1024;
    uint32_t max_endpoints_per_service = 65536;
    double max_latency_ms = 3600.0 * 1000.0;  // reports above this are rejected as absurd
  } limits;
};

// The article's three rules (S-W2): p99 over 2x the median endpoint's p99 adds 0.3, error rate
// over 1% adds 0.5, CPU over 80% adds 0.2; and the server's own latency over 2x the fleet's
// median (inert unless servers report it).
std::vector<Rule> DefaultRules();
// The default profile, fully populated.
Config DefaultConfig();
// The article's literal behaviour: every change stepped by 10% with a 10 s cooldown.
Config ArticleConfig();

// Parses and validates a config document. Unknown keys, wrong types, out-of-range and
// contradictory values are errors naming the JSON path; malformed JSON names line and column.
// Absent keys take the chosen profile's defaults ("profile" is read first).
Status ParseConfig(std::string_view json, Config* out);
// The resolved config as JSON (every key present), accepted by ParseConfig as it is.
std::string ConfigToJson(const Config& config);

}  // namespace weighted
