// Runs every requested policy (and the oracle, which the recovery metric is judged against)
// on one scenario and seed.
#include <chrono>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "weighted_sim/policy.h"
#include "weighted_sim/sim.h"

namespace weighted_sim {

Results RunScenario(const Scenario& scenario, const RunOptions& options) {
  std::vector<std::string> names = options.policies;
  if (names.empty()) names = scenario.policies;
  if (names.empty()) {
    names = PolicyNames();
    names.pop_back();  // the oracle, run below in any case
    for (const auto& [variant, config] : scenario.engine_configs) names.push_back(variant);
  }
  for (const std::string& n : names) {
    bool variant = false;
    for (const auto& v : scenario.engine_configs) variant |= v.first == n;
    if (!variant && PolicyDescription(n).empty()) (void)MakePolicy(n, PolicyEnv{});  // throws
  }

  Results r;
  r.scenario = scenario;
  r.seed = options.seed.value_or(scenario.seed);
  auto run_one = [&](const std::string& name) {
    const auto t0 = std::chrono::steady_clock::now();
    PolicyResult p;
    p.run = Simulate(scenario, name, r.seed);
    p.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return p;
  };
  std::optional<PolicyResult> oracle;
  if (options.oracle) oracle = run_one(std::string(kOracle));
  for (const std::string& n : names) {
    if (n == kOracle) continue;
    r.policies.push_back(run_one(n));
  }
  if (oracle) r.policies.push_back(std::move(*oracle));
  for (PolicyResult& p : r.policies) {
    p.summary = Summarize(scenario, p.run, options.oracle ? r.policies.back().run : p.run);
    if (!options.oracle) p.summary.recoveries.clear();
    if (!options.series) p.run.series = Series{};
    p.run.latencies_ms.clear();
    p.run.latencies_ms.shrink_to_fit();
  }
  return r;
}

std::string RunScenarioJson(std::string_view scenario_json, std::string_view options_json) {
  Scenario scenario = ParseScenario(scenario_json);
  RunOptions options;
  if (!options_json.empty()) {
    nlohmann::json o;
    try {
      o = nlohmann::json::parse(options_json);
    } catch (const nlohmann::json::exception& e) {
      throw std::invalid_argument(std::string("options are not JSON: ") + e.what());
    }
    if (!o.is_object()) throw std::invalid_argument("options must be a JSON object");
    for (const auto& [k, v] : o.items()) {
      if (k == "policies") options.policies = v.get<std::vector<std::string>>();
      else if (k == "seed") options.seed = v.get<uint64_t>();
      else if (k == "series") options.series = v.get<bool>();
      else if (k == "oracle") options.oracle = v.get<bool>();
      else if (k == "engine_configs") AddEngineConfigs(v.dump(), &scenario);
      else throw std::invalid_argument("options: unknown key '" + k + "'");
    }
  }
  const Results r = RunScenario(scenario, options);
  return ResultsToJson(r, options.series);
}

}  // namespace weighted_sim
