// The pool-saturation scenario (examples/scenarios/pool_saturation.json): a backend whose pool
// fills before its latency moves. The engine that reads the servers' reports (each response's
// endpoint-load-metrics header, or the reports scraped every second) errs less and answers
// faster than the same engine on client-side signals only; and a bad simulator-only feed name
// is refused. Orderings, never exact numbers (scenarios_test.cc says why).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "weighted_sim/sim.h"

namespace weighted_sim {
namespace {

using nlohmann::json;

std::string Scenario() {
  std::ifstream in(std::string(WT_SCENARIO_DIR) + "/pool_saturation.json");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

#ifdef WEIGHTED_SIM_HAVE_ENGINE

TEST(LoadReportScenario, ServerReportsErrLessThanClientSignalsOnly) {
  for (uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE(seed);
    json options = {{"seed", seed}};
    const json r = json::parse(RunScenarioJson(Scenario(), options.dump()))["summary"];
    const double client = r["engine_client_only"]["error_rate"].get<double>();
    EXPECT_GT(client, 0.0) << "the scenario must hurt the engine that cannot see the pool";
    EXPECT_LT(r["engine_header"]["error_rate"].get<double>(), client / 2);
    EXPECT_LT(r["engine_scrape"]["error_rate"].get<double>(), client / 2);
    EXPECT_LT(r["engine_header"]["p99_ms"].get<double>(), r["engine_client_only"]["p99_ms"].get<double>());
  }
}

TEST(LoadReportScenario, AnUnknownFeedIsRefused) {
  json s = json::parse(Scenario());
  s["engine_configs"]["engine_header"]["sim"]["resources"] = "telepathy";
  EXPECT_THROW(
      {
        try {
          RunScenarioJson(s.dump(), "{}");
        } catch (const std::exception& e) {
          EXPECT_NE(std::string(e.what()).find("\"telepathy\" is not scrape, header, poll or none"),
                    std::string::npos)
              << e.what();
          throw;
        }
      },
      std::exception);
}

#endif

}  // namespace
}  // namespace weighted_sim
