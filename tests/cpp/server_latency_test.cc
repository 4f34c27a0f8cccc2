// The server's own latency: named_metrics.<load_report.latency_metric> in a load report (or the
// Prometheus source's latency_ms query), judged by the server_latency rule against the fleet's
// lower median. A client of a fleet of thousands hears from an endpoint every few windows and
// has no latency of its own to judge; the server times every client's requests.
#include <string>

#include <gtest/gtest.h>

#include "harness.h"
#include "load_report_parse.h"
#include "runtime/prometheus_source.h"
#include "stats/load_report.h"

namespace weighted {
namespace {

using testing::Harness;
using testing::json;
using testing::Ok;
using testing::Outcome;

constexpr int64_t kSecond = 1'000'000'000;
const LoadReportNames kNames{"thread_pool", "connection_pool", "latency_ms", 60000};

LoadReport MustParse(std::string_view header, const LoadReportNames& names = kNames) {
  return testing::MustParse(header, names);
}

std::string Error(std::string_view header) { return testing::ParseError(header, kNames); }

TEST(ServerLatencyParse, TheNamedMetricIsMillisecondsInEitherForm) {
  LoadReport r = MustParse("TEXT cpu_utilization=0.5, named_metrics.latency_ms=87.5");
  EXPECT_TRUE(r.has_latency);
  EXPECT_DOUBLE_EQ(r.latency_ms, 87.5);
  EXPECT_EQ(r.present, WT_RES_CPU);  // no bit of wt_load_report's: the C struct has no field
  // A fraction of a millisecond takes the short path of a fraction, and is a latency all the same.
  EXPECT_DOUBLE_EQ(MustParse("TEXT named_metrics.latency_ms=0.25").latency_ms, 0.25);
  r = MustParse(R"(JSON {"namedMetrics": {"latency_ms": 1200, "thread_pool": 0.5}})");
  EXPECT_TRUE(r.has_latency);
  EXPECT_DOUBLE_EQ(r.latency_ms, 1200);
  EXPECT_EQ(r.present, WT_RES_THREAD_POOL);
  // Under another name, or with none configured, the entry is any other named metric.
  const LoadReportNames renamed{"thread_pool", "connection_pool", "service_ms", 60000};
  EXPECT_DOUBLE_EQ(MustParse("TEXT named_metrics.service_ms=40", renamed).latency_ms, 40);
  EXPECT_FALSE(MustParse("TEXT named_metrics.latency_ms=40", renamed).has_latency);
  EXPECT_FALSE(MustParse("TEXT named_metrics.latency_ms=-4", {"a", "b"}).has_latency);
  // Only named_metrics carries it: utilization entries are fractions by ORCA's definition.
  EXPECT_FALSE(MustParse("TEXT utilization.latency_ms=0.5").has_latency);
}

TEST(ServerLatencyParse, BadValuesSayWhatWhereAndWhy) {
  std::string m = Error("TEXT cpu_utilization=0.5, named_metrics.latency_ms=-3");
  EXPECT_NE(m.find("entry 1 (offset 26)"), std::string::npos) << m;
  EXPECT_NE(m.find("is the server's latency (load_report.latency_metric) and must be "
                   "milliseconds in [0, 60000] (limits.max_latency_ms), got -3"),
            std::string::npos)
      << m;
  m = Error("TEXT named_metrics.latency_ms=60001");
  EXPECT_NE(m.find("got 60001"), std::string::npos) << m;
  m = Error("TEXT named_metrics.latency_ms=nan");
  EXPECT_NE(m.find("finite"), std::string::npos) << m;
  m = Error(R"(JSON {"named_metrics": {"latency_ms": -1}})");
  EXPECT_NE(m.find("server's latency"), std::string::npos) << m;
  m = Error("TEXT named_metrics.latency_ms=5, named_metrics.latency_ms=6");
  EXPECT_NE(m.find("appears twice"), std::string::npos) << m;
}

// Four endpoints whose servers report their latency, and no client results at all: the client
// of a large fleet. Each report is a response's header (wt_service_report_load_key).
class ServerLatencyRule : public ::testing::Test {
 protected:
  explicit ServerLatencyRule(const std::string& config =
                                 R"({"seed": 1, "picker": {"mode": "weighted"},
                                     "load_report": {"max_age_ms": 8000}})")
      : h(config) {
    h.Set({{"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}});
  }
  void Report(const char* id, const std::string& text) {
    uint64_t key = 0;
    ASSERT_EQ(wt_service_endpoint_key(h.svc(), id, &key), WT_OK);
    ASSERT_EQ(wt_service_report_load_key(h.svc(), key, text.data(), text.size()), WT_OK)
        << wt_last_error();
  }
  void Latencies(double a, double b, double c, double d) {
    const auto text = [](double ms) { return "TEXT named_metrics.latency_ms=" + std::to_string(ms); };
    Report("a", text(a));
    Report("b", text(b));
    Report("c", text(c));
    Report("d", text(d));
  }
  json Contributor(const std::string& id) {
    const json ep = h.Endpoint(id);  // the loop below reads into it: not a temporary
    for (const json& c : ep["judgement"]["contributors"]) {
      if (c["metric"] == "server_latency") return c;
    }
    return nullptr;
  }
  Harness h;
};

TEST_F(ServerLatencyRule, AServerTwiceAsSlowAsTheFleetsMedianIsCutWithoutAnyResults) {
  Latencies(20, 22, 21, 100);
  ASSERT_EQ(wt_engine_advance(h.engine(), 5 * kSecond), WT_OK);
  EXPECT_FALSE(h.Endpoint("d")["known"].get<bool>());  // not one result of this client's
  EXPECT_DOUBLE_EQ(h.Endpoint("d")["penalty"].get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(h.Endpoint("d")["effective_weight"].get<double>(), 0.7);
  const json c = Contributor("d");
  ASSERT_FALSE(c.is_null()) << h.Endpoint("d").dump();
  EXPECT_DOUBLE_EQ(c["value"].get<double>(), 100);
  EXPECT_DOUBLE_EQ(c["threshold"].get<double>(), 42);  // 2 x the lower median, 21
  for (const char* id : {"a", "b", "c"}) EXPECT_EQ(h.Endpoint(id)["penalty"].get<double>(), 0);
  // Back to the fleet's pace: lifted at the next cycle; stepped back up as any cut is.
  Latencies(20, 22, 21, 23);
  ASSERT_EQ(wt_engine_advance(h.engine(), 5 * kSecond), WT_OK);
  EXPECT_EQ(h.Endpoint("d")["penalty"].get<double>(), 0);
}

TEST_F(ServerLatencyRule, AFleetThatSlowsAsAWholeIsNotCut) {
  Latencies(200, 220, 210, 230);
  ASSERT_EQ(wt_engine_advance(h.engine(), 5 * kSecond), WT_OK);
  for (const char* id : {"a", "b", "c", "d"}) EXPECT_EQ(h.Endpoint(id)["penalty"].get<double>(), 0);
}

TEST_F(ServerLatencyRule, AFleetWhosePaceIsZeroJudgesNoOne) {
  Latencies(0, 0, 5, 3);  // a lower median of 0 ms: twice it would make every other figure slow
  ASSERT_EQ(wt_engine_advance(h.engine(), 5 * kSecond), WT_OK);
  for (const char* id : {"a", "b", "c", "d"}) EXPECT_EQ(h.Endpoint(id)["penalty"].get<double>(), 0);
}

TEST_F(ServerLatencyRule, OneServerReportingAloneHasNoFleetToBeJudgedAgainst) {
  Report("d", "TEXT named_metrics.latency_ms=500");
  ASSERT_EQ(wt_engine_advance(h.engine(), 5 * kSecond), WT_OK);
  EXPECT_EQ(h.Endpoint("d")["penalty"].get<double>(), 0);
  EXPECT_TRUE(Contributor("d").is_null());
}

TEST_F(ServerLatencyRule, AStaleFigureJudgesNothing) {
  Latencies(20, 22, 21, 100);
  ASSERT_EQ(wt_engine_advance(h.engine(), 5 * kSecond), WT_OK);
  EXPECT_GT(h.Endpoint("d")["penalty"].get<double>(), 0);
  // 10 s after the reports: older than load_report.max_age_ms (8 s).
  ASSERT_EQ(wt_engine_advance(h.engine(), 5 * kSecond), WT_OK);
  EXPECT_EQ(h.Endpoint("d")["penalty"].get<double>(), 0);
}

// The client's own answers from d are fast (it sends few, and they happened to be quick, or
// the network hides nothing): a cycle whose own results fire nothing would lift a cut as a
// burst's. The server's figure is not this client's burst, so the cut stands.
TEST_F(ServerLatencyRule, TheClientsOwnCleanCycleDoesNotClearTheServersVerdict) {
  for (int second = 0; second < 10; ++second) {
    Latencies(20, 22, 21, 100);
    h.Drive(1, 100, [](const std::string&) { return Ok(10); });
  }
  EXPECT_TRUE(h.Endpoint("d")["known"].get<bool>());  // a window of its own, all fast
  EXPECT_DOUBLE_EQ(h.Endpoint("d")["penalty"].get<double>(), 0.3);
  EXPECT_EQ(h.Endpoint("a")["penalty"].get<double>(), 0);
}

// The load-aware picker's latency estimate is at least the server's figure: a client that has
// not heard from an endpoint since it slowed still prices it as slow.
class ServerLatencyPicker : public ::testing::Test {
 protected:
  ServerLatencyPicker() : h(R"({"seed": 7, "load_report": {"max_age_ms": 8000}})") {
    h.Set({{"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}});
    // Every endpoint answered this client at 20 ms once: its estimates, from before d slowed.
    h.Drive(4.9, 100, [](const std::string&) { return Ok(20); });
  }
  void Report(const char* id, double ms) {
    uint64_t key = 0;
    ASSERT_EQ(wt_service_endpoint_key(h.svc(), id, &key), WT_OK);
    const std::string text = "TEXT named_metrics.latency_ms=" + std::to_string(ms);
    ASSERT_EQ(wt_service_report_load_key(h.svc(), key, text.data(), text.size()), WT_OK);
  }
  void Latencies(double d) {
    Report("a", 20);
    Report("b", 22);
    Report("c", 21);
    Report("d", d);
  }
  // The estimate the picker held as the last cycle began (the snapshot's picker.latency_ms).
  double Estimate(const std::string& id) { return h.Endpoint(id)["picker"]["latency_ms"]; }
  // Picks left in flight (no answer yet): each adds to its endpoint's cost.
  int PicksOfD(int n) {
    int d = 0;
    for (int i = 0; i < n; ++i) {
      wt_pick p = WT_PICK_INIT;
      EXPECT_EQ(wt_service_pick(h.svc(), &p), WT_OK);
      d += p.index == 3;  // d: the fourth of the set
    }
    return d;
  }
  Harness h;
};

TEST_F(ServerLatencyPicker, ASlowServersEndpointIsPricedWithoutAnAnswerOfTheClients) {
  Latencies(100);
  ASSERT_EQ(wt_engine_advance(h.engine(), 5 * kSecond), WT_OK);  // the cycle sets the floors
  // No answer of d's since it slowed: priced at its server's figure, 5x its peers' cost.
  EXPECT_LT(PicksOfD(100), 12);
  Latencies(100);
  ASSERT_EQ(wt_engine_advance(h.engine(), 5 * kSecond), WT_OK);
  EXPECT_DOUBLE_EQ(Estimate("d"), 100);
  EXPECT_NEAR(Estimate("a"), 20, 1e-9);  // not judged slow: its own estimate, no floor
}

TEST_F(ServerLatencyPicker, WithoutTheServersFigureTheSamePicksSpreadEvenly) {
  Report("a", 20);  // one server alone reports: no floor on d
  ASSERT_EQ(wt_engine_advance(h.engine(), 5 * kSecond), WT_OK);
  EXPECT_GT(PicksOfD(100), 18);
}

TEST_F(ServerLatencyPicker, TheFloorFollowsTheServerDownAndLeavesTheClientsOwnEstimate) {
  Latencies(100);
  ASSERT_EQ(wt_engine_advance(h.engine(), 5 * kSecond), WT_OK);
  // The client's own answer from a is slower than its server says (the network): it stands.
  wt_pick p = WT_PICK_INIT;
  for (int i = 0; i < 50; ++i) {
    p = WT_PICK_INIT;
    ASSERT_EQ(wt_service_pick(h.svc(), &p), WT_OK);
    if (p.index == 0) break;  // a
    // d's picks get no answer (in flight still): its estimate is the floor's alone.
    if (p.index != 3) ASSERT_EQ(wt_service_complete(h.svc(), &p, 20, WT_OUTCOME_SUCCESS), WT_OK);
  }
  ASSERT_EQ(p.index, 0u);
  ASSERT_EQ(wt_service_complete(h.svc(), &p, 300, WT_OUTCOME_SUCCESS), WT_OK);
  Latencies(20);  // d is back to its peers' pace
  ASSERT_EQ(wt_engine_advance(h.engine(), 5 * kSecond), WT_OK);
  ASSERT_EQ(wt_engine_advance(h.engine(), 5 * kSecond), WT_OK);
  EXPECT_DOUBLE_EQ(Estimate("d"), 20);  // the floor the cycle had set, followed down
  EXPECT_GE(Estimate("a"), 300);        // the client's own, not lowered to its server's 20
}

TEST(ServerLatencyConfig, TheRuleAndTheNamesAreChecked) {
  Harness h(R"({"seed": 1, "rules": [{"metric": "server_latency", "threshold_ms": 50,
                                      "penalty": 0.4}],
                "load_report": {"latency_metric": "p95_ms", "max_age_ms": 8000}})");
  h.Set({{"a", 1}, {"b", 1}});
  uint64_t key = 0;
  ASSERT_EQ(wt_service_endpoint_key(h.svc(), "a", &key), WT_OK);
  const std::string report = "TEXT named_metrics.p95_ms=80";
  ASSERT_EQ(wt_service_report_load_key(h.svc(), key, report.data(), report.size()), WT_OK);
  ASSERT_EQ(wt_engine_advance(h.engine(), 5 * kSecond), WT_OK);
  // An absolute threshold judges a server alone.
  EXPECT_DOUBLE_EQ(h.Endpoint("a")["penalty"].get<double>(), 0.4);

  Config c;
  Status s = ParseConfig(R"({"load_report": {"latency_metric": "thread_pool"}})", &c);
  EXPECT_EQ(s.code(), WT_ERR_CONFIG_INVALID);
  EXPECT_NE(s.message().find("load_report.latency_metric and thread_pool_metric are both "
                             "\"thread_pool\""),
            std::string::npos)
      << s.message();
  s = ParseConfig(R"({"rules": [{"metric": "server_latency", "threshold": 0.5, "penalty": 1}]})",
                  &c);
  EXPECT_NE(s.message().find("server_latency is a latency metric: spell its absolute threshold "
                             "\"threshold_ms\""),
            std::string::npos)
      << s.message();
  s = ParseConfig(R"({"load_report": {"latency_metric": "a b"}})", &c);
  EXPECT_NE(s.message().find("/load_report/latency_metric"), std::string::npos) << s.message();
}

TEST(ServerLatencySource, PrometheusSamplesAreMillisecondsWithinTheLimit) {
  std::vector<std::pair<std::string, double>> out;
  std::string skipped;
  const std::string body =
      R"({"status":"success","data":{"resultType":"vector","result":[)"
      R"({"metric":{"instance":"a"},"value":[1,"87.5"]},)"
      R"({"metric":{"instance":"b"},"value":[1,"-1"]},)"
      R"({"metric":{"instance":"c"},"value":[1,"4e6"]}]}})";
  ASSERT_EQ(ParseVector(body, "instance", false, &out, &skipped, kMaxSourceLatencyMs), "");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_DOUBLE_EQ(out[0].second, 87.5);
  EXPECT_EQ(skipped, R"("b" = "-1" is not milliseconds in [0, 3.6e+06])");
}

}  // namespace
}  // namespace weighted
