// The error budget (budget.*): its controller step by step (model/budget.h), then through the C
// API on the manual clock: the price it publishes moves traffic, an unmeetable budget reports
// itself, a budget that is off changes nothing, bad settings name their key, and the snapshot
// and the Prometheus text carry it.
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/config.h"
#include "harness.h"
#include "model/budget.h"

namespace weighted::testing {
namespace {

constexpr int64_t kSecond = 1000000000;

Config Budget(double max_error_rate, const std::string& extra = "") {
  Config c;
  const std::string text =
      R"({"budget": {"max_error_rate": )" + std::to_string(max_error_rate) + extra + "}}";
  const Status s = ParseConfig(text, &c);
  EXPECT_TRUE(s.ok()) << s.message();
  return c;
}

// ---- the controller alone ----

// A 1% budget after a full raise (3% failing: x2) and a worse window after it (8%): the
// controller searches for the price with the fewest errors, from a double step below the raise.
BudgetState InTheSearch(const Config& c) {
  BudgetState s;
  StepBudget(c, {1000, 30, 0.2}, &s);
  StepBudget(c, {1000, 80, 0.2}, &s);
  return s;
}

TEST(BudgetController, StartsAtTheConfiguredErrorCostAndRaisesItOverBudget) {
  const Config c = Budget(0.01);
  BudgetState s;
  // 5% errors against a 1% budget (target 0.75%): the price goes up, by at most kBudgetMaxRaise.
  EXPECT_TRUE(StepBudget(c, {1000, 50, 0.15}, &s));  // met -> not met: an event
  EXPECT_GT(s.price, c.picker.error_cost);
  EXPECT_LE(s.price, c.picker.error_cost * kBudgetMaxRaise);
  EXPECT_FALSE(s.met);
  EXPECT_DOUBLE_EQ(s.observed, 0.05);
  const double after_one = s.price;
  // Still over, fewer errors: the raise is buying them down. No second event.
  EXPECT_FALSE(StepBudget(c, {1000, 30, 0.15}, &s));
  EXPECT_GT(s.price, after_one);
}

TEST(BudgetController, UnderBudgetLowersThePriceWhileItIsALever) {
  const Config c = Budget(0.04);
  BudgetState s;
  // 1% errors against 4% (target 3.2%: 10 000 results a window, whose sampling noise is 0.2
  // points): down, by at most kBudgetMaxCut per cycle.
  StepBudget(c, {10000, 100, 0.15}, &s);
  EXPECT_LT(s.price, c.picker.error_cost);
  EXPECT_GE(s.price, c.picker.error_cost / kBudgetMaxCut);
  EXPECT_TRUE(s.met);
  // Near the target, a small step: the integral on log(price) is proportional to the ratio.
  BudgetState near;
  StepBudget(c, {10000, 270, 0.15}, &near);
  EXPECT_LT(near.price, c.picker.error_cost);
  EXPECT_GT(near.price, s.price);
}

TEST(BudgetController, AntiWindupHoldsThePriceWhileNoEndpointFails) {
  const Config c = Budget(0.01);
  BudgetState s;
  // A healthy spell: no failure share anywhere, so the price moves no pick and is not run down
  // (the next fault would otherwise start at the floor).
  for (int i = 0; i < 50; ++i) StepBudget(c, {1000, 0, 0.0}, &s);
  EXPECT_DOUBLE_EQ(s.price, c.picker.error_cost);
  // A failure share too small for this price to matter (500 x 0.001 < 1): still held.
  StepBudget(c, {1000, 0, 0.001}, &s);
  EXPECT_DOUBLE_EQ(s.price, c.picker.error_cost);
  // No results at all: no evidence, nothing moves, met stays.
  StepBudget(c, {0, 0, 0.5}, &s);
  EXPECT_DOUBLE_EQ(s.price, c.picker.error_cost);
  EXPECT_TRUE(s.met);
}

TEST(BudgetController, BoundsHold) {
  const Config c = Budget(0.01, R"(, "min_error_cost": 20, "max_error_cost": 4000)");
  BudgetState s;
  for (int i = 0; i < 30; ++i) StepBudget(c, {1000, 0, 0.5}, &s);
  EXPECT_DOUBLE_EQ(s.price, 20);
  // Errors over the budget that each raise buys down (a fifth fewer a window): up to the bound.
  for (int i = 0; i < 10; ++i) StepBudget(c, {1000, uint64_t(900 * std::pow(0.8, i)), 0.9}, &s);
  EXPECT_DOUBLE_EQ(s.price, 4000);
  // The start is clamped too.
  const Config low = Budget(0.01, R"(, "max_error_cost": 100)");
  BudgetState t;
  StepBudget(low, {0, 0, 0}, &t);
  EXPECT_DOUBLE_EQ(t.price, 100);
  EXPECT_DOUBLE_EQ(EffectiveErrorCost(low, BudgetState{}), 100);
}

TEST(BudgetController, AnUnmeetableBudgetMinimisesErrorsAndSaysSo) {
  const Config c = Budget(0.01);
  BudgetState s;
  // Every endpoint fails 5% whatever the price: no price meets 1%. Raises that double the price
  // and leave the errors where they were buy nothing: the controller minimises the errors
  // instead, from a double step below where the raises began, and says so.
  StepBudget(c, {1000, 50, 0.05}, &s);
  EXPECT_DOUBLE_EQ(s.price, 1000);
  EXPECT_FALSE(s.searching);
  StepBudget(c, {1000, 50, 0.05}, &s);
  EXPECT_TRUE(s.searching);
  EXPECT_TRUE(s.limited);
  EXPECT_FALSE(s.met);
  EXPECT_DOUBLE_EQ(s.price, 500 / (kBudgetSearchStep * kBudgetSearchStep));
  // Back under the budget: met again, not limited, the search over.
  EXPECT_TRUE(StepBudget(c, {1000, 1, 0.05}, &s));
  EXPECT_TRUE(s.met);
  EXPECT_FALSE(s.limited);
  EXPECT_FALSE(s.searching);
}

TEST(BudgetController, AtItsBoundThePriceSaysTheBudgetCannotBeMet) {
  // Errors that fall with each raise but never reach the budget: the price climbs to its bound
  // (as few errors as the picker can make) and says so.
  const Config c = Budget(0.01, R"(, "max_error_cost": 4000)");
  BudgetState s;
  double failures = 90;
  while (!s.limited && failures > 20) StepBudget(c, {1000, uint64_t(failures), 0.1}, &s), failures *= 2.0 / 3;
  EXPECT_TRUE(s.limited);
  EXPECT_FALSE(s.searching);
  EXPECT_DOUBLE_EQ(s.price, 4000);
}

TEST(BudgetController, RaisesWithFewFailuresAreNoEvidenceTheyBuyNothing) {
  // A tight budget sees a handful of failures a window: flat windows there are noise, so the
  // raises go on.
  const Config c = Budget(0.005);
  BudgetState s;
  for (int i = 0; i < 3; ++i) StepBudget(c, {1000, 10, 0.15}, &s);
  EXPECT_FALSE(s.searching);
  EXPECT_DOUBLE_EQ(s.price, 4000);
}

TEST(BudgetController, WhenARaiseMakesErrorsWorseItMinimisesThemInstead) {
  // The healthy endpoints are full: a higher price sends them more than they can take, and
  // their queues fail. A full raise followed by a worse window turns the controller round, a
  // double step below the price before the raise.
  const Config c = Budget(0.01);
  BudgetState s;
  StepBudget(c, {1000, 30, 0.2}, &s);  // 3%: a full raise (x2)
  ASSERT_DOUBLE_EQ(s.price, 1000);
  StepBudget(c, {1000, 80, 0.2}, &s);  // 8% after it: worse
  EXPECT_TRUE(s.searching);
  EXPECT_TRUE(s.limited);
  EXPECT_DOUBLE_EQ(s.price, 125);
  // Within the target (0.21%: 1% less 2.5 standard errors of 1000 results): the search ends.
  StepBudget(c, {1000, 1, 0.2}, &s);
  EXPECT_FALSE(s.searching);
  EXPECT_FALSE(s.limited);
}

TEST(BudgetController, TheSearchSettlesAtTheBestWindowItSaw) {
  const Config c = Budget(0.01);
  BudgetState s = InTheSearch(c);
  ASSERT_TRUE(s.searching);
  ASSERT_DOUBLE_EQ(s.price, 125);
  const auto step = [&](uint64_t failures) {
    StepBudget(c, {1000, failures, 0.2}, &s);
    return s.price;
  };
  EXPECT_DOUBLE_EQ(step(60), 62.5);  // the first window: the best so far; on down
  EXPECT_DOUBLE_EQ(step(50), 31.25);  // better: on down
  // Clearly worse than the best (by more than a standard error): back to the best, turned
  // round with a smaller step.
  EXPECT_DOUBLE_EQ(step(70), 62.5);
  EXPECT_NEAR(step(52), 62.5 * std::sqrt(2.0), 1e-9);  // the best again (a fresh measure): up
  EXPECT_DOUBLE_EQ(step(80), 62.5);                     // worse: back, round, smaller
  EXPECT_NEAR(step(50), 62.5 / std::pow(2.0, 0.25), 1e-9);
  EXPECT_DOUBLE_EQ(step(70), 62.5);  // the step is now below kBudgetSearchMinStep: hold there
  EXPECT_DOUBLE_EQ(step(58), 62.5);  // flat at the best: it holds
  EXPECT_DOUBLE_EQ(step(45), 62.5);
  EXPECT_TRUE(s.searching);
  // Clearly worse at the held price (the load moved): the search starts again, down first.
  EXPECT_DOUBLE_EQ(step(90), 31.25);
}

TEST(BudgetController, TheSearchKeepsTheFailureTermALever) {
  // While minimising errors the price does not fall below kBudgetSearchMinTerm / the largest
  // failure share: lower, the failing endpoint takes traffic by its latency alone.
  const Config c = Budget(0.01);
  BudgetState s = InTheSearch(c);
  ASSERT_TRUE(s.searching);
  for (int i = 0; i < 6; ++i) StepBudget(c, {1000, uint64_t(60 - 2 * i), 0.2}, &s);
  EXPECT_DOUBLE_EQ(s.price, kBudgetSearchMinTerm / 0.2);
}

TEST(BudgetController, WhereErrorsAreFlatInThePriceItCutsFaster) {
  // 10% budget (target 8%), 10 000 results a window. A first cut of 4% (ratio 0.5) by
  // 0.5^0.7; then the same window twice: once the errors barely moved (flat: the cut's measured
  // elasticity is small, the next cut large), once they moved as 1 / price.
  const Config c = Budget(0.10);
  BudgetState flat, steep;
  for (BudgetState* s : {&flat, &steep}) StepBudget(c, {10000, 400, 0.15}, s);
  const double first = 500 * std::pow(0.5, kBudgetCutGain);
  ASSERT_NEAR(flat.price, first, 1e-9);
  StepBudget(c, {10000, 420, 0.15}, &flat);
  StepBudget(c, {10000, uint64_t(std::lround(400 * 500 / first)), 0.15}, &steep);
  EXPECT_NEAR(flat.price, first / kBudgetMaxCut, 1e-9);  // (0.525)^4 < 1/4: the cap
  EXPECT_GT(steep.price, first * 0.75);                  // ~0.8^1: a small cut
  // A window with few failures measures nothing: the 0.7 gain.
  BudgetState few;
  StepBudget(c, {500, 18, 0.15}, &few);
  const double p = few.price;
  ASSERT_LE(p, 500 / kBudgetMeasureStep);
  StepBudget(c, {500, 19, 0.15}, &few);
  const double ratio = (19.0 / 500) / BudgetTarget(c.budget, 500);
  EXPECT_NEAR(few.price, p * std::pow(ratio, kBudgetCutGain), 1e-9);
}

TEST(BudgetController, AWindowClearlyFarUnderTheTargetCutsByAnEighth) {
  const Config c = Budget(0.10);
  BudgetState far, noisy;
  // 10 failures in 10 000 (0.1% against 8%: even two standard errors up, under a tenth).
  StepBudget(c, {10000, 10, 0.15}, &far);
  EXPECT_DOUBLE_EQ(far.price, 500 / kBudgetFarMaxCut);
  // 70 in 10 000: 0.7%, but 0.88% two standard errors up: a quarter.
  StepBudget(c, {10000, 70, 0.15}, &noisy);
  EXPECT_DOUBLE_EQ(noisy.price, 500 / kBudgetMaxCut);
}

TEST(BudgetController, ALooseBudgetLowersThePricePastTheFailureTermsKnee) {
  // An endpoint failing 15% against a 10% budget: lowering the price raises the errors, so the
  // feedback stops the descent where the budget is; errors that stay under the target let it
  // run to min_error_cost, past price x share = 1.
  const Config c = Budget(0.10);
  BudgetState s;
  for (int i = 0; i < 40; ++i) StepBudget(c, {10000, 600, 0.15}, &s);
  EXPECT_DOUBLE_EQ(s.price, c.budget.min_error_cost);
  // One failing 5%, under the target: it is no lever below its knee (1 / 0.05 = 20).
  BudgetState t;
  for (int i = 0; i < 30; ++i) StepBudget(c, {10000, 400, 0.05}, &t);
  EXPECT_GE(t.price, 1 / 0.05 / kBudgetMaxCut);
  EXPECT_LT(t.price, 1 / 0.05);
  // No endpoint fails enough to matter even at picker.error_cost: the price goes back to it,
  // and the next fault starts where a fault without a budget would.
  StepBudget(c, {10000, 1, 0.001}, &s);
  EXPECT_DOUBLE_EQ(s.price, c.picker.error_cost);
}

TEST(BudgetController, TightBudgetsAimBelowTheirSamplingNoise) {
  Config::Budget b;
  b.target_fraction = 0.8;
  b.max_error_rate = 0.10;  // 2.5 standard errors of 10 000 requests: 0.75 points; 80% is lower
  EXPECT_DOUBLE_EQ(BudgetTarget(b, 10000), 0.08);
  EXPECT_NEAR(BudgetTarget(b, 1000), 0.10 - 2.5 * std::sqrt(0.1 * 0.9 / 1000), 1e-12);
  b.max_error_rate = 0.005;  // 2.5 x sqrt(0.005 x 0.995 / 1000) = 0.56 points: the floor
  EXPECT_DOUBLE_EQ(BudgetTarget(b, 1000), 0.0005);
  EXPECT_NEAR(BudgetTarget(b, 10000), 0.005 - 2.5 * std::sqrt(0.005 * 0.995 / 10000), 1e-12);
}

TEST(BudgetController, TheWindowSpansWholeCycles) {
  // 12 s over 5-s cycles: three cycles.
  const Config c = Budget(0.01, R"(, "window_ms": 12000)");
  EXPECT_EQ(BudgetWindowCycles(c), 3u);
  BudgetState s;
  StepBudget(c, {1000, 30, 0.1}, &s);
  StepBudget(c, {1000, 0, 0.1}, &s);
  StepBudget(c, {1000, 0, 0.1}, &s);
  EXPECT_EQ(s.window_results, 3000u);
  EXPECT_EQ(s.window_failures, 30u);
  StepBudget(c, {1000, 0, 0.1}, &s);  // the failing cycle leaves the window
  EXPECT_EQ(s.window_failures, 0u);
  EXPECT_DOUBLE_EQ(s.observed, 0.0);
}

TEST(BudgetController, OffUsesTheConfiguredErrorCost) {
  Config c;
  c.picker.error_cost = 123;
  BudgetState s;
  s.on = true;
  s.price = 7;
  EXPECT_DOUBLE_EQ(EffectiveErrorCost(c, s), 123);
}

// ---- through the C API ----

// Three endpoints, "leaky" failing one request in five; the others answer in 20 ms.
Outcome Leaky(const std::string& id, int* n) {
  if (id == "leaky" && (*n)++ % 5 == 0) return {5, WT_OUTCOME_HTTP_5XX};
  return Ok(id == "leaky" ? 5 : 20);
}

const json& Svc(const json& snap) { return snap["services"][0]; }

std::string Engine(const std::string& budget) {
  // The error rule off: the budget's price alone decides the leaky endpoint's share.
  return R"({"seed": 7, "rules": [], )" + budget + "}";
}

TEST(Budget, TheLooserTheBudgetTheMoreTrafficALeakyEndpointKeeps) {
  std::map<std::string, int> tight_picks, loose_picks;
  for (double budget : {0.005, 0.15}) {
    Harness h(Engine(R"("budget": {"max_error_rate": )" + std::to_string(budget) + "}"));
    h.Set({{"a", 1}, {"b", 1}, {"leaky", 1}});
    int n = 0;
    h.Drive(60, 200, [&](const std::string& id) { return Leaky(id, &n); });
    auto picks = h.Drive(20, 200, [&](const std::string& id) { return Leaky(id, &n); });
    const json b = Svc(h.Snapshot())["budget"];
    ASSERT_TRUE(b.is_object());
    EXPECT_DOUBLE_EQ(b["max_error_rate"].get<double>(), budget);
    (budget < 0.01 ? tight_picks : loose_picks) = picks;
    if (budget < 0.01) {
      EXPECT_GT(b["error_cost"].get<double>(), 500) << b;  // raised from picker.error_cost
    } else {
      EXPECT_LT(b["error_cost"].get<double>(), 500) << b;  // lowered
      EXPECT_TRUE(b["met"].get<bool>()) << b;
    }
  }
  EXPECT_GT(loose_picks["leaky"], 3 * tight_picks["leaky"]);
}

TEST(Budget, AnUnmeetableBudgetIsAnEventAndASnapshotFieldAndComesBack) {
  Harness h(Engine(R"("budget": {"max_error_rate": 0.01})"));
  h.Set({{"a", 1}, {"b", 1}});
  int n = 0;
  // Every endpoint fails 10%.
  h.Drive(60, 200, [&](const std::string&) {
    return n++ % 10 == 0 ? Outcome{20, WT_OUTCOME_HTTP_5XX} : Ok();
  });
  json b = Svc(h.Snapshot())["budget"];
  EXPECT_FALSE(b["met"].get<bool>()) << b;
  EXPECT_TRUE(b["limited"].get<bool>()) << b;
  EXPECT_NEAR(b["observed_error_rate"].get<double>(), 0.1, 0.02) << b;
  // Raising the price bought nothing: the controller minimises errors, not at the bound.
  EXPECT_LT(b["error_cost"].get<double>(), 100000) << b;
  ASSERT_EQ(h.Count(WT_EVENT_BUDGET_MISSED), 1);
  for (const auto& e : h.events()) {
    if (e.type == WT_EVENT_BUDGET_MISSED) {
      const json r = json::parse(e.reason);
      EXPECT_DOUBLE_EQ(r["max_error_rate"].get<double>(), 0.01);
      EXPECT_GT(r["observed_error_rate"].get<double>(), 0.01);
    }
  }
  // The endpoints heal: the next window is within the budget, an event says so.
  h.Drive(10, 200, [](const std::string&) { return Ok(); });
  b = Svc(h.Snapshot())["budget"];
  EXPECT_TRUE(b["met"].get<bool>()) << b;
  EXPECT_FALSE(b["limited"].get<bool>()) << b;
  EXPECT_EQ(h.Count(WT_EVENT_BUDGET_MET), 1);
}

TEST(Budget, OffChangesNothing) {
  // The same traffic on an engine without the section and one whose budget is 0 with every
  // other budget key moved: the same picks, one by one, and no budget in the snapshot.
  Harness plain(Engine(R"("picker": {"error_cost": 300})"));
  Harness off(Engine(R"("picker": {"error_cost": 300}, "budget": {"max_error_rate": 0,
      "window_ms": 20000, "target_fraction": 0.1, "min_error_cost": 1000, "max_error_cost": 2000})"));
  std::vector<std::string> seen[2];
  int i = 0;
  for (Harness* h : {&plain, &off}) {
    h->Set({{"a", 1}, {"b", 1}, {"leaky", 1}});
    int n = 0;
    h->Drive(30, 200, [&](const std::string& id) {
      seen[i].push_back(id);
      return Leaky(id, &n);
    });
    EXPECT_TRUE(Svc(h->Snapshot())["budget"].is_null());
    ++i;
  }
  EXPECT_EQ(seen[0], seen[1]);
  EXPECT_EQ(plain.Count(WT_EVENT_BUDGET_MISSED) + off.Count(WT_EVENT_BUDGET_MISSED), 0);
}

TEST(Budget, PrometheusCarriesTheBudgetOnlyWhileOneIsSet) {
  for (bool on : {false, true}) {
    Harness h(Engine(on ? R"("budget": {"max_error_rate": 0.02})" : R"("budget": {})"));
    h.Set({{"a", 1}, {"leaky", 1}});
    int n = 0;
    h.Drive(10, 200, [&](const std::string& id) { return Leaky(id, &n); });
    char* text = nullptr;
    ASSERT_EQ(wt_engine_prometheus(h.engine(), &text, nullptr), WT_OK);
    const std::string prom = text;
    wt_free(text);
    const bool rows = prom.find("weighted_service_error_budget{service=\"svc\"} 0.02") !=
                      std::string::npos;
    EXPECT_EQ(rows, on) << prom;
    EXPECT_EQ(prom.find("weighted_service_error_budget_met{service=\"svc\"}") != std::string::npos, on);
    EXPECT_EQ(prom.find("weighted_service_error_cost{service=\"svc\"}") != std::string::npos, on);
    EXPECT_EQ(prom.find("weighted_service_error_budget_observed_rate{service=\"svc\"}") !=
                  std::string::npos, on);
  }
}

// ---- bad settings ----

std::string ConfigError(const std::string& text) {
  wt_engine* e = nullptr;
  EXPECT_NE(wt_engine_create(text.data(), text.size(), WT_CLOCK_MANUAL, &e), WT_OK) << text;
  if (e) wt_engine_destroy(e);
  return wt_last_error();
}

TEST(Budget, BadSettingsNameTheirKeyAndWhy) {
  std::string m = ConfigError(R"({"budget": {"max_error_rate": 1}})");
  EXPECT_NE(m.find("/budget/max_error_rate"), std::string::npos) << m;
  m = ConfigError(R"({"budget": {"max_error_rate": -0.1}})");
  EXPECT_NE(m.find("/budget/max_error_rate"), std::string::npos) << m;
  m = ConfigError(R"({"budget": {"min_error_cost": 0}})");
  EXPECT_NE(m.find("/budget/min_error_cost"), std::string::npos) << m;
  m = ConfigError(R"({"budget": {"min_error_cost": 600, "max_error_cost": 500}})");
  EXPECT_NE(m.find("/budget/min_error_cost"), std::string::npos) << m;
  EXPECT_NE(m.find("above budget.max_error_cost"), std::string::npos) << m;
  m = ConfigError(R"({"picker": {"mode": "weighted"}, "budget": {"max_error_rate": 0.01}})");
  EXPECT_NE(m.find("/budget/max_error_rate"), std::string::npos) << m;
  EXPECT_NE(m.find("weighted"), std::string::npos) << m;
  m = ConfigError(R"({"profile": "article", "budget": {"max_error_rate": 0.01}})");
  EXPECT_NE(m.find("/budget/max_error_rate"), std::string::npos) << m;
  m = ConfigError(R"({"controller": {"interval_ms": 10}, "budget": {"window_ms": 20000}})");
  EXPECT_NE(m.find("/budget/window_ms"), std::string::npos) << m;
  m = ConfigError(R"({"budget": {"max_error_rat": 0.01}})");
  EXPECT_NE(m.find("max_error_rate"), std::string::npos) << m;  // the hint
}

TEST(Budget, AReloadThatRefusesTheBudgetKeepsTheOldOne) {
  Harness h(Engine(R"("budget": {"max_error_rate": 0.02})"));
  h.Set({{"a", 1}, {"leaky", 1}});
  int n = 0;
  h.Drive(10, 200, [&](const std::string& id) { return Leaky(id, &n); });
  const json before = Svc(h.Snapshot())["budget"];
  const std::string bad = R"({"budget": {"max_error_rate": 2}})";
  EXPECT_EQ(wt_engine_reload(h.engine(), bad.data(), bad.size()), WT_ERR_CONFIG_INVALID);
  EXPECT_EQ(Svc(h.Snapshot())["budget"], before);
}

}  // namespace
}  // namespace weighted::testing
