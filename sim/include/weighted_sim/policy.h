// A load-balancing policy as the simulator drives it: the client-side view only (what it picked,
// what came back, what the backends export), plus a ground-truth view reserved for the oracle.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weighted_sim {

enum class Outcome : int {
  kSuccess = 0,
  kHttp5xx = 1,       // the backend answered 5xx (injected error, or 503 for a full queue)
  kTimeout = 2,       // the client gave up after the timeout
  kConnectError = 3,  // hard down: refused in connect_error_ms
};

// What a pick returns. `backend` indexes the scenario's backends; the rest is opaque to the
// simulator and handed back on completion (the engine's wt_pick fits in it).
struct Pick {
  int backend = -1;
  uint64_t key = 0;
  uint64_t epoch = 0;
  uint32_t index = 0;
  uint32_t flags = 0;
  uint32_t ticket = 0;
};

// What a backend exports, the way a real one would: CPU = busy share of its workers over the
// last report interval (plus any fault's extra CPU), memory, and server-side request and error
// rates over that interval (gRPC's ORCA qps / eps).
struct BackendReport {
  double cpu = 0;
  double memory = 0;
  double qps = 0;
  double eps = 0;
  // Mean service time (ms) of the requests that started on a worker in the interval, queueing
  // left out: what a server's filter around its handler measures. The last interval's figure
  // when none started.
  double latency_ms = 0;
};

struct Completion {
  int backend = 0;
  Pick pick;
  double latency_ms = 0;
  Outcome outcome = Outcome::kSuccess;
  // The backend's latest report, as carried on the response (ORCA per-call trailers). Absent on
  // client timeouts and connection errors: no response, no trailers.
  const BackendReport* trailer = nullptr;
};

// Ground truth, for the oracle only.
class Truth {
 public:
  virtual ~Truth() = default;
  virtual double ServiceMeanMs(int backend, int64_t now_ns) const = 0;  // with faults applied
  virtual double ErrorRate(int backend, int64_t now_ns) const = 0;      // incl. down = 1
  virtual int Outstanding(int backend) const = 0;  // in service + queued, at the backend
  virtual int Workers(int backend) const = 0;
  virtual int QueueLimit(int backend) const = 0;
};

struct PolicyEnv {
  std::vector<std::string> ids;
  std::vector<double> weights;  // base weights (discovery metadata)
  uint64_t seed = 1;
  double timeout_ms = 1000;  // the client's timeout (the oracle avoids queues longer than it)
  const Truth* truth = nullptr;
  // Which client of a fleet this policy serves ("client-<i>") and the client-side engine
  // config merged over an engine variant's ("" = none); see ClientsSpec.
  std::string client_id;
  std::string client_config;
  int client_index = 0;  // this client's place in the fleet, and the fleet's size
  int client_count = 1;
  // Named engine variants (name, config JSON) beside the built-in policies.
  const std::vector<std::pair<std::string, std::string>>* engine_configs = nullptr;
};

class Policy {
 public:
  virtual ~Policy() = default;
  // Moves the policy's clock; called before every other call with a non-decreasing time.
  virtual void AdvanceTo(int64_t now_ns) { (void)now_ns; }
  virtual Pick PickBackend(int64_t now_ns) = 0;
  virtual void OnComplete(const Completion& c, int64_t now_ns) = 0;
  // Called every report interval per backend with what the backend exports.
  virtual void OnReport(int backend, const BackendReport& r, int64_t now_ns) {
    (void)backend, (void)r, (void)now_ns;
  }
  // Whether OnReport does anything: a fleet skips the calls (clients x backends per interval)
  // for policies that ignore them.
  virtual bool WantsReports() const { return false; }
  // The policy's current effective weights, normalised to sum 1; empty if it has none.
  virtual std::vector<double> Weights() const { return {}; }
  // The state the policy shows for each backend ("healthy", "failing", ..., "unknown" without
  // evidence), for policies that publish one (the engine); empty otherwise.
  virtual std::vector<std::string> States() const { return {}; }
  // What the policy decided over the run, for policies that say (the engine, from its events):
  // how often a weight moved, and how often an endpoint was isolated.
  struct Decisions {
    int64_t weight_changes = 0, isolations = 0;
  };
  virtual std::optional<Decisions> Decided() const { return std::nullopt; }
  // For policies that publish an expected share (the engine): per endpoint and controller cycle,
  // |share expected when the cycle began - share measured over it|, in percentage points, with
  // the time the cycle ended.
  struct ShareError {
    double end_s;
    int backend;
    double pp;
  };
  virtual std::vector<ShareError> ShareErrors() const { return {}; }
};

// Every policy name the simulator knows, in table order.
const std::vector<std::string>& PolicyNames();
// One sentence per policy for the table's legend and the docs.
std::string_view PolicyDescription(std::string_view name);
// Creates a policy by name; throws std::invalid_argument for an unknown one.
std::unique_ptr<Policy> MakePolicy(std::string_view name, const PolicyEnv& env);
inline constexpr std::string_view kOracle = "oracle";

}  // namespace weighted_sim
