// One judgement per endpoint, through the C API on the manual clock: graded severity, the
// failing state, the evidence a starved endpoint keeps, short bursts, and the reasons events and
// snapshots give.
#include "harness.h"

namespace weighted::testing {
namespace {

// Reports `n` outcomes for `id` spread over the next second (no picks: the test decides exactly
// what each endpoint shows).
void Report(Harness& h, const std::string& id, int n, int outcome, double ms = 20) {
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(wt_service_report(h.svc(), id.c_str(), ms, outcome), WT_OK) << wt_last_error();
  }
}

void Advance(Harness& h, double seconds) {
  ASSERT_EQ(wt_engine_advance(h.engine(), static_cast<int64_t>(seconds * 1e9)), WT_OK);
}

// One 5-s cycle in which each endpoint reports what `per_cycle` gives it.
void Cycle(Harness& h, const std::map<std::string, std::pair<int, int>>& ok_and_failed,
           int failure = WT_OUTCOME_HTTP_5XX) {
  for (const auto& [id, counts] : ok_and_failed) {
    Report(h, id, counts.first, WT_OUTCOME_SUCCESS);
    Report(h, id, counts.second, failure);
  }
  Advance(h, 5);
}

double ErrorContribution(const json& ep) {
  for (const json& r : ep["rules"]) {
    if (r["metric"] == "error_rate") return r["contribution"].get<double>();
  }
  return -1;
}

TEST(HealthModel, DefaultErrorRulePenaltyGrowsWithTheRate) {
  Harness h;
  h.Set({{"low", 1}, {"mid", 1}, {"all", 1}, {"ok", 1}});
  Cycle(h, {{"low", {98, 2}}, {"mid", {75, 25}}, {"all", {0, 100}}, {"ok", {100, 0}}});
  const double low = ErrorContribution(h.Endpoint("low"));
  const double mid = ErrorContribution(h.Endpoint("mid"));
  EXPECT_NEAR(low, 0.5 + 0.5 * (0.02 - 0.01) / 0.49, 1e-9) << "just above 1%: about 0.5";
  EXPECT_NEAR(mid, 0.5 + 0.5 * (0.25 - 0.01) / 0.49, 1e-9);
  EXPECT_EQ(ErrorContribution(h.Endpoint("ok")), 0);
  // Failing every request reaches the full penalty: half-isolation, probes only.
  EXPECT_EQ(h.Endpoint("all")["state"], "isolated");
  EXPECT_EQ(h.Count(WT_EVENT_ISOLATED, "all"), 1);
  EXPECT_EQ(h.Endpoint("mid")["state"], "failing");
}

TEST(HealthModel, ArticleProfileKeepsTheFlatRules) {
  Harness h(R"({"profile": "article", "seed": 1})");
  h.Set({{"A", 1}, {"B", 1}});
  Cycle(h, {{"A", {0, 100}}, {"B", {100, 0}}});
  json a = h.Endpoint("A");
  EXPECT_DOUBLE_EQ(ErrorContribution(a), 0.5) << "the article's 0.5, whatever the rate";
  EXPECT_EQ(a["state"], "failing");
  EXPECT_EQ(h.Count(WT_EVENT_ISOLATED, "A"), 0);
}

TEST(HealthModel, GradingIsConfigurablePerRule) {
  Harness h(R"({"seed": 1, "picker": {"mode": "weighted"}, "rules": [
      {"metric": "timeout_rate", "threshold": 0.05, "penalty": 0.2, "full_rate": 0.25,
       "full_penalty": 0.6}]})");
  h.Set({{"A", 1}, {"B", 1}, {"C", 1}});
  Cycle(h, {{"A", {85, 15}}, {"B", {50, 50}}, {"C", {100, 0}}}, WT_OUTCOME_TIMEOUT);
  EXPECT_NEAR(h.Endpoint("A")["penalty"].get<double>(), 0.2 + 0.4 * 0.5, 1e-9);
  EXPECT_NEAR(h.Endpoint("B")["penalty"].get<double>(), 0.6, 1e-9) << "capped at full_penalty";
  EXPECT_NEAR(h.Endpoint("A")["weight"].get<double>(), 0.6, 1e-9);
}

TEST(HealthModel, SlowIsDegradedAndFailingIsFailing) {
  Harness h;
  h.Set({{"slow", 1}, {"bad", 1}, {"fine", 1}});
  for (int i = 0; i < 2; ++i) {
    Report(h, "slow", 100, WT_OUTCOME_SUCCESS, 200);
    Report(h, "fine", 100, WT_OUTCOME_SUCCESS, 20);
    Report(h, "bad", 90, WT_OUTCOME_SUCCESS, 20);
    Report(h, "bad", 10, WT_OUTCOME_HTTP_5XX, 20);
    Advance(h, 5);
  }
  EXPECT_EQ(h.Endpoint("slow")["state"], "degraded");
  EXPECT_EQ(h.Endpoint("bad")["state"], "failing");
  EXPECT_EQ(h.Endpoint("fine")["state"], "healthy");
  // The change to failing is an event of its own, with the judgement behind it.
  bool seen = false;
  for (const auto& e : h.events()) {
    if (e.type != WT_EVENT_STATE_CHANGED || e.endpoint != "bad") continue;
    const json why = json::parse(e.reason);
    EXPECT_EQ(why["state"], "failing");
    EXPECT_EQ(why["evidence"], "window");
    ASSERT_EQ(why["rules"].size(), 1u);
    EXPECT_EQ(why["rules"][0]["metric"], "error_rate");
    EXPECT_NEAR(why["rules"][0]["value"].get<double>(), 0.1, 1e-9);
    EXPECT_GT(why["failing"].get<double>(), 0.5);
    seen = true;
  }
  EXPECT_TRUE(seen);
}

TEST(HealthModel, AStarvedEndpointKeepsTheEvidenceThatStarvedItFadingOverTime) {
  // Flat rules and no isolation, so that what is judged is the held evidence alone.
  Harness h(R"({"seed": 1, "picker": {"mode": "weighted"},
                 "rules": [{"metric": "error_rate", "threshold": 0.01, "penalty": 0.5}]})");
  h.Set({{"A", 1}, {"B", 1}});
  Cycle(h, {{"A", {50, 50}}, {"B", {100, 0}}});
  ASSERT_EQ(h.Endpoint("A")["state"], "failing");
  // Then nothing from A (the picker avoids it): its window empties after two cycles, and it is
  // judged on what it showed last, not as unknown-and-healthy.
  for (int i = 0; i < 3; ++i) Cycle(h, {{"B", {100, 0}}});
  json a = h.Endpoint("A");
  EXPECT_FALSE(a["known"].get<bool>());
  EXPECT_EQ(a["judgement"]["evidence"], "held");
  EXPECT_EQ(a["state"], "failing");
  EXPECT_DOUBLE_EQ(a["weight"].get<double>(), 0.5) << "held, not climbing back";
  // Held evidence is worth window.min_requests (10) results, halved every 30 s: after ~52 s it
  // is worth less than exit_min_probes (3) and the endpoint is honestly unknown.
  for (int i = 0; i < 10; ++i) Cycle(h, {{"B", {100, 0}}});
  a = h.Endpoint("A");
  EXPECT_EQ(a["judgement"]["evidence"], "none");
  EXPECT_NE(a["state"], "failing");
}

TEST(HealthModel, ProbesRefreshHeldEvidence) {
  Harness h(R"({"seed": 1, "picker": {"mode": "weighted"},
                 "rules": [{"metric": "error_rate", "threshold": 0.01, "penalty": 0.5}]})");
  h.Set({{"A", 1}, {"B", 1}});
  Cycle(h, {{"A", {0, 50}}, {"B", {100, 0}}});
  for (int i = 0; i < 12; ++i) Cycle(h, {{"A", {0, 1}}, {"B", {100, 0}}});
  // 55 s after the last full window, held alone has faded below exit_min_probes, but the two
  // failed keep-alive results in the window keep the evidence alive and failing.
  json a = h.Endpoint("A");
  EXPECT_EQ(a["judgement"]["evidence"], "held");
  EXPECT_EQ(a["state"], "failing");
  // Successes dilute it while failures are in the window ...
  Cycle(h, {{"A", {4, 0}}, {"B", {100, 0}}});
  EXPECT_EQ(h.Endpoint("A")["state"], "failing");
  // ... and a window of clean probes (exit_min_probes or more) refutes it, as it ends isolation.
  Cycle(h, {{"A", {4, 0}}, {"B", {100, 0}}});
  a = h.Endpoint("A");
  EXPECT_NE(a["state"], "failing");
  EXPECT_EQ(a["judgement"]["evidence"], "none");
}

TEST(HealthModel, AlwaysFailingEndpointIsIsolatedAndNeverReadsHealthyOrRecovering) {
  // The default profile and picker, two endpoints, one answering 5xx in 1 ms to everything.
  Harness h(R"({"seed": 7})");
  h.Set({{"bad", 1}, {"good", 1}});
  std::vector<std::string> states;
  for (int cycle = 0; cycle < 16; ++cycle) {
    h.Drive(5, 100, [](const std::string& id) {
      return id == "bad" ? Outcome{1, WT_OUTCOME_HTTP_5XX} : Ok();
    });
    states.push_back(h.Endpoint("bad")["state"].get<std::string>());
  }
  EXPECT_EQ(states[0], "isolated") << "half-isolated at the first cycle";
  for (size_t i = 0; i < states.size(); ++i) {
    EXPECT_TRUE(states[i] == "isolated" || states[i] == "failing") << "cycle " << i << ": "
                                                                   << states[i];
  }
  // Max isolation (30 s) forces it back; its probes failed, so it reads failing and goes back.
  EXPECT_GE(h.Count(WT_EVENT_FORCED_RESTORE, "bad"), 1);
  EXPECT_GE(h.Count(WT_EVENT_ISOLATED, "bad"), 2);
}

TEST(HealthModel, ABurstCostsAHealthyEndpointOneCycle) {
  Harness h;
  h.Set({{"A", 1}, {"B", 1}, {"C", 1}});
  for (int i = 0; i < 3; ++i) Cycle(h, {{"A", {300, 0}}, {"B", {300, 0}}, {"C", {300, 0}}});
  ASSERT_EQ(h.Endpoint("A")["state"], "healthy");
  // A second of timeouts: 30 of A's 300 results this cycle.
  Cycle(h, {{"A", {270, 30}}, {"B", {300, 0}}, {"C", {300, 0}}}, WT_OUTCOME_TIMEOUT);
  EXPECT_LT(h.Endpoint("A")["weight"].get<double>(), 1.0) << "a cut, as for any evidence";
  // The next cycle is clean: the window still holds the burst, the cycle itself does not.
  Cycle(h, {{"A", {300, 0}}, {"B", {300, 0}}, {"C", {300, 0}}});
  json a = h.Endpoint("A");
  EXPECT_DOUBLE_EQ(a["weight"].get<double>(), 1.0) << "back at once, not stepped";
  EXPECT_EQ(a["state"], "healthy");
  EXPECT_EQ(a["judgement"]["evidence"], "last_cycle");
}

TEST(HealthModel, SustainedTroubleIsNoBurst) {
  Harness h;
  h.Set({{"A", 1}, {"B", 1}, {"C", 1}});
  for (int i = 0; i < 2; ++i) Cycle(h, {{"A", {300, 0}}, {"B", {300, 0}}, {"C", {300, 0}}});
  // Three cycles of 10% timeouts: longer than controller.burst_ms (10 s).
  for (int i = 0; i < 3; ++i) {
    Cycle(h, {{"A", {270, 30}}, {"B", {300, 0}}, {"C", {300, 0}}}, WT_OUTCOME_TIMEOUT);
  }
  Cycle(h, {{"A", {300, 0}}, {"B", {300, 0}}, {"C", {300, 0}}});
  // The window still holds the last bad cycle: no undo, the weight stays cut.
  EXPECT_LT(h.Endpoint("A")["weight"].get<double>(), 0.6);
  EXPECT_EQ(h.Endpoint("A")["state"], "failing");
}

TEST(HealthModel, BurstUndoCanBeTurnedOff) {
  Harness h(R"({"seed": 42, "controller": {"burst_ms": 0}})");
  h.Set({{"A", 1}, {"B", 1}, {"C", 1}});
  for (int i = 0; i < 3; ++i) Cycle(h, {{"A", {300, 0}}, {"B", {300, 0}}, {"C", {300, 0}}});
  Cycle(h, {{"A", {270, 30}}, {"B", {300, 0}}, {"C", {300, 0}}}, WT_OUTCOME_TIMEOUT);
  const double cut = h.Endpoint("A")["weight"].get<double>();
  Cycle(h, {{"A", {300, 0}}, {"B", {300, 0}}, {"C", {300, 0}}});
  EXPECT_DOUBLE_EQ(h.Endpoint("A")["weight"].get<double>(), cut);
}

TEST(HealthModel, SnapshotNamesTheMainContributors) {
  Harness h(R"({"seed": 3})");
  h.Set({{"A", 1}, {"B", 1}, {"C", 1}});
  for (int i = 0; i < 2; ++i) {
    Report(h, "A", 80, WT_OUTCOME_SUCCESS, 300);
    Report(h, "A", 20, WT_OUTCOME_HTTP_5XX, 300);
    Report(h, "B", 100, WT_OUTCOME_SUCCESS, 20);
    Report(h, "C", 100, WT_OUTCOME_SUCCESS, 20);
    Advance(h, 5);
  }
  const json j = h.Endpoint("A")["judgement"];
  EXPECT_EQ(j["evidence"], "window");
  ASSERT_GE(j["contributors"].size(), 2u);
  // Largest first: the graded error rule (0.5 + ...) before the latency rule (0.3).
  EXPECT_EQ(j["contributors"][0]["metric"], "error_rate");
  EXPECT_EQ(j["contributors"][0]["source"], "rule");
  EXPECT_NEAR(j["contributors"][0]["value"].get<double>(), 0.2, 1e-9);
  EXPECT_EQ(j["contributors"][1]["metric"], "latency_p99");
  EXPECT_TRUE(h.Endpoint("B")["judgement"]["contributors"].empty());
}

}  // namespace
}  // namespace weighted::testing
