// The published traffic share and the picker's evidence: what the traffic did in the last cycle,
// read from the snapshot, Prometheus and the events, must be what the picks were.
#include <functional>
#include <map>
#include <string>

#include "harness.h"

namespace weighted::testing {
namespace {

constexpr const char* kLoadAware =
    R"({"seed": 5, "slow_start": {"window_ms": 0}, "picker": {"mode": "load_aware"}})";

std::string Prometheus(wt_engine* engine) {
  char* text = nullptr;
  EXPECT_EQ(wt_engine_prometheus(engine, &text, nullptr), WT_OK) << wt_last_error();
  std::string s = text ? text : "";
  wt_free(text);
  return s;
}

// Requests at `rps` until just before the first controller cycle (5 s), then that cycle: every
// result lands in it. (A request due at exactly 5 s would come after the cycle the advance ran.)
std::map<std::string, int> DriveOneCycle(Harness& h, int rps,
                                         const std::function<Outcome(const std::string&)>& f) {
  auto picks = h.Drive(5.0 - 0.5 / rps, rps, f);
  int64_t n = 0;
  for (const auto& [id, count] : picks) n += count;
  EXPECT_EQ(n, 5 * rps - 1);
  // Request i landed at (i + 1) / rps: the clock is at n / rps.
  EXPECT_EQ(wt_engine_advance(h.engine(), 5000000000LL - 1000000000LL * n / rps), WT_OK);
  return picks;
}

// The value of the sample `series` (name and labels), or -1 when the text has none.
double Sample(const std::string& text, const std::string& series) {
  const size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

TEST(Share, IsTheLastCyclesResultsNotTheWeights) {
  Harness h(kLoadAware);
  h.Set({{"ok", 1}, {"bad", 1}});
  // 5 s = one controller cycle at the default interval; the cycle at 5 s drains these results.
  auto picks = DriveOneCycle(h, 200, [](const std::string& id) {
    return id == "bad" ? Outcome{2, WT_OUTCOME_HTTP_5XX} : Ok(10);
  });
  const double total = picks["ok"] + picks["bad"];
  const json ok = h.Endpoint("ok"), bad = h.Endpoint("bad");
  EXPECT_EQ(bad["share"]["results"], picks["bad"]);
  EXPECT_DOUBLE_EQ(bad["share"]["last_cycle"].get<double>(), picks["bad"] / total);
  EXPECT_DOUBLE_EQ(ok["share"]["last_cycle"].get<double>(), picks["ok"] / total);
  // Equal weights drew both as candidates alike; the cost comparison gave "bad" little.
  EXPECT_LT(bad["share"]["last_cycle"].get<double>(), 0.1);
  EXPECT_GT(bad["picker"]["failure_share"].get<double>(), 0.5);
  EXPECT_EQ(ok["picker"]["failure_share"].get<double>(), 0.0);
  EXPECT_NEAR(ok["picker"]["latency_ms"].get<double>(), 10.0, 1e-9);
  EXPECT_EQ(ok["picker"]["inflight"], 0);

  const std::string prom = Prometheus(h.engine());
  EXPECT_DOUBLE_EQ(Sample(prom, R"(weighted_endpoint_share{service="svc",endpoint="bad"})"),
                   picks["bad"] / total)
      << prom;
  EXPECT_DOUBLE_EQ(
      Sample(prom, R"(weighted_endpoint_picker_failure_share{service="svc",endpoint="bad"})"),
      bad["picker"]["failure_share"].get<double>());
}

TEST(Share, EventsExplainAWeightWithTheShareAndThePickersEvidence) {
  Harness h(kLoadAware);
  h.Set({{"ok", 1}, {"bad", 1}});
  DriveOneCycle(h, 200, [](const std::string& id) {
    return id == "bad" ? Outcome{2, WT_OUTCOME_HTTP_5XX} : Ok(10);
  });
  const json bad = h.Endpoint("bad");
  bool seen = false;
  for (const auto& e : h.events()) {
    // Failing every request, it is isolated at once (the graded error rule reaches 1).
    if (e.endpoint != "bad" || (e.type != WT_EVENT_WEIGHT_CHANGED && e.type != WT_EVENT_ISOLATED)) {
      continue;
    }
    const json reason = json::parse(e.reason);
    // Events print 6 significant digits.
    EXPECT_NEAR(reason["share"].get<double>(), bad["share"]["last_cycle"].get<double>(), 1e-6);
    EXPECT_NEAR(reason["picker"]["failure_share"].get<double>(),
                bad["picker"]["failure_share"].get<double>(), 1e-6);
    EXPECT_EQ(reason["rules"][0]["metric"], "error_rate") << e.reason;
    seen = true;
  }
  EXPECT_TRUE(seen) << "the error rule cuts bad at the cycle";
}

TEST(Share, TheWeightedModeHasNoPickerEvidenceAndItsShareFollowsTheWeights) {
  Harness h;  // weighted picker
  h.Set({{"a", 3}, {"b", 1}});
  auto picks = DriveOneCycle(h, 400, [](const std::string&) { return Ok(10); });
  const json a = h.Endpoint("a");
  EXPECT_TRUE(a["picker"].is_null());
  EXPECT_DOUBLE_EQ(a["share"]["last_cycle"].get<double>(), picks["a"] / 1999.0);
  EXPECT_NEAR(a["share"]["last_cycle"].get<double>(), 0.75, 0.03);
  const std::string prom = Prometheus(h.engine());
  EXPECT_EQ(Sample(prom, R"(weighted_endpoint_picker_failure_share{service="svc",endpoint="a"})"),
            -1)
      << "no picker samples without a load-aware picker";
  EXPECT_DOUBLE_EQ(Sample(prom, R"(weighted_endpoint_share{service="svc",endpoint="a"})"),
                   picks["a"] / 1999.0);
}

TEST(Share, AnIdleCycleHasNoShare) {
  Harness h(kLoadAware);
  h.Set({{"a", 1}, {"b", 1}});
  DriveOneCycle(h, 100, [](const std::string&) { return Ok(10); });
  EXPECT_EQ(h.Endpoint("a")["share"]["results"].get<int>() + h.Endpoint("b")["share"]["results"].get<int>(), 499);
  ASSERT_EQ(wt_engine_advance(h.engine(), 5000000000LL), WT_OK);
  EXPECT_EQ(h.Endpoint("a")["share"]["last_cycle"], 0.0);
  EXPECT_EQ(h.Endpoint("a")["share"]["results"], 0);
}

}  // namespace
}  // namespace weighted::testing
