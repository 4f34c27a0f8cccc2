// The server's own error rate, the fleet's view of an endpoint that no single client of many
// sees: from a load report's eps / rps, fresh within load_report.max_age_ms, shown per endpoint
// as window.server_error_rate. (The Prometheus source's error_rate query against a real
// Prometheus is tests/python/test_prometheus_source.py.)
#include <string>

#include "harness.h"
#include "stats/hot_stats.h"
#include "state_file_helpers.h"

namespace weighted::testing {
namespace {

json Window(Harness& h, const std::string& id) { return h.Endpoint(id)["window"]; }

TEST(ServerErrorRate, ComesFromTheReportsEpsOverRps) {
  Harness h(R"({"seed": 1, "load_report": {"max_age_ms": 8000}})");
  h.Set({{"a", 1}, {"b", 1}});
  uint64_t key = 0;
  ASSERT_EQ(wt_service_endpoint_key(h.svc(), "a", &key), WT_OK);
  // One client's two requests carry what the server saw of all its clients: 15% failing.
  const std::string report = "TEXT cpu_utilization=0.4, rps_fractional=2000, eps=300";
  ASSERT_EQ(wt_service_report_load_key(h.svc(), key, report.data(), report.size()), WT_OK)
      << wt_last_error();
  EXPECT_TRUE(Window(h, "a")["server_error_rate"].is_null());  // not before a cycle
  ASSERT_EQ(wt_engine_advance(h.engine(), 5 * kSecond), WT_OK);
  EXPECT_DOUBLE_EQ(Window(h, "a")["server_error_rate"].get<double>(), 0.15);
  EXPECT_TRUE(Window(h, "b")["server_error_rate"].is_null());  // never reported
  // The next cycle is 10 s after the report: older than max_age_ms, no longer the server's view.
  ASSERT_EQ(wt_engine_advance(h.engine(), 5 * kSecond), WT_OK);
  EXPECT_TRUE(Window(h, "a")["server_error_rate"].is_null());
}

// The rules read it: a client with almost no traffic to an endpoint (in a fleet of thousands,
// a request now and then) still cuts one whose server says 15% of all its requests fail.
TEST(ServerErrorRate, TheErrorRulesJudgeAnEndpointOnTheServersRate) {
  Harness h(R"({"seed": 1, "picker": {"mode": "weighted"}, "load_report": {"max_age_ms": 8000}})");
  h.Set({{"a", 1}, {"b", 1}, {"c", 1}});
  auto report = [&](const char* id, const std::string& text) {
    uint64_t key = 0;
    ASSERT_EQ(wt_service_endpoint_key(h.svc(), id, &key), WT_OK);
    ASSERT_EQ(wt_service_report_load_key(h.svc(), key, text.data(), text.size()), WT_OK)
        << wt_last_error();
  };
  report("a", "TEXT rps_fractional=2000, eps=300");
  report("b", "TEXT rps_fractional=2000, eps=2");
  ASSERT_EQ(wt_engine_advance(h.engine(), 5 * kSecond), WT_OK);
  // No client results at all, below window.min_requests: the client's own window judges nothing.
  EXPECT_FALSE(h.Endpoint("a")["known"].get<bool>());
  EXPECT_GT(h.Endpoint("a")["penalty"].get<double>(), 0);
  EXPECT_LT(h.Endpoint("a")["effective_weight"].get<double>(), 1);
  EXPECT_EQ(h.Endpoint("b")["penalty"].get<double>(), 0);  // 0.1%: under the 1% rule
  EXPECT_EQ(h.Endpoint("c")["penalty"].get<double>(), 0);  // no report, no results: unknown
  // A clean server report lifts it; a stale one is no evidence either way.
  report("a", "TEXT rps_fractional=2000, eps=0");
  ASSERT_EQ(wt_engine_advance(h.engine(), 5 * kSecond), WT_OK);
  EXPECT_EQ(h.Endpoint("a")["penalty"].get<double>(), 0);
}

// The server sees no timeouts: with a window of its own, the client's higher rate stands.
TEST(ServerErrorRate, TheClientsOwnFailuresAreAFloorUnderTheServersRate) {
  Harness h(R"({"seed": 1, "picker": {"mode": "weighted"}, "load_report": {"max_age_ms": 8000}})");
  h.Set({{"a", 1}, {"b", 1}});
  uint64_t key = 0;
  ASSERT_EQ(wt_service_endpoint_key(h.svc(), "a", &key), WT_OK);
  const std::string clean = "TEXT rps_fractional=2000, eps=0";
  ASSERT_EQ(wt_service_report_load_key(h.svc(), key, clean.data(), clean.size()), WT_OK);
  int n = 0;
  h.Drive(4.9, 100, [&](const std::string& id) {
    return id == "a" && ++n % 5 == 0 ? Outcome{10, WT_OUTCOME_TIMEOUT} : Ok(10);
  });
  ASSERT_EQ(wt_engine_advance(h.engine(), kSecond / 10), WT_OK);
  EXPECT_DOUBLE_EQ(h.Endpoint("a")["window"]["server_error_rate"].get<double>(), 0.0);
  EXPECT_GT(h.Endpoint("a")["penalty"].get<double>(), 0);
}

// And the load-aware picker prices it: the client's own answers from the endpoint are all good
// (it is one of many clients, and its few requests happened to succeed), yet its picks follow
// what the server says the endpoint fails.
TEST(ServerErrorRate, TheLoadAwarePickerPricesTheServersRate) {
  Harness h(R"({"seed": 1, "load_report": {"max_age_ms": 8000}})");
  h.Set({{"a", 1}, {"b", 1}, {"c", 1}});
  uint64_t key = 0;
  ASSERT_EQ(wt_service_endpoint_key(h.svc(), "a", &key), WT_OK);
  auto picks_of_a = [&](const std::string& report) {
    EXPECT_EQ(wt_service_report_load_key(h.svc(), key, report.data(), report.size()), WT_OK);
    EXPECT_EQ(wt_engine_advance(h.engine(), 5 * kSecond), WT_OK);  // a cycle reads it
    EXPECT_EQ(wt_engine_advance(h.engine(), 5 * kSecond), WT_OK);
    EXPECT_EQ(wt_service_report_load_key(h.svc(), key, report.data(), report.size()), WT_OK);
    EXPECT_EQ(wt_engine_advance(h.engine(), 5 * kSecond), WT_OK);
    return h.Drive(2, 300, [](const std::string&) { return Ok(10); })["a"];
  };
  const int clean = picks_of_a("TEXT rps_fractional=2000, eps=0");
  EXPECT_GT(clean, 100);  // about a third of 600
  const int leaking = picks_of_a("TEXT rps_fractional=2000, eps=300");
  EXPECT_LT(leaking, clean / 4) << "clean " << clean;
  EXPECT_GE(h.Endpoint("a")["picker"]["failure_share"].get<double>(), 0.15);
}

TEST(ServerErrorRate, NeedsBothRatesAndTraffic) {
  HotStats s;
  double rate = -1;
  s.RecordServerRates(1u << 5, 0, 3, 100);  // eps without rps
  EXPECT_FALSE(s.ServerErrorRate(100, 10, &rate));
  s.RecordServerRates((1u << 4) | (1u << 5), 0, 0, 100);  // an idle server: no rate
  EXPECT_FALSE(s.ServerErrorRate(100, 10, &rate));
  s.RecordServerRates((1u << 4) | (1u << 5), 10, 20, 100);  // more errors than requests: capped
  ASSERT_TRUE(s.ServerErrorRate(100, 10, &rate));
  EXPECT_EQ(rate, 1.0);
}

// A drained endpoint's server, receiving nothing, reports rps 0: no evidence about its errors,
// so the last rate stands until it is stale instead of reading as "no rate" (which lifted the
// price and brought every client of a fleet back to it at once).
TEST(ServerErrorRate, AnIdleServersReportKeepsTheLastRateUntilItIsStale) {
  HotStats s;
  double rate = -1;
  constexpr uint32_t kBoth = (1u << 4) | (1u << 5);
  s.RecordServerRates(kBoth, 100, 15, 1000);
  s.RecordServerRates(kBoth, 0, 0, 2000);  // idle
  ASSERT_TRUE(s.ServerErrorRate(3000, 5000, &rate));
  EXPECT_DOUBLE_EQ(rate, 0.15);
  EXPECT_EQ(s.Rates().at_ns, 1000);  // its age is the last real figure's
  EXPECT_FALSE(s.ServerErrorRate(7000, 5000, &rate));  // stale all the same
  s.RecordServerRates(kBoth, 100, 0, 8000);  // traffic again, clean: that is evidence
  ASSERT_TRUE(s.ServerErrorRate(8000, 5000, &rate));
  EXPECT_DOUBLE_EQ(rate, 0.0);
}

// A healthy endpoint whose last cycle of its own was clean is not let off while its server
// says it fails: the burst rule reads the server's rate too.
TEST(ServerErrorRate, ACleanCycleOfTheClientsOwnDoesNotUndoTheServersCut) {
  Harness h(R"({"seed": 1, "picker": {"mode": "weighted"}, "load_report": {"max_age_ms": 8000}})");
  h.Set({{"a", 1}, {"b", 1}});
  uint64_t key = 0;
  ASSERT_EQ(wt_service_endpoint_key(h.svc(), "a", &key), WT_OK);
  const std::string leak = "TEXT rps_fractional=2000, eps=300";
  for (int cycle = 0; cycle < 4; ++cycle) {
    ASSERT_EQ(wt_service_report_load_key(h.svc(), key, leak.data(), leak.size()), WT_OK);
    h.Drive(5, 20, [](const std::string&) { return Ok(10); });  // every answer it sees is good
    EXPECT_LT(h.Endpoint("a")["effective_weight"].get<double>(), 0.9) << "cycle " << cycle;
    EXPECT_EQ(h.Endpoint("a")["state"], "failing") << "cycle " << cycle;
  }
}

TEST(ServerErrorRate, TheLatestOfReportAndSourceWins) {
  HotStats s;
  double rate = -1;
  s.RecordServerRates((1u << 4) | (1u << 5), 100, 5, 1000);
  s.RecordServerErrorRate(0.3, 2000);
  ASSERT_TRUE(s.ServerErrorRate(2000, 5000, &rate));
  EXPECT_DOUBLE_EQ(rate, 0.3);
  s.RecordServerRates((1u << 4) | (1u << 5), 100, 5, 3000);
  ASSERT_TRUE(s.ServerErrorRate(3000, 5000, &rate));
  EXPECT_DOUBLE_EQ(rate, 0.05);
  // Both too old.
  EXPECT_FALSE(s.ServerErrorRate(9000, 5000, &rate));
}

TEST(ServerErrorRate, APrometheusSourceMayAskForTheErrorRateAlone) {
  const std::string cfg = R"J({"sources": {"prometheus": {"url": "http://127.0.0.1:1",
                              "queries": {"error_rate": "sum by (instance) (rate(x[1m]))"}}}})J";
  char* text = nullptr;
  ASSERT_EQ(wt_config_resolve(cfg.data(), cfg.size(), &text), WT_OK) << wt_last_error();
  const json resolved = json::parse(text);
  wt_free(text);
  EXPECT_EQ(resolved["sources"]["prometheus"]["queries"]["error_rate"],
            "sum by (instance) (rate(x[1m]))");
  // With no query at all the source is still refused, and the message names the new one.
  const std::string none = R"({"sources": {"prometheus": {"url": "http://127.0.0.1:1"}}})";
  EXPECT_EQ(wt_config_resolve(none.data(), none.size(), &text), WT_ERR_CONFIG_INVALID);
  EXPECT_NE(std::string(wt_last_error()).find("connection_pool, error_rate"), std::string::npos)
      << wt_last_error();
}

}  // namespace
}  // namespace weighted::testing
