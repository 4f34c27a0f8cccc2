// Whole runs: determinism, closed- and open-loop load, the client timeout, the result JSON.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "weighted_sim/sim.h"

namespace weighted_sim {
namespace {

using nlohmann::json;

// A small closed-loop scenario; `extra` is merged over it.
std::string Scenario3(const json& extra = json::object(), double mean_ms = 20) {
  json s = {
      {"name", "t"},
      {"duration_s", 20},
      {"seed", 5},
      {"backend_defaults",
       {{"workers", 4}, {"queue_limit", 16},
        {"service", {{"dist", "lognormal"}, {"mean_ms", mean_ms}, {"log_sigma", 0.5}}}}},
      {"backends", json::array({json::object(), json::object(), json::object()})},
      {"load", {{"type", "closed"}, {"callers", 20}, {"think_ms", {{"mean", 50}}},
                {"timeout_ms", 1000}}}};
  s.merge_patch(extra);
  return s.dump();
}

json RunSim(const std::string& scenario, const json& options = json::object()) {
  return json::parse(RunScenarioJson(scenario, options.dump()));
}

TEST(Simulator, SameSeedSameBytes) {
  const json opts = {{"policies", {"round_robin", "peak_ewma", "grpc_wrr"}}};
  const std::string a = RunScenarioJson(Scenario3(), opts.dump());
  const std::string b = RunScenarioJson(Scenario3(), opts.dump());
  EXPECT_EQ(a, b);
  json other = opts;
  other["seed"] = 6;
  EXPECT_NE(a, RunScenarioJson(Scenario3(), other.dump()));
}

#ifdef WEIGHTED_SIM_HAVE_ENGINE
TEST(Simulator, EngineRunsAreDeterministicToo) {
  const json opts = {{"policies", {"engine_default", "engine_weighted"}}};
  EXPECT_EQ(RunScenarioJson(Scenario3(), opts.dump()), RunScenarioJson(Scenario3(), opts.dump()));
}
#endif

TEST(Simulator, ClosedLoopThroughputFallsWhenLatencyRises) {
  const json opts = {{"policies", {"round_robin"}}, {"series", false}};
  const double fast = RunSim(Scenario3(json::object(), 20), opts)["summary"]["round_robin"]["mean_success_tps"];
  const double slow = RunSim(Scenario3(json::object(), 60), opts)["summary"]["round_robin"]["mean_success_tps"];
  // 20 callers, 50 ms think: about 20 / 0.07 = 286/s at 20 ms, 20 / 0.11 = 182/s at 60 ms.
  EXPECT_GT(fast, 250);
  EXPECT_LT(slow, 0.75 * fast);
}

TEST(Simulator, OpenLoopThroughputFollowsTheRateNotTheLatency) {
  const json open = {{"load", {{"type", "open"}, {"rate_per_s", 200}, {"callers", nullptr},
                               {"think_ms", nullptr}}}};
  const json opts = {{"policies", {"round_robin"}}, {"series", false}};
  const double fast = RunSim(Scenario3(open, 20), opts)["summary"]["round_robin"]["mean_success_tps"];
  const double slow = RunSim(Scenario3(open, 40), opts)["summary"]["round_robin"]["mean_success_tps"];
  EXPECT_NEAR(fast, 200, 15);
  EXPECT_NEAR(slow, 200, 15);
}

TEST(Simulator, ClientTimeoutIsAnErrorAtTheTimeout) {
  // Service 3 s against a 1 s timeout, queues long enough for all: every request times out,
  // at 1000 ms. (With short queues the abandoned requests would fill them and the rest be 503.)
  const json opts = {{"policies", {"round_robin"}}};
  const json longer = {{"duration_s", 10}, {"backend_defaults", {{"queue_limit", 1000}}}};
  const json r = RunSim(Scenario3(longer, 3000), opts);
  const json& m = r["summary"]["round_robin"];
  EXPECT_EQ(m["successes"], 0);
  EXPECT_GT(m["timeouts"].get<int>(), 0);
  EXPECT_EQ(m["timeouts"], m["errors"]);
  EXPECT_DOUBLE_EQ(m["p50_ms"].get<double>(), 1000.0);
}

TEST(Simulator, OverloadedQueuesAnswer503) {
  // Open loop far above capacity (3 x 4 workers / 20 ms = 600/s): queues fill, the rest is 503.
  const json open = {{"load", {{"type", "open"}, {"rate_per_s", 2000}}}};
  const json r = RunSim(Scenario3(open), {{"policies", {"round_robin"}}});
  const json& m = r["summary"]["round_robin"];
  EXPECT_GT(m["errors"].get<int>() - m["timeouts"].get<int>(), 10000);  // fast 503s
  EXPECT_NEAR(m["mean_success_tps"].get<double>(), 600, 60);
  EXPECT_EQ(r["series"]["round_robin"]["backends"][0]["queue"][10], 16);
}

TEST(Simulator, HardDownBackendGetsConnectionErrorsOnlyWhileDown) {
  const json down = {{"faults", {{{"type", "down"}, {"backend", 1}, {"start_s", 5}, {"end_s", 10}}}}};
  const json r = RunSim(Scenario3(down), {{"policies", {"round_robin"}}});
  const json& b1 = r["series"]["round_robin"]["backends"][1];
  for (int t = 6; t < 10; ++t) {
    EXPECT_EQ(b1["success"][t], 0) << t;
    EXPECT_GT(b1["errors"][t].get<int>(), 0) << t;
    EXPECT_EQ(b1["sick"][t], 1);
  }
  EXPECT_GT(b1["success"][15].get<int>(), 0);
  EXPECT_EQ(b1["errors"][15], 0);
  // Round-robin keeps sending a third there: the share to sick backends is a third.
  EXPECT_NEAR(r["summary"]["round_robin"]["sick_share"].get<double>(), 1.0 / 3, 0.01);
}

TEST(Simulator, ResultJsonHasTheDocumentedShape) {
  const json r = RunSim(Scenario3(), {{"policies", {"random"}}});
  EXPECT_EQ(r["policies"], json({"random", "oracle"}));  // the oracle is always run
  for (const char* k : {"mean_success_tps", "max_error_rate", "error_rate", "recovery_s",
                        "recoveries", "readmission_s", "readmissions", "mean_cpu", "p50_ms",
                        "p99_ms", "p999_ms", "sick_share", "requests", "successes", "errors"})
    EXPECT_TRUE(r["summary"]["random"].contains(k)) << k;
  const json& s = r["series"]["random"];
  EXPECT_EQ(s["t_s"].size(), 20u);
  EXPECT_EQ(s["backends"].size(), 3u);
  for (const char* k : {"sent", "success", "errors", "share", "weight", "cpu", "memory", "queue",
                        "sick"})
    EXPECT_EQ(s["backends"][0][k].size(), 20u) << k;
  EXPECT_FALSE(RunSim(Scenario3(), {{"series", false}, {"policies", {"random"}}}).contains("series"));
}

TEST(Simulator, BadInputNamesTheProblem) {
  EXPECT_THROW(RunScenarioJson("{", "{}"), std::invalid_argument);
  EXPECT_THROW(RunScenarioJson(Scenario3({{"bogus", 1}}), "{}"), std::invalid_argument);
  EXPECT_THROW(RunScenarioJson(Scenario3(), R"({"policies":["nope"]})"), std::invalid_argument);
  try {
    RunScenarioJson(Scenario3({{"faults", {{{"type", "gc"}, {"backend", 9}}}}}), "{}");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("$.faults[0].backend"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace weighted_sim
