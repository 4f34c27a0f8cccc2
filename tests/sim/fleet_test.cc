// Fleets: many clients, each with its own policy instance, sharing a fixed total load; a
// fleet of one is the plain run; every client's engine has its own subset.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "weighted_sim/sim.h"

namespace weighted_sim {
namespace {

using nlohmann::json;

std::string Fleet(const json& extra = json::object(), int backends = 10) {
  json s = {
      {"name", "fleet"},
      {"duration_s", 20},
      {"seed", 3},
      {"backend_defaults",
       {{"workers", 8}, {"queue_limit", 64},
        {"service", {{"dist", "lognormal"}, {"mean_ms", 20}, {"log_sigma", 0.5}}}}},
      {"backends", json::array()},
      {"load", {{"type", "open"}, {"rate_per_s", 1000}, {"timeout_ms", 1000}}}};
  for (int i = 0; i < backends; ++i) s["backends"].push_back(json::object());
  s.merge_patch(extra);
  return s.dump();
}

json RunSim(const std::string& scenario, const json& options) {
  return json::parse(RunScenarioJson(scenario, options.dump()));
}

TEST(Fleet, AFleetOfOneIsThePlainRun) {
  const json opts = {{"policies", {"round_robin", "peak_ewma"}}};
  json plain = RunSim(Fleet(), opts);
  json one = RunSim(Fleet({{"clients", {{"count", 1}}}}), opts);
  EXPECT_EQ(plain.dump(), one.dump());
#ifdef WEIGHTED_SIM_HAVE_ENGINE
  const json engine = {{"policies", {"engine_default"}}};
  EXPECT_EQ(RunSim(Fleet(), engine).dump(),
            RunSim(Fleet({{"clients", {{"count", 1}}}}), engine).dump());
#endif
}

TEST(Fleet, TheTotalLoadStaysWhatTheScenarioSays) {
  const json opts = {{"policies", {"round_robin"}}, {"series", false}, {"oracle", false}};
  for (int clients : {1, 10, 300}) {
    const json r = RunSim(Fleet({{"clients", {{"count", clients}}}}), opts);
    const double sent = r["summary"]["round_robin"]["requests"].get<double>();
    // 1000/s over 20 s: Poisson, sd ~141.
    EXPECT_NEAR(sent, 20000, 600) << clients << " clients";
    EXPECT_EQ(r["scenario"]["clients"], clients);
  }
}

TEST(Fleet, ClosedLoopCallersAreDealtToClients) {
  const json closed = {{"load", {{"type", "closed"}, {"callers", 40}, {"think_ms", {{"mean", 50}}},
                                 {"rate_per_s", nullptr}}}};
  json s = json::parse(Fleet(closed));
  s["clients"] = {{"count", 40}};
  const json opts = {{"policies", {"round_robin"}}, {"oracle", false}};
  const json r = RunSim(s.dump(), opts);
  // 40 callers, ~70 ms per round trip: ~570 requests per second, whatever the client count.
  const double tps = r["summary"]["round_robin"]["mean_success_tps"].get<double>();
  EXPECT_GT(tps, 450);
  EXPECT_LT(tps, 700);
  s["clients"] = {{"count", 41}};
  try {
    RunScenarioJson(s.dump(), opts.dump());
    ADD_FAILURE() << "41 clients for 40 callers were accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("$.load.callers"), std::string::npos) << e.what();
  }
}

TEST(Fleet, BadClientsAreRefusedWithTheirPath) {
  for (const json& bad : {json{{"clients", {{"count", 0}}}}, json{{"clients", {{"cont", 2}}}},
                          json{{"clients", {{"count", 2}, {"config", 3}}}}}) {
    try {
      RunScenarioJson(Fleet(bad), "{}");
      ADD_FAILURE() << bad.dump();
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("$.clients"), std::string::npos) << e.what();
    }
  }
}

#ifdef WEIGHTED_SIM_HAVE_ENGINE
TEST(Fleet, EveryClientHasItsOwnSubset) {
  // 50 clients with subsets of 2 of 10 backends: client 0's weights name two backends, and the
  // fleet as a whole still reaches every backend.
  json s = json::parse(Fleet({{"clients", {{"count", 50}}}}));
  s["engine_configs"] = {{"engine_subset", {{"subset", {{"mode", "fixed"}, {"size", 2}}},
                                            {"sim", {{"resources", "none"}}}}}};
  const json opts = {{"policies", {"engine_subset"}}, {"oracle", false}};
  const json r = RunSim(s.dump(), opts);
  const json& backends = r["series"]["engine_subset"]["backends"];
  int weighted = 0;
  for (const json& b : backends) {
    const double w = b["weight"][10].get<double>();
    weighted += w > 0;
    double sent = 0;
    for (const json& n : b["sent"]) sent += n.get<double>();
    EXPECT_GT(sent, 0) << b["id"];
  }
  EXPECT_EQ(weighted, 2);
}
#endif

}  // namespace
}  // namespace weighted_sim
