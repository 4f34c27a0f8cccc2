// A scenario: the backends, their faults and the load, as read from examples/scenarios/*.json.
// Times in the JSON are seconds (`*_s`) or milliseconds (`*_ms`); inside the simulator every
// time is int64 nanoseconds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weighted_sim {

inline constexpr int64_t kNsPerMs = 1'000'000;
inline constexpr int64_t kNsPerS = 1'000'000'000;

inline int64_t SecondsToNs(double s) { return static_cast<int64_t>(s * 1e9 + (s >= 0 ? 0.5 : -0.5)); }
inline int64_t MsToNs(double ms) { return SecondsToNs(ms / 1000.0); }

struct ServiceTime {
  std::string dist = "lognormal";  // "lognormal", "exponential" or "constant"
  double mean_ms = 20;
  double log_sigma = 0.5;          // lognormal only
};

struct BackendSpec {
  std::string id;
  int workers = 8;
  int queue_limit = 128;       // waiting requests beyond the busy workers; more answer 503
  double weight = 1;           // discovery metadata: the base weight every weighted policy gets
  double capacity = 1;         // service time is divided by this (heterogeneous fleets)
  ServiceTime service;
  double error_rate = 0;       // background 5xx probability
  double base_memory = 0.4;    // memory share reported when healthy
  double reject_ms = 0;        // latency of a 503 for a full queue ("at once")
  double connect_error_ms = 1; // latency of a connection error while hard down
};

enum class FaultType { kGc, kLeak, kCpuHog, kDown, kFlap, kSlowRecovery, kFastFail, kStall };

// One fault on one backend. Its intensity f(t) is 0 before start_s, ramps linearly to 1 over
// ramp_s, stays 1 until end_s, then falls linearly to 0 over recovery_s. Each effect scales with f.
struct FaultSpec {
  FaultType type = FaultType::kGc;
  std::string type_name;
  int backend = 0;
  double start_s = 0;
  std::optional<double> end_s;   // absent: lasts to the end of the run
  double ramp_s = 0;
  double recovery_s = 0;
  double service_multiplier = 1; // gc, cpu_hog, slow_recovery: service time x (1 + (k-1) f)
  double cpu_extra = 0;          // added to the reported CPU (GC threads, a hog), x f
  double error_rate = 0;         // leak, fast_fail: 5xx probability x f
  double memory = -1;            // leak: memory climbs to this level (x f) ; < 0 = unchanged
  double memory_ramp_s = -1;     // leak: memory's own ramp (default ramp_s)
  double error_latency_ms = -1;  // fast_fail: errors answered after this, not after service
  double period_s = 10;          // flap: one down+up cycle
  double down_s = 5;             // flap: down for the first down_s of each period
};

struct LoadSpec {
  enum class Kind { kClosed, kOpen } kind = Kind::kClosed;
  int callers = 60;              // closed loop
  double think_mean_ms = 50;     // closed loop: exponential think time
  double rate_per_s = 100;       // open loop: Poisson arrivals
  // Open loop: piecewise-linear rate multiplier over time, points (t_s, factor); empty = 1.
  std::vector<std::pair<double, double>> rate_profile;
  double timeout_ms = 1000;      // client timeout; a timeout is an error
};

// A fleet: `count` clients share the load, each with its own policy instance (its own engine,
// seed and config): closed-loop callers are dealt to clients in turn, open-loop arrivals go to
// a client drawn uniformly. `config` (a JSON object, may be empty) is the client-side engine
// config merged over every engine variant's; each client's engine gets
// subset.client_id "client-<i>" when its config has a subset without one.
struct ClientsSpec {
  int count = 1;
  std::string config;  // "" = none
};

struct Scenario {
  std::string name;
  std::string description;
  double duration_s = 120;
  uint64_t seed = 1;
  double report_interval_s = 1;  // backends export CPU/memory (and ORCA-style qps/eps) this often
  std::vector<BackendSpec> backends;
  std::vector<FaultSpec> faults;
  LoadSpec load;
  ClientsSpec clients;
  std::vector<std::string> policies;  // default policy list; empty = all
  // Extra engine variants by name ("engine_..."): the engine with this config JSON (seed added).
  std::vector<std::pair<std::string, std::string>> engine_configs;
};

// Adds engine variants from a JSON object {"engine_name": {config}, ...}; throws on bad input.
void AddEngineConfigs(std::string_view json_object, Scenario* scenario);

// Parses a scenario; throws std::invalid_argument naming the JSON path on bad input.
Scenario ParseScenario(std::string_view json);

}  // namespace weighted_sim
