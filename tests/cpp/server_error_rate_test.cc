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
