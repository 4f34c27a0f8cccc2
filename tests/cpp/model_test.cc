// The weight model end to end through the C API on the manual clock: rules, the controller's
// step and cooldown rules in both profiles, isolation, probes, max isolation, slow start.
#include "harness.h"

namespace weighted::testing {
namespace {

// Every n-th call fails with `outcome`, the rest succeed: a deterministic error rate of 1/n.
struct EveryNth {
  int n, outcome;
  double ms = 20;
  std::map<std::string, int> calls;
  Outcome operator()(const std::string& id) {
    return ++calls[id] % n == 0 ? Outcome{ms, outcome} : Ok(ms);
  }
};

// The article's example (docs/requirements.md): A has GC pauses (latency x5, some timeouts), B a
// hot CPU and some errors, C is fine.
struct ArticleNodes {
  std::map<std::string, int> calls;
  Outcome operator()(const std::string& id) {
    const int k = ++calls[id];
    if (id == "A") return k % 20 == 0 ? Outcome{1000, WT_OUTCOME_TIMEOUT} : Ok(100);
    if (id == "B") return k % 40 == 0 ? Outcome{20, WT_OUTCOME_HTTP_5XX} : Ok(20);
    return Ok(20);
  }
  static double Cpu(const std::string& id) { return id == "B" ? 0.95 : 0.4; }
};

TEST(Model, ArticleExampleTiltsTrafficToTheHealthyNodeAndKeepsATrickleToTheOthers) {
  Harness h;
  h.Set({{"A", 1}, {"B", 1}, {"C", 1}});
  ArticleNodes behaviour;
  auto cpu = ArticleNodes::Cpu;
  h.Drive(30, 200, std::ref(behaviour), cpu);
  auto picks = h.Drive(20, 200, std::ref(behaviour), cpu);
  const int total = picks["A"] + picks["B"] + picks["C"];
  EXPECT_GT(picks["C"], total / 2) << "most traffic goes to C";
  EXPECT_GT(picks["A"], 0) << "A keeps a keep-alive trickle";
  EXPECT_GT(picks["B"], 0) << "B keeps a keep-alive trickle";
  json a = h.Endpoint("A"), b = h.Endpoint("B");
  // The default error rule is graded: 0.5 just above 1%, growing linearly to 1 at 50%.
  auto graded = [](double rate) { return 0.5 + 0.5 * (rate - 0.01) / 0.49; };
  const double a_errors = a["window"]["error_rate"].get<double>();  // about 1/20
  const double b_errors = b["window"]["error_rate"].get<double>();  // about 1/40
  EXPECT_NEAR(a_errors, 1.0 / 20, 0.005);
  EXPECT_NEAR(b_errors, 1.0 / 40, 0.005);
  EXPECT_NEAR(a["penalty"].get<double>(), 0.3 + graded(a_errors), 1e-9);  // p99 + errors
  EXPECT_NEAR(b["penalty"].get<double>(), graded(b_errors) + 0.2, 1e-9);  // errors + cpu
  EXPECT_EQ(a["state"], "failing") << "its errors fire: failing, not merely degraded";
  // Cut at once to the target of its worst window, then held by the cooldown: further than the
  // flat rules' 0.2, and not isolated.
  EXPECT_LT(a["weight"].get<double>(), 0.2);
  EXPECT_GT(a["weight"].get<double>(), 0.0);
}

TEST(Model, ArticleExampleWithTheDefaultLoadAwarePicker) {
  // The same example under the default profile: the picker itself steers away from A's slow
  // answers and B's errors within a few requests; the keep-alive share keeps both observed.
  Harness h(R"({"seed": 42})");
  h.Set({{"A", 1}, {"B", 1}, {"C", 1}});
  ArticleNodes behaviour;
  auto cpu = ArticleNodes::Cpu;
  auto picks = h.Drive(50, 200, std::ref(behaviour), cpu);
  const int total = picks["A"] + picks["B"] + picks["C"];
  EXPECT_GT(picks["C"], total / 2);
  EXPECT_LT(picks["A"], picks["B"]) << "slow A costs more than B, whose errors are rarer";
  EXPECT_GT(picks["A"], total / 1000) << "A keeps a keep-alive trickle";
  EXPECT_GT(picks["B"], total / 1000);
}

TEST(Model, DefaultProfileCutsAtOnceAndStepsIncreasesAfterTheCooldown) {
  // A flat error rule and no burst undo: what is shown is the cut and the steps alone (graded
  // rules and bursts have tests of their own, health_model_test.cc).
  Harness h(R"({"seed": 42, "picker": {"mode": "weighted"}, "controller": {"burst_ms": 0},
                 "rules": [{"metric": "error_rate", "threshold": 0.01, "penalty": 0.5}]})");
  h.Set({{"A", 10}, {"B", 10}});
  EveryNth sick{7, WT_OUTCOME_HTTP_5XX};  // 14% errors on both: no relative rule involved
  h.Drive(5, 100, [&](const std::string& id) { return id == "A" ? sick(id) : Ok(); });
  EXPECT_DOUBLE_EQ(h.Endpoint("A")["weight"].get<double>(), 5.0);  // base x (1 - 0.5), one cycle
  EXPECT_EQ(h.Count(WT_EVENT_WEIGHT_CHANGED, "A"), 1);
  // Healthy again: the window still remembers errors for one more cycle, then the cooldown
  // (10 s after the cut) holds, then +10% of base per cycle.
  std::vector<double> weights;
  for (int cycle = 0; cycle < 8; ++cycle) {
    h.Drive(5, 100, [](const std::string&) { return Ok(); });
    weights.push_back(h.Endpoint("A")["weight"].get<double>());
  }
  EXPECT_EQ(weights, (std::vector<double>{5, 6, 7, 8, 9, 10, 10, 10}));
}

TEST(Model, ArticleProfileStepsEveryChangeByTenPercentWithACooldown) {
  Harness h(R"({"profile": "article", "seed": 1})");
  h.Set({{"A", 10}, {"B", 10}});
  EveryNth sick{7, WT_OUTCOME_HTTP_5XX};
  std::vector<double> weights;
  for (int cycle = 0; cycle < 8; ++cycle) {
    h.Drive(5, 100, [&](const std::string& id) { return id == "A" ? sick(id) : Ok(); });
    weights.push_back(h.Endpoint("A")["weight"].get<double>());
  }
  // One 10% step, then hold for the 10 s cooldown (two cycles), and so on down to the target 5.
  EXPECT_EQ(weights, (std::vector<double>{9, 9, 8, 8, 7, 7, 6, 6}));
  EXPECT_DOUBLE_EQ(h.Endpoint("A")["target"].get<double>(), 5.0);
}

TEST(Model, HalfIsolationSendsOnlyProbesAndHealthyProbesRestore) {
  Harness h(R"({"seed": 3, "picker": {"mode": "weighted"},
                 "rules": [{"metric": "error_rate", "threshold": 0.01, "penalty": 1.0}]})");
  h.Set({{"A", 1}, {"B", 1}, {"C", 1}});
  EveryNth sick{4, WT_OUTCOME_CONNECT_ERROR};
  h.Drive(5, 200, [&](const std::string& id) { return id == "A" ? sick(id) : Ok(); });
  ASSERT_EQ(h.Count(WT_EVENT_ISOLATED, "A"), 1);
  EXPECT_NE(h.events().back().reason.find("\"error_rate\""), std::string::npos)
      << "the event names the rule that fired: " << h.events().back().reason;
  EXPECT_EQ(h.Endpoint("A")["state"], "isolated");

  auto picks = h.Drive(5, 200, [&](const std::string& id) { return id == "A" ? sick(id) : Ok(); });
  // probe_share 0.02 of its base, and at least probe_min_per_s = 1 per second.
  EXPECT_GE(picks["A"], 5);
  EXPECT_LE(picks["A"], 40);
  EXPECT_TRUE(h.flags("A") & WT_PICK_PROBE);
  EXPECT_FALSE(h.flags("B") & WT_PICK_PROBE);
  EXPECT_EQ(h.Count(WT_EVENT_RESTORED, "A"), 0) << "unhealthy probes keep it isolated";

  // The window (10 s) still holds the sick probes of the last cycle: one more to forget them.
  h.Drive(5, 200, [](const std::string&) { return Ok(); });
  EXPECT_EQ(h.Count(WT_EVENT_RESTORED, "A"), 0);
  h.Drive(5, 200, [](const std::string&) { return Ok(); });
  EXPECT_EQ(h.Count(WT_EVENT_RESTORED, "A"), 1);
  json a = h.Endpoint("A");
  EXPECT_EQ(a["state"], "recovering");
  EXPECT_DOUBLE_EQ(a["weight"].get<double>(), 0.1);  // back in one step, then step by step
}

TEST(Model, MaxIsolationForcesHalfWeightBackAndRaisesAnAlert) {
  Harness h(R"({"seed": 3, "picker": {"mode": "weighted"},
                 "rules": [{"metric": "error_rate", "threshold": 0.01, "penalty": 1.0}]})");
  h.Set({{"A", 4}, {"B", 4}});
  EveryNth sick{2, WT_OUTCOME_HTTP_5XX};
  h.Drive(5, 100, [&](const std::string& id) { return id == "A" ? sick(id) : Ok(); });
  ASSERT_EQ(h.Count(WT_EVENT_ISOLATED, "A"), 1);
  const int64_t isolated_at = h.events().back().time_ns;
  h.Drive(30, 100, [&](const std::string& id) { return id == "A" ? sick(id) : Ok(); });
  ASSERT_EQ(h.Count(WT_EVENT_FORCED_RESTORE, "A"), 1);
  for (auto& e : h.events()) {
    if (e.type != WT_EVENT_FORCED_RESTORE) continue;
    EXPECT_EQ(e.time_ns - isolated_at, 30'000'000'000LL);
    EXPECT_DOUBLE_EQ(e.new_weight, 2.0);  // 50% of base 4
  }
  EXPECT_EQ(h.Endpoint("A")["forced_restores"], 1);
}

TEST(Model, UnknownIsNotLow) {
  Harness h;
  h.Set({{"A", 1}, {"B", 1}});
  h.Drive(10, 2, [](const std::string&) { return Ok(500); });  // below min_requests
  json a = h.Endpoint("A");
  EXPECT_FALSE(a["known"].get<bool>());
  EXPECT_DOUBLE_EQ(a["weight"].get<double>(), 1.0);
  EXPECT_TRUE(a["rules"][0]["value"].is_null()) << "not evaluated, rather than zero";
  EXPECT_EQ(a["state"], "healthy");
}

TEST(Model, RelativeLatencyRuleUsesTheLowerMedianSoTwoEndpointsWork) {
  Harness h;
  h.Set({{"fast", 1}, {"slow", 1}});
  h.Drive(10, 100, [](const std::string& id) { return Ok(id == "slow" ? 100 : 20); });
  json slow = h.Endpoint("slow"), fast = h.Endpoint("fast");
  EXPECT_TRUE(slow["rules"][0]["fired"].get<bool>());
  EXPECT_NEAR(slow["rules"][0]["threshold"].get<double>(), 40.0, 1.0);  // 2 x fast's p99
  EXPECT_FALSE(fast["rules"][0]["fired"].get<bool>());
  EXPECT_DOUBLE_EQ(slow["penalty"].get<double>(), 0.3);
}

// A resource rule with a margin judges against the fleet: a fleet that runs hot as a whole is
// not cut, one endpoint hotter than its peers by more than the margin is, and the threshold shown
// is the one in force (the fleet's lower median plus the margin, or the absolute floor).
TEST(Model, ResourceMarginComparesAnEndpointWithItsFleet) {
  const std::string config = R"({"picker": {"mode": "weighted"}, "seed": 7, "rules": [
      {"metric": "cpu", "threshold": 0.8, "margin": 0.15, "penalty": 0.2}]})";
  {
    Harness h(config);
    h.Set({{"A", 1}, {"B", 1}, {"C", 1}});
    h.Drive(10, 100, [](const std::string&) { return Ok(20); },
            [](const std::string& id) { return id == "A" ? 0.95 : 0.9; });
    for (const char* id : {"A", "B", "C"}) {
      json e = h.Endpoint(id);
      EXPECT_FALSE(e["rules"][0]["fired"].get<bool>()) << id << ": every endpoint is hot";
      EXPECT_NEAR(e["rules"][0]["threshold"].get<double>(), 1.05, 1e-9) << id;
      EXPECT_DOUBLE_EQ(e["weight"].get<double>(), 1.0) << id;
    }
  }
  {
    Harness h(config);
    h.Set({{"A", 1}, {"B", 1}, {"C", 1}});
    h.Drive(10, 100, [](const std::string&) { return Ok(20); },
            [](const std::string& id) { return id == "A" ? 0.95 : 0.5; });
    json a = h.Endpoint("A"), b = h.Endpoint("B");
    EXPECT_TRUE(a["rules"][0]["fired"].get<bool>());
    EXPECT_NEAR(a["rules"][0]["threshold"].get<double>(), 0.8, 1e-9) << "the absolute floor";
    EXPECT_NEAR(a["weight"].get<double>(), 0.8, 1e-9);
    EXPECT_FALSE(b["rules"][0]["fired"].get<bool>());
  }
  {
    // Only A reports CPU: there is no fleet to compare it with (it would be its own lower
    // median), so the absolute floor judges it alone.
    Harness h(config);
    h.Set({{"A", 1}, {"B", 1}, {"C", 1}});
    h.Drive(10, 100, [](const std::string&) { return Ok(20); },
            [](const std::string& id) { return id == "A" ? 0.95 : -1.0; });
    json a = h.Endpoint("A");
    EXPECT_TRUE(a["rules"][0]["fired"].get<bool>());
    EXPECT_NEAR(a["rules"][0]["threshold"].get<double>(), 0.8, 1e-9);
  }
  {
    // The same fleet under the absolute rule alone: every endpoint above 80% is cut.
    Harness h(R"({"picker": {"mode": "weighted"}, "seed": 7, "rules": [
        {"metric": "cpu", "threshold": 0.8, "penalty": 0.2}]})");
    h.Set({{"A", 1}, {"B", 1}, {"C", 1}});
    h.Drive(10, 100, [](const std::string&) { return Ok(20); },
            [](const std::string& id) { return id == "A" ? 0.95 : 0.9; });
    for (const char* id : {"A", "B", "C"}) {
      EXPECT_TRUE(h.Endpoint(id)["rules"][0]["fired"].get<bool>()) << id;
    }
  }
}

// The per-rule verdicts are recomputed when shown (not kept per endpoint): they must still be
// what the last cycle judged, before the first cycle (none) and after a reload that changed the
// rules (the old rules, until the next cycle judges with the new ones).
TEST(Model, RuleVerdictsShownAreTheLastCyclesEvenAfterAReload) {
  Harness h;
  h.Set({{"fast", 1}, {"slow", 1}});
  EXPECT_TRUE(h.Endpoint("slow")["rules"].empty()) << "no cycle has judged it yet";
  h.Drive(10, 100, [](const std::string& id) { return Ok(id == "slow" ? 100 : 20); });
  const json before = h.Endpoint("slow");
  ASSERT_EQ(before["rules"].size(), 4u);  // the default rules
  ASSERT_TRUE(before["rules"][0]["fired"].get<bool>());

  const std::string reload =
      R"({"seed": 42, "picker": {"mode": "weighted"},
          "rules": [{"metric": "error_rate", "threshold": 0.5, "penalty": 0.4}]})";
  ASSERT_EQ(wt_engine_reload(h.engine(), reload.data(), reload.size()), WT_OK) << wt_last_error();
  const json after_reload = h.Endpoint("slow");
  EXPECT_EQ(after_reload["rules"], before["rules"]);
  EXPECT_DOUBLE_EQ(after_reload["penalty"].get<double>(), 0.3);

  h.Drive(5, 100, [](const std::string& id) { return Ok(id == "slow" ? 100 : 20); });
  const json next = h.Endpoint("slow");
  ASSERT_EQ(next["rules"].size(), 1u);
  EXPECT_EQ(next["rules"][0]["metric"], "error_rate");
  EXPECT_FALSE(next["rules"][0]["fired"].get<bool>());
  EXPECT_DOUBLE_EQ(next["penalty"].get<double>(), 0.0);
}

TEST(Model, NewEndpointsSlowStartButTheFirstSetDoesNot) {
  Harness h(R"({"seed": 5, "picker": {"mode": "weighted"}, "slow_start": {"window_ms": 20000}})");
  h.Set({{"A", 1}, {"B", 1}});
  EXPECT_FALSE(h.Endpoint("A")["slow_start"].get<bool>());
  h.Drive(5, 100, [](const std::string&) { return Ok(); });
  h.Set({{"A", 1}, {"B", 1}, {"C", 1}});
  json c = h.Endpoint("C");
  EXPECT_TRUE(c["slow_start"].get<bool>());
  EXPECT_NEAR(c["effective_weight"].get<double>(), 0.1, 1e-9);  // min_fraction at t < 1 s
  std::vector<double> eff;
  for (int i = 0; i < 5; ++i) {
    h.Drive(5, 100, [](const std::string&) { return Ok(); });
    eff.push_back(h.Endpoint("C")["effective_weight"].get<double>());
  }
  EXPECT_TRUE(std::is_sorted(eff.begin(), eff.end()));
  EXPECT_DOUBLE_EQ(eff.back(), 1.0);
  EXPECT_FALSE(h.Endpoint("C")["slow_start"].get<bool>());
}

TEST(Model, EndpointSetChangesKeepTheStateOfEndpointsThatStay) {
  Harness h(R"({"seed": 42, "picker": {"mode": "weighted"},
                 "rules": [{"metric": "error_rate", "threshold": 0.01, "penalty": 0.5}]})");
  h.Set({{"A", 10}, {"B", 10}});
  EveryNth sick{5, WT_OUTCOME_HTTP_5XX};
  h.Drive(5, 100, [&](const std::string& id) { return id == "A" ? sick(id) : Ok(); });
  uint64_t key_b = 0;
  ASSERT_EQ(wt_service_endpoint_key(h.svc(), "B", &key_b), WT_OK);
  h.Set({{"D", 10}, {"A", 20}});  // new order, B removed, A's base doubled
  json a = h.Endpoint("A");
  EXPECT_EQ(a["index"], 1);
  EXPECT_DOUBLE_EQ(a["weight"].get<double>(), 10.0) << "half of the new base, as before";
  EXPECT_EQ(a["window"]["requests"].get<int>() > 0, true);
  EXPECT_EQ(wt_service_report_key(h.svc(), key_b, 1, WT_OUTCOME_SUCCESS), WT_ERR_STALE);
  EXPECT_EQ(h.Snapshot()["services"][0]["stale_reports"], 1);
  EXPECT_EQ(h.Count(WT_EVENT_ENDPOINT_REMOVED, "B"), 1);
  EXPECT_EQ(h.Count(WT_EVENT_ENDPOINT_ADDED, "D"), 1);
}

TEST(Model, PanicFallsBackToRoundRobinAndLeavesWhenWeightsRecover) {
  Harness h(R"({"seed": 9, "picker": {"mode": "weighted"}, "panic": {"threshold": 0.6}})");
  h.Set({{"A", 1}, {"B", 1}, {"C", 1}});
  EveryNth sick{5, WT_OUTCOME_HTTP_5XX};
  h.Drive(5, 300, [&](const std::string& id) { return sick(id); });  // all at 0.5 < 0.6
  ASSERT_EQ(h.Count(WT_EVENT_PANIC_ENTER), 1) << h.Snapshot().dump();
  EXPECT_TRUE(h.Snapshot()["services"][0]["panic"].get<bool>());
  auto picks = h.Drive(3, 300, [&](const std::string& id) { return sick(id); });
  EXPECT_EQ(picks["A"], 300);  // exact round-robin
  EXPECT_EQ(picks["B"], 300);
  EXPECT_TRUE(h.flags("A") & WT_PICK_PANIC);
  h.Drive(40, 300, [](const std::string&) { return Ok(); });
  EXPECT_EQ(h.Count(WT_EVENT_PANIC_EXIT), 1);
  EXPECT_FALSE(h.Snapshot()["services"][0]["panic"].get<bool>());
  // A reload that moves the threshold above the current weights starts a panic at once.
  const std::string low = R"({"seed": 9, "picker": {"mode": "weighted"}, "panic": {"threshold": 0.3}})";
  const std::string high = R"({"seed": 9, "picker": {"mode": "weighted"}, "panic": {"threshold": 0.6}})";
  ASSERT_EQ(wt_engine_reload(h.engine(), low.data(), low.size()), WT_OK);
  h.Drive(5, 300, [&](const std::string& id) { return sick(id); });
  ASSERT_EQ(h.Count(WT_EVENT_PANIC_ENTER), 1) << "weights of 0.5 are not below 0.3";
  ASSERT_EQ(wt_engine_reload(h.engine(), high.data(), high.size()), WT_OK);
  EXPECT_EQ(h.Count(WT_EVENT_PANIC_ENTER), 2);
  EXPECT_EQ(h.events().back().type, WT_EVENT_PANIC_ENTER);
  EXPECT_TRUE(h.Snapshot()["services"][0]["panic"].get<bool>());
}

}  // namespace
}  // namespace weighted::testing
