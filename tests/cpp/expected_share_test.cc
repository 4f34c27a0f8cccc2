// The expected share: what the published model predicts each endpoint's share of picks to be
// over the next cycle, read from the snapshot, Prometheus and the history, must follow from the
// weights and the picker's rule, and the next cycle's traffic must bear it out.
#include <cmath>
#include <map>
#include <string>

#include "harness.h"

namespace weighted::testing {
namespace {

constexpr const char* kLoadAware =
    R"({"seed": 5, "slow_start": {"window_ms": 0}, "picker": {"mode": "load_aware"}})";

double Expected(Harness& h, const std::string& id) {
  return h.Endpoint(id)["share"]["expected"].get<double>();
}

// Requests at `rps` up to and including the controller cycle `seconds` from now (a multiple of
// the 5-s interval from a cycle boundary).
std::map<std::string, int> DriveCycles(Harness& h, int seconds, int rps,
                                       const std::function<Outcome(const std::string&)>& f) {
  auto picks = h.Drive(seconds - 0.5 / rps, rps, f);
  int64_t n = 0;
  for (const auto& [id, count] : picks) n += count;
  // Request i landed at (i + 1) / rps: the clock is at n / rps.
  EXPECT_EQ(wt_engine_advance(h.engine(), 1000000000LL * seconds - 1000000000LL * n / rps), WT_OK);
  return picks;
}

double Sum(Harness& h) {
  double sum = 0;
  const json snap = h.Snapshot();
  for (const auto& ep : snap["services"][0]["endpoints"]) {
    sum += ep["share"]["expected"].get<double>();
  }
  return sum;
}

TEST(ExpectedShare, TheWeightedModeExpectsTheNormalisedEffectiveWeights) {
  Harness h(R"({"seed": 42, "picker": {"mode": "weighted"}, "slow_start": {"window_ms": 20000}})");
  h.Set({{"a", 3}, {"b", 1}});
  // Before any traffic: the weights alone.
  EXPECT_DOUBLE_EQ(Expected(h, "a"), 0.75);
  EXPECT_DOUBLE_EQ(Expected(h, "b"), 0.25);
  // A newcomer slow-starts: its share is its effective weight's, not its base weight's.
  h.Set({{"a", 3}, {"b", 1}, {"c", 2}});
  const json c = h.Endpoint("c");
  const double eff_c = c["effective_weight"].get<double>();
  EXPECT_LT(eff_c, 2.0);
  EXPECT_DOUBLE_EQ(c["share"]["expected"].get<double>(), eff_c / (3 + 1 + eff_c));
  EXPECT_NEAR(Sum(h), 1.0, 1e-12);
}

TEST(ExpectedShare, IsAPredictionFromTheNewWeightsNotTheLastCyclesShare) {
  // The weighted picker, and a flat error rule: the cut is a known half whatever the rate.
  Harness h(R"({"seed": 42, "picker": {"mode": "weighted"},
               "rules": [{"metric": "error_rate", "threshold": 0.01, "penalty": 0.5}]})");
  h.Set({{"ok", 1}, {"bad", 1}});
  auto picks = DriveCycles(h, 5, 200, [](const std::string& id) {
    return id == "bad" ? Outcome{20, WT_OUTCOME_HTTP_5XX} : Ok(20);
  });
  const json bad = h.Endpoint("bad");
  // The cycle cut "bad" (the error rule: penalty 0.5): the last cycle had it at about half, the
  // next one is expected at its new weight's share.
  EXPECT_NEAR(bad["share"]["last_cycle"].get<double>(), 0.5, 0.06);
  const double w = bad["effective_weight"].get<double>();
  ASSERT_NEAR(w, 0.5, 1e-9);
  EXPECT_DOUBLE_EQ(bad["share"]["expected"].get<double>(), w / (1 + w));
  // And the next cycle bears it out.
  DriveCycles(h, 5, 200, [](const std::string& id) {
    return id == "bad" ? Outcome{20, WT_OUTCOME_HTTP_5XX} : Ok(20);
  });
  EXPECT_NEAR(h.Endpoint("bad")["share"]["last_cycle"].get<double>(), 1.0 / 3, 0.05);
}

TEST(ExpectedShare, TwoChoicesOnEqualCostsGiveEqualShares) {
  Harness h(kLoadAware);
  h.Set({{"a", 1}, {"b", 1}, {"c", 1}});
  DriveCycles(h, 5, 300, [](const std::string&) { return Ok(10); });
  for (const char* id : {"a", "b", "c"}) EXPECT_NEAR(Expected(h, id), 1.0 / 3, 0.01) << id;
  EXPECT_NEAR(Sum(h), 1.0, 1e-9);
}

TEST(ExpectedShare, TwoChoicesFollowTheCostAndTheInflightFeedback) {
  Harness h(kLoadAware);
  h.Set({{"fast", 1}, {"slow", 1}});
  DriveCycles(h, 5, 300, [](const std::string& id) { return Ok(id == "slow" ? 40 : 10); });
  // Two endpoints: every comparison is {fast, slow}. Without queues the cheaper one would win
  // all of them (only keep-alive picks would reach "slow"); 300 requests/s at 10-40 ms keeps a
  // few in flight, and the comparison then hands "slow" the picks where "fast" is busier.
  const double slow = Expected(h, "slow");
  EXPECT_GT(slow, 0.01);
  EXPECT_LT(slow, 0.5);
  EXPECT_LT(slow, Expected(h, "fast"));
}

TEST(ExpectedShare, AFailingEndpointIsExpectedToGetLittleAndTheNextCycleAgrees) {
  Harness h(kLoadAware);
  h.Set({{"ok1", 1}, {"ok2", 1}, {"bad", 1}});
  auto behaviour = [](const std::string& id) {
    return id == "bad" ? Outcome{2, WT_OUTCOME_HTTP_5XX} : Ok(10);
  };
  DriveCycles(h, 5, 300, behaviour);
  const double expected = Expected(h, "bad");
  EXPECT_LT(expected, 0.05) << h.Endpoint("bad").dump();
  EXPECT_GT(expected, 0.0) << "keep-alive picks still reach it";
  DriveCycles(h, 5, 300, behaviour);
  EXPECT_NEAR(h.Endpoint("bad")["share"]["last_cycle"].get<double>(), expected, 0.02);
}

TEST(ExpectedShare, AnIsolatedEndpointIsExpectedToGetItsProbeShare) {
  // An error rule heavy enough to isolate at once.
  Harness h(R"({"seed": 3, "picker": {"mode": "load_aware"}, "isolation": {"probe_share": 0.02},
               "rules": [{"metric": "error_rate", "threshold": 0.01, "penalty": 1.0}]})");
  h.Set({{"ok", 1}, {"down", 1}});
  auto behaviour = [](const std::string& id) {
    return id == "down" ? Outcome{1, WT_OUTCOME_CONNECT_ERROR} : Ok(10);
  };
  DriveCycles(h, 5, 200, behaviour);
  ASSERT_EQ(h.Endpoint("down")["state"], "isolated");
  // isolation.probe_share (0.02) of its base beside "ok"'s weight 1; the probe floor (1/s at
  // ~200/s) is lower.
  EXPECT_NEAR(Expected(h, "down"), 0.02 / 1.02, 1e-6);
  EXPECT_NEAR(Expected(h, "ok"), 1 / 1.02, 1e-6);
  auto picks = DriveCycles(h, 5, 200, behaviour);
  EXPECT_NEAR(picks["down"] / 1000.0, 0.02 / 1.02, 0.012);
}

TEST(ExpectedShare, PanicExpectsRoundRobin) {
  // Both endpoints isolated: no weight above the panic threshold.
  Harness h(R"({"seed": 3, "picker": {"mode": "load_aware"}, "isolation": {"probe_share": 0.02},
               "rules": [{"metric": "error_rate", "threshold": 0.01, "penalty": 1.0}]})");
  h.Set({{"a", 1}, {"b", 3}});
  DriveCycles(h, 5, 200, [](const std::string&) { return Outcome{1, WT_OUTCOME_CONNECT_ERROR}; });
  ASSERT_TRUE(h.Snapshot()["services"][0]["panic"].get<bool>());
  EXPECT_DOUBLE_EQ(Expected(h, "a"), 0.5);
  EXPECT_DOUBLE_EQ(Expected(h, "b"), 0.5);
}

TEST(ExpectedShare, EndpointsOutsideTheSubsetExpectNothing) {
  Harness h(R"({"seed": 3, "picker": {"mode": "weighted"},
               "subset": {"mode": "fixed", "size": 2, "client_id": "c1"}})");
  h.Set({{"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}});
  int in = 0;
  const json snap = h.Snapshot();
  for (const auto& ep : snap["services"][0]["endpoints"]) {
    const double e = ep["share"]["expected"].get<double>();
    if (ep["in_subset"].get<bool>()) {
      ++in;
      EXPECT_DOUBLE_EQ(e, 0.5) << ep["id"];
    } else {
      EXPECT_EQ(e, 0.0) << ep["id"];
    }
  }
  EXPECT_EQ(in, 2);
}

TEST(ExpectedShare, PrometheusAndTheHistoryPublishTheSnapshotsValue) {
  Harness h;
  h.Set({{"a", 3}, {"b", 1}});
  char* text = nullptr;
  ASSERT_EQ(wt_engine_prometheus(h.engine(), &text, nullptr), WT_OK);
  const std::string prom = text;
  wt_free(text);
  EXPECT_NE(prom.find("# TYPE weighted_endpoint_expected_share gauge"), std::string::npos);
  EXPECT_NE(prom.find("weighted_endpoint_expected_share{service=\"svc\",endpoint=\"a\"} 0.75\n"),
            std::string::npos)
      << prom;
}

}  // namespace
}  // namespace weighted::testing
