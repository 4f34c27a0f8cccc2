// Servers' load reports: the endpoint-load-metrics header parsed (TEXT and JSON, ORCA's field
// names), malformed ones refused with where and why, and the values feeding the same window as
// the client's resource reports, with load_report.prefer and max_age_ms deciding which counts.
#include <string>

#include <gtest/gtest.h>

#include "harness.h"
#include "stats/load_report.h"

namespace weighted {
namespace {

using testing::Harness;
using testing::json;

const LoadReportNames kNames{"thread_pool", "connection_pool"};

LoadReport MustParse(std::string_view header, const LoadReportNames& names = kNames) {
  LoadReport r;
  Status s = ParseLoadReport("test", header, names, &r);
  EXPECT_TRUE(s.ok()) << s.message();
  return r;
}

std::string Error(std::string_view header) {
  LoadReport r;
  r.present = 0xdead;  // must stay untouched on failure
  Status s = ParseLoadReport("test", header, kNames, &r);
  EXPECT_EQ(s.code(), WT_ERR_BAD_LOAD_REPORT) << header;
  EXPECT_EQ(r.present, 0xdeadu) << header;
  return s.message();
}

TEST(LoadReportParse, TextWithEveryStandardField) {
  const LoadReport r = MustParse(
      "TEXT cpu_utilization=0.3, mem_utilization=0.5, rps_fractional=120.5, eps=2, "
      "application_utilization=0.4, named_metrics.thread_pool=0.9, "
      "utilization.connection_pool=0.25, request_cost.bytes=3487");
  EXPECT_EQ(r.present, WT_RES_CPU | WT_RES_MEMORY | WT_RES_THREAD_POOL | WT_RES_CONNECTION_POOL |
                           kReportRps | kReportEps);
  EXPECT_DOUBLE_EQ(r.resources[0], 0.3);
  EXPECT_DOUBLE_EQ(r.resources[1], 0.5);
  EXPECT_DOUBLE_EQ(r.resources[2], 0.9);
  EXPECT_DOUBLE_EQ(r.resources[3], 0.25);
  EXPECT_DOUBLE_EQ(r.rps, 120.5);
  EXPECT_DOUBLE_EQ(r.eps, 2);
}

TEST(LoadReportParse, TextTakesEnvoysColonAndLooseSpacing) {
  const LoadReport r = MustParse("  TEXT cpu_utilization:0.7 ,mem_utilization = 0.1,eps=0  ");
  EXPECT_EQ(r.present, WT_RES_CPU | WT_RES_MEMORY | kReportEps);
  EXPECT_DOUBLE_EQ(r.resources[0], 0.7);
  EXPECT_DOUBLE_EQ(r.resources[1], 0.1);
}

TEST(LoadReportParse, AnEmptyTextReportIsValidAndCarriesNothing) {
  EXPECT_EQ(MustParse("TEXT ").present, 0u);
}

TEST(LoadReportParse, CpuPastItsSoftLimitFillsThePool) {
  EXPECT_DOUBLE_EQ(MustParse("TEXT cpu_utilization=1.7").resources[0], 1.0);
}

TEST(LoadReportParse, PoolNamesComeFromTheConfig) {
  const LoadReportNames names{"tomcat_busy", "hikari_active"};
  const LoadReport r =
      MustParse("TEXT named_metrics.tomcat_busy=0.6, named_metrics.hikari_active=0.2, "
                "named_metrics.thread_pool=5",
                names);
  EXPECT_EQ(r.present, WT_RES_THREAD_POOL | WT_RES_CONNECTION_POOL);
  EXPECT_DOUBLE_EQ(r.resources[2], 0.6);
  EXPECT_DOUBLE_EQ(r.resources[3], 0.2);
}

TEST(LoadReportParse, DeprecatedRpsYieldsToRpsFractional) {
  EXPECT_DOUBLE_EQ(MustParse("TEXT rps=100, rps_fractional=99.5").rps, 99.5);
  EXPECT_DOUBLE_EQ(MustParse("TEXT rps_fractional=99.5, rps=100").rps, 99.5);
  EXPECT_DOUBLE_EQ(MustParse("TEXT rps=100").rps, 100);
}

TEST(LoadReportParse, JsonFields) {
  const LoadReport r = MustParse(
      R"(JSON {"cpu_utilization": 0.3, "memUtilization": 0.5, "rpsFractional": 10, "eps": 1,)"
      R"( "namedMetrics": {"thread_pool": 0.9, "kv_cache": 0.4}, "utilization":)"
      R"( {"connection_pool": "0.75"}})");
  EXPECT_EQ(r.present, WT_RES_CPU | WT_RES_MEMORY | WT_RES_THREAD_POOL | WT_RES_CONNECTION_POOL |
                           kReportRps | kReportEps);
  EXPECT_DOUBLE_EQ(r.resources[1], 0.5);
  EXPECT_DOUBLE_EQ(r.resources[3], 0.75);  // proto3 JSON lets a number be a string
  EXPECT_DOUBLE_EQ(r.rps, 10);
}

TEST(LoadReportParse, VllmsHeadersParse) {
  // What vLLM's orca_metrics.create_orca_header writes in both formats.
  EXPECT_EQ(MustParse("TEXT named_metrics.kv_cache_usage_perc=0.4, "
                      "named_metrics.num_requests_waiting=3.0").present,
            0u);
  EXPECT_EQ(MustParse(R"(JSON {"named_metrics": {"kv_cache_usage_perc": 0.4}})").present, 0u);
}

TEST(LoadReportParse, MalformedHeadersSayWhereAndWhy) {
  EXPECT_NE(Error("cpu_utilization=0.3").find("does not start with a format"), std::string::npos);
  EXPECT_NE(Error("BIN CgkJmpmZmZmZ2T8=").find("BIN"), std::string::npos);
  std::string m = Error("TEXT cpu_utilization=0.3, mem_utilization=1.5");
  EXPECT_NE(m.find("entry 1 (offset 26)"), std::string::npos) << m;
  EXPECT_NE(m.find("must be a fraction in [0, 1], got 1.5"), std::string::npos) << m;
  m = Error("TEXT cpu_utilization=0.3,,eps=1");
  EXPECT_NE(m.find("entry 1 (offset 25) is empty"), std::string::npos) << m;
  m = Error("TEXT cpu_utilization=abc");
  EXPECT_NE(m.find("the value is not a number"), std::string::npos) << m;
  m = Error("TEXT cpu_utilization=0.3x");
  EXPECT_NE(m.find("the value is not a number"), std::string::npos) << m;
  m = Error("TEXT cpu_utilisation=0.3");
  EXPECT_NE(m.find("\"cpu_utilisation\" is not a field of an ORCA load report"), std::string::npos) << m;
  m = Error("TEXT cpu_utilization=0.3, cpu_utilization=0.4");
  EXPECT_NE(m.find("appears twice"), std::string::npos) << m;
  m = Error("TEXT named_metrics.a=1, named_metrics.a=2");
  EXPECT_NE(m.find("appears twice"), std::string::npos) << m;
  m = Error("TEXT eps=-1");
  EXPECT_NE(m.find("must be >= 0"), std::string::npos) << m;
  m = Error("TEXT cpu_utilization=nan");
  EXPECT_NE(m.find("finite"), std::string::npos) << m;
  m = Error("TEXT cpu_utilization=inf");
  EXPECT_NE(m.find("finite"), std::string::npos) << m;
  m = Error("TEXT named_metrics.thread_pool=3");
  EXPECT_NE(m.find("is the thread_pool (load_report.thread_pool_metric)"), std::string::npos) << m;
  m = Error("TEXT named_metrics.=1");
  EXPECT_NE(m.find("empty name"), std::string::npos) << m;
  m = Error("TEXT named_metrics=1");
  EXPECT_NE(m.find("not a field"), std::string::npos) << m;
  m = Error("TEXT cpu_utilization");
  EXPECT_NE(m.find("is not name=value"), std::string::npos) << m;
  // A newline in the header cannot forge a log line: entries are quoted escaped.
  m = Error("TEXT bogus\n=1");
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
}

TEST(LoadReportParse, MalformedJsonSaysWhy) {
  EXPECT_NE(Error("JSON {\"cpu_utilization\": 0.3").find("not JSON at byte"), std::string::npos);
  EXPECT_NE(Error("JSON [1]").find("arrays"), std::string::npos);
  EXPECT_NE(Error("JSON 0.5").find("must be a JSON object"), std::string::npos);
  EXPECT_NE(Error(R"(JSON {"cpu_utilization": null})").find("null is not a number"),
            std::string::npos);
  EXPECT_NE(Error(R"(JSON {"cpu_utilization": {"a": 1}})").find("only named_metrics"),
            std::string::npos);
  EXPECT_NE(Error(R"(JSON {"named_metrics": 1})").find("must be an object"), std::string::npos);
  EXPECT_NE(Error(R"(JSON {"named_metrics": {"a": {"b": 1}}})").find("nested"),
            std::string::npos);
  EXPECT_NE(Error(R"(JSON {"mem_utilization": 2})").find("fraction"), std::string::npos);
  EXPECT_NE(Error(R"(JSON {"cpu": 0.2})").find("not a field"), std::string::npos);
  EXPECT_NE(Error(R"(JSON {"eps": "x"})").find("is not a number"), std::string::npos);
}

TEST(LoadReportParse, ItIsBounded) {
  std::string big = "TEXT ";
  for (int i = 0; i < 65; ++i) big += "named_metrics.m" + std::to_string(i) + "=1,";
  big.pop_back();
  EXPECT_NE(Error(big).find("more than 64 metrics"), std::string::npos);
  EXPECT_NE(Error("TEXT " + std::string(5000, ' ')).find("more than the 4096"), std::string::npos);
}

// ---- through the C API ----

constexpr const char* kConfig = R"({"seed": 7, "picker": {"mode": "weighted"},
  "rules": [{"metric": "thread_pool", "threshold": 0.8, "penalty": 0.6}]})";

class Reports : public ::testing::Test {
 protected:
  Harness h{kConfig};
  void SetUp() override { h.Set({{"a", 100}, {"b", 100}}); }

  wt_pick PickOf(const std::string& id) {
    for (int i = 0; i < 1000; ++i) {
      wt_pick p = WT_PICK_INIT;
      EXPECT_EQ(wt_service_pick(h.svc(), &p), WT_OK);
      if ((p.index == 0) == (id == "a")) return p;
    }
    ADD_FAILURE() << "never picked " << id;
    return WT_PICK_INIT;
  }
  json Endpoint(const std::string& id) {
    char* text = nullptr;
    EXPECT_EQ(wt_engine_snapshot_json(h.engine(), &text, nullptr), WT_OK);
    const json snap = json::parse(text);
    wt_free(text);
    for (const json& ep : snap["services"][0]["endpoints"]) {
      if (ep["id"] == id) return ep;
    }
    return {};
  }
  json Service() {
    char* text = nullptr;
    EXPECT_EQ(wt_engine_snapshot_json(h.engine(), &text, nullptr), WT_OK);
    const json snap = json::parse(text);
    wt_free(text);
    return snap["services"][0];
  }
  // Every endpoint answers 20 requests a second for `seconds`; `header(id)` is its load report.
  void Traffic(double seconds, const std::function<std::string(const std::string&)>& header) {
    for (int i = 0; i < seconds * 20; ++i) {
      ASSERT_EQ(wt_engine_advance(h.engine(), 50'000'000), WT_OK);
      wt_pick p = WT_PICK_INIT;
      ASSERT_EQ(wt_service_pick(h.svc(), &p), WT_OK);
      const std::string id = p.index == 0 ? "a" : "b";
      const std::string hv = header(id);
      ASSERT_EQ(wt_service_complete_with_load(h.svc(), &p, 10, WT_OUTCOME_SUCCESS, hv.data(),
                                              hv.size()),
                WT_OK)
          << wt_last_error();
    }
  }
};

TEST_F(Reports, ParseCallUsesTheEnginesPoolNames) {
  wt_load_report r = WT_LOAD_REPORT_INIT;
  const std::string hv = "TEXT cpu_utilization=0.5, named_metrics.thread_pool=0.75, eps=3";
  ASSERT_EQ(wt_engine_parse_load_report(h.engine(), hv.data(), hv.size(), &r), WT_OK);
  EXPECT_EQ(r.present, unsigned(WT_RES_CPU | WT_RES_THREAD_POOL | WT_LOAD_EPS));
  EXPECT_DOUBLE_EQ(r.cpu, 0.5);
  EXPECT_DOUBLE_EQ(r.thread_pool, 0.75);
  EXPECT_DOUBLE_EQ(r.eps, 3);
  r.size = 8;
  EXPECT_EQ(wt_engine_parse_load_report(h.engine(), hv.data(), hv.size(), &r),
            WT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wt_engine_parse_load_report(h.engine(), nullptr, 0, &r), WT_ERR_INVALID_ARGUMENT);
}

TEST_F(Reports, ServerReportsFireTheResourceRule) {
  Traffic(12, [](const std::string& id) {
    return std::string("TEXT named_metrics.thread_pool=") + (id == "a" ? "0.95" : "0.2");
  });
  const json a = Endpoint("a");
  EXPECT_EQ(a["state"], "degraded") << a.dump();
  EXPECT_DOUBLE_EQ(a["window"]["resources"]["thread_pool"].get<double>(), 0.95);
  EXPECT_EQ(a["window"]["resource_origin"]["thread_pool"], "server");
  EXPECT_GT(a["server_report"]["reports"].get<int>(), 50);
  EXPECT_EQ(Endpoint("b")["state"], "healthy");
  EXPECT_NEAR(a["weight"].get<double>(), 40, 1e-9);
}

TEST_F(Reports, AMalformedReportIsCountedTheOutcomeStillRecorded) {
  wt_pick p = PickOf("a");
  const std::string bad = "TEXT cpu_utilization=2x";
  ASSERT_EQ(wt_service_complete_with_load(h.svc(), &p, 10, WT_OUTCOME_HTTP_5XX, bad.data(),
                                          bad.size()),
            WT_ERR_BAD_LOAD_REPORT);
  EXPECT_NE(std::string(wt_last_error()).find("wt_service_complete_with_load: load report: entry 0"),
            std::string::npos)
      << wt_last_error();
  EXPECT_EQ(Endpoint("a")["totals"]["http_5xx"], 1);
  EXPECT_EQ(Endpoint("a")["server_report"]["malformed"], 1);
  EXPECT_EQ(Service()["bad_load_reports"], 1);
  // No header: a plain complete. A NULL header with a length is refused, nothing recorded.
  p = PickOf("a");
  EXPECT_EQ(wt_service_complete_with_load(h.svc(), &p, 10, WT_OUTCOME_SUCCESS, nullptr, 0), WT_OK);
  EXPECT_EQ(wt_service_complete_with_load(h.svc(), &p, 10, WT_OUTCOME_SUCCESS, nullptr, 3),
            WT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(Endpoint("a")["totals"]["success"], 1);
  // A bad outcome is complete()'s error: nothing recorded, not even the report.
  const std::string good = "TEXT eps=1";
  EXPECT_EQ(wt_service_complete_with_load(h.svc(), &p, -1, WT_OUTCOME_SUCCESS, good.data(),
                                          good.size()),
            WT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(Endpoint("a")["server_report"]["reports"], 0);
}

TEST_F(Reports, ReportByKeyAndStaleKeys) {
  uint64_t key = 0;
  ASSERT_EQ(wt_service_endpoint_key(h.svc(), "b", &key), WT_OK);
  const std::string hv = "JSON {\"rps_fractional\": 42, \"eps\": 0.5}";
  ASSERT_EQ(wt_service_report_load_key(h.svc(), key, hv.data(), hv.size()), WT_OK);
  const json b = Endpoint("b");
  EXPECT_DOUBLE_EQ(b["server_report"]["rps"].get<double>(), 42);
  EXPECT_DOUBLE_EQ(b["server_report"]["eps"].get<double>(), 0.5);
  EXPECT_EQ(b["server_report"]["rates_age_ms"], 0);
  EXPECT_EQ(wt_service_report_load_key(h.svc(), key ^ (1ull << 40), hv.data(), hv.size()),
            WT_ERR_STALE);
  EXPECT_EQ(wt_service_report_load_key(h.svc(), key, nullptr, 0), WT_ERR_INVALID_ARGUMENT);
}

TEST(ReportSources, ServerWinsByDefaultClientWinsWhenPreferred) {
  for (const char* prefer : {"server", "client"}) {
    SCOPED_TRACE(prefer);
    Harness h(std::string(R"({"seed": 1, "load_report": {"prefer": ")") + prefer + "\"}}");
    h.Set({{"a", 1}});
    uint64_t key = 0;
    ASSERT_EQ(wt_service_endpoint_key(h.svc(), "a", &key), WT_OK);
    wt_resources client{sizeof(wt_resources), WT_RES_CPU, 0.1, 0, 0, 0};
    ASSERT_EQ(wt_service_report_resources(h.svc(), "a", &client), WT_OK);
    const std::string hv = "TEXT cpu_utilization=0.9, mem_utilization=0.3";
    ASSERT_EQ(wt_service_report_load_key(h.svc(), key, hv.data(), hv.size()), WT_OK);
    ASSERT_EQ(wt_engine_run_cycle(h.engine()), WT_OK);
    char* text = nullptr;
    ASSERT_EQ(wt_engine_snapshot_json(h.engine(), &text, nullptr), WT_OK);
    const json w = json::parse(text)["services"][0]["endpoints"][0]["window"];
    wt_free(text);
    const bool server = std::string(prefer) == "server";
    EXPECT_DOUBLE_EQ(w["resources"]["cpu"].get<double>(), server ? 0.9 : 0.1);
    EXPECT_EQ(w["resource_origin"]["cpu"], server ? "server" : "client");
    // Memory only the server reported: it counts under either preference.
    EXPECT_DOUBLE_EQ(w["resources"]["memory"].get<double>(), 0.3);
    EXPECT_EQ(w["resource_origin"]["memory"], "server");
    EXPECT_DOUBLE_EQ(w["server_resources"]["cpu"].get<double>(), 0.9);
  }
}

TEST(ReportSources, AServerReportOlderThanMaxAgeIsNotUsed) {
  // Window 30 s, reports count for 7 s: the sample is still in the window, but too old.
  Harness h(R"({"seed": 1, "window": {"length_ms": 30000},
                "load_report": {"max_age_ms": 7000}})");
  h.Set({{"a", 1}});
  uint64_t key = 0;
  ASSERT_EQ(wt_service_endpoint_key(h.svc(), "a", &key), WT_OK);
  const std::string hv = "TEXT cpu_utilization=0.9";
  ASSERT_EQ(wt_service_report_load_key(h.svc(), key, hv.data(), hv.size()), WT_OK);
  auto cpu = [&] {
    char* text = nullptr;
    EXPECT_EQ(wt_engine_snapshot_json(h.engine(), &text, nullptr), WT_OK);
    const json r = json::parse(text)["services"][0]["endpoints"][0]["window"];
    wt_free(text);
    return r;
  };
  ASSERT_EQ(wt_engine_advance(h.engine(), 5'000'000'000), WT_OK);  // a cycle at 5 s: fresh
  EXPECT_DOUBLE_EQ(cpu()["resources"]["cpu"].get<double>(), 0.9);
  ASSERT_EQ(wt_engine_advance(h.engine(), 5'000'000'000), WT_OK);  // at 10 s: 10 s old
  EXPECT_TRUE(cpu()["resources"]["cpu"].is_null()) << cpu().dump();
  EXPECT_EQ(cpu()["resource_origin"]["cpu"], "none");
  EXPECT_DOUBLE_EQ(cpu()["server_resources"]["cpu"].get<double>(), 0.9);  // still in the window
}

}  // namespace
}  // namespace weighted
