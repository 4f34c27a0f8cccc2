// Servers' load reports: the endpoint-load-metrics header parsed (TEXT and JSON, ORCA's field
// names), malformed ones refused with where and why, and the values feeding the same window as
// the client's resource reports, with load_report.prefer and max_age_ms deciding which counts.
#include <charconv>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness.h"
#include "load_report_parse.h"
#include "stats/load_report.h"

namespace weighted {
namespace {

using testing::Harness;
using testing::json;

const LoadReportNames kNames{"thread_pool", "connection_pool"};

LoadReport MustParse(std::string_view header, const LoadReportNames& names = kNames) {
  return testing::MustParse(header, names);
}

std::string Error(std::string_view header) { return testing::ParseError(header, kNames); }

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

TEST(LoadReportParse, JsonIsScannedToTheGrammar) {
  // Escapes in names are unescaped before they are matched; numbers follow JSON's grammar.
  LoadReport r = MustParse(
      "JSON {\"cpu\\u005futilization\": 5e-1, \"named_metrics\": {\"thread\\u005Fpool\": 0.25,"
      " \"caf\\u00e9\": 1, \"\\ud83d\\ude00\": 2}, \"eps\": 1E2, \"rps_fractional\": -0.0}");
  EXPECT_EQ(r.present, WT_RES_CPU | WT_RES_THREAD_POOL | kReportRps | kReportEps);
  EXPECT_DOUBLE_EQ(r.resources[0], 0.5);
  EXPECT_DOUBLE_EQ(r.resources[2], 0.25);
  EXPECT_DOUBLE_EQ(r.eps, 100);
  EXPECT_DOUBLE_EQ(MustParse("JSON {\"eps\": 123456789012345678901234567890}").eps, 1.2345678901234568e29);
  EXPECT_DOUBLE_EQ(MustParse("JSON {\"eps\": 1e-400}").eps, 0);
  EXPECT_EQ(MustParse("JSON {}").present, 0u);
  EXPECT_EQ(MustParse("JSON  {\t\"named_metrics\" :\r\n{ } }").present, 0u);
  EXPECT_NE(Error("JSON ").find("expected an object, found the end"), std::string::npos);
}

TEST(LoadReportParse, JsonOutsideTheGrammarIsRefusedAtItsByte) {
  std::string m = Error(R"(JSON {"eps": 01})");
  EXPECT_NE(m.find("not JSON at byte 9 of the object: expected ',' or '}', found \"1\""),
            std::string::npos) << m;
  m = Error(R"(JSON {"eps": 1.})");
  EXPECT_NE(m.find("a digit after the decimal point"), std::string::npos) << m;
  m = Error(R"(JSON {"eps": .5})");
  EXPECT_NE(m.find("not JSON at byte 8"), std::string::npos) << m;
  m = Error(R"(JSON {"eps": 1e})");
  EXPECT_NE(m.find("a digit in the exponent"), std::string::npos) << m;
  m = Error(R"(JSON {"eps": 1} x)");
  EXPECT_NE(m.find("expected the end after the object"), std::string::npos) << m;
  m = Error(R"(JSON {"eps": 1,})");
  EXPECT_NE(m.find("expected a name in double quotes"), std::string::npos) << m;
  m = Error(R"(JSON {eps: 1})");
  EXPECT_NE(m.find("expected a name in double quotes"), std::string::npos) << m;
  m = Error(R"(JSON {"eps" 1})");
  EXPECT_NE(m.find("expected ':' after the name"), std::string::npos) << m;
  m = Error(R"(JSON {"eps)");
  EXPECT_NE(m.find("not JSON at byte 1 of the object: expected a string closed by '\"'"),
            std::string::npos) << m;
  m = Error(R"(JSON {"eps": nul})");
  EXPECT_NE(m.find("not JSON at byte 8"), std::string::npos) << m;
  m = Error(R"(JSON {"eps": true})");
  EXPECT_NE(m.find("a boolean is not a number (byte 8 of the object)"), std::string::npos) << m;
  m = Error(R"(JSON {"named_metrics": {"a\q": 1}})");
  EXPECT_NE(m.find("\"\\\\q\" is not a JSON escape"), std::string::npos) << m;
  m = Error(R"(JSON {"named_metrics": {"\ud800": 1}})");
  EXPECT_NE(m.find("a lone high surrogate"), std::string::npos) << m;
  m = Error(R"(JSON {"named_metrics": {"\u12": 1}})");
  EXPECT_NE(m.find("four hex digits"), std::string::npos) << m;
  m = Error("JSON {\"named_metrics\": {\"a\xff\": 1}}");
  EXPECT_NE(m.find("a string is not UTF-8 (byte 21 of the object)"), std::string::npos) << m;
  m = Error("JSON {\"named_metrics\": {\"\xc0\xaf\": 1}}");  // an overlong '/'
  EXPECT_NE(m.find("not UTF-8"), std::string::npos) << m;
  m = Error("JSON {\"named_metrics\": {\"a\nb\": 1}}");
  EXPECT_NE(m.find("control character"), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  m = Error(R"(JSON {"named_metrics": {"a": 1}, "namedMetrics": {"b": 1}})");
  EXPECT_NE(m.find("namedMetrics appears twice (byte 28 of the object)"), std::string::npos) << m;
  m = Error(R"(JSON {"named_metrics": {"thread_pool": 0.5, "thread\u005fpool": 0.6}})");
  EXPECT_NE(m.find("named_metrics.\"thread_pool\" appears twice"), std::string::npos) << m;
  m = Error(R"(JSON {"eps": 1e999})");
  EXPECT_NE(m.find("eps must be a finite number"), std::string::npos) << m;
  m = Error(R"(JSON {"named_metrics": [1]})");
  EXPECT_NE(m.find("arrays are not part of a load report"), std::string::npos) << m;
}

// What from_chars reads from `text`: the correctly rounded double, as the parser's fast paths
// must give too.
double Reference(const std::string& text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  EXPECT_TRUE(ec == std::errc() && end == text.data() + text.size()) << text;
  return v;
}

void ExpectSameNumber(const std::string& text) {
  SCOPED_TRACE(text);
  const double want = Reference(text);
  const LoadReport j = MustParse("JSON {\"eps\": " + text + "}");
  const LoadReport t = MustParse("TEXT eps=" + text);
  // Bit for bit: the sign of a zero and the last bit of a mantissa included.
  EXPECT_EQ(std::memcmp(&j.eps, &want, sizeof want), 0) << j.eps << " vs " << want;
  EXPECT_EQ(std::memcmp(&t.eps, &want, sizeof want), 0) << t.eps << " vs " << want;
}

TEST(LoadReportParse, NumbersAreReadAsFromCharsReadsThem) {
  for (const char* text :
       {"0", "-0", "-0.0", "0.5", "118.5", "0.000001", "1.5", "10", "123456789012345",
        "1234567890123456", "9007199254740992", "9007199254740993", "1234567890123456789",
        "12345678901234567890", "0.1234567890123456789", "123456789.0123456789",
        "100000000000000000000000", "1e2", "1E+2", "5e-1", "0.1e1", "4e-320",
        "2.2250738585072011e-308", "1.7976931348623157e308", "7.0e-10"}) {
    ExpectSameNumber(text);
  }
  // Random decimals around the fast path's edges: up to 22 digits, up to 21 of them after the
  // point, with and without an exponent.
  std::mt19937_64 rng(16);
  for (int i = 0; i < 4000; ++i) {
    const int ints = 1 + int(rng() % 12), frac = int(rng() % 12);
    std::string text(1, char('1' + rng() % 9));
    for (int k = 1; k < ints; ++k) text += char('0' + rng() % 10);
    if (frac > 0 || rng() % 4 == 0) {
      text += '.';
      for (int k = 0; k < std::max(frac, 1); ++k) text += char('0' + rng() % 10);
    }
    if (rng() % 5 == 0) text += "e" + std::to_string(int(rng() % 40) - 20);
    if (rng() % 3 == 0) text = "0." + text.substr(0, text.find_first_of(".e"));
    ExpectSameNumber(text);
  }
}

TEST(LoadReportParse, JsonNumbersOutsideItsGrammarAreRefusedAsBefore) {
  const auto json_error = [](const std::string& number) {
    return Error("JSON {\"eps\": " + number + "}");
  };
  EXPECT_NE(json_error("+1").find("not JSON at byte 8 of the object: expected a value, found \"+\""),
            std::string::npos);
  EXPECT_NE(json_error(".5").find("expected a value, found \".\""), std::string::npos);
  EXPECT_NE(json_error("0x10").find("byte 9 of the object: expected ',' or '}', found \"x\""),
            std::string::npos);
  EXPECT_NE(json_error("-01").find("byte 10 of the object: expected ',' or '}', found \"1\""),
            std::string::npos);
  EXPECT_NE(json_error("1.5.2").find("byte 11 of the object: expected ',' or '}', found \".\""),
            std::string::npos);
  EXPECT_NE(json_error("-").find("byte 9 of the object: expected a value, found \"}\""),
            std::string::npos);
  EXPECT_NE(json_error("1.e5").find("a digit after the decimal point"), std::string::npos);
  EXPECT_NE(json_error("1e+").find("a digit in the exponent"), std::string::npos);
  EXPECT_NE(json_error("inf").find("expected a value, found \"i\""), std::string::npos);
  EXPECT_NE(json_error("Infinity").find("expected a value, found \"I\""), std::string::npos);
  EXPECT_NE(json_error("nan").find("expected a value, found \"n\""), std::string::npos);
  EXPECT_NE(json_error("NaN").find("expected a value, found \"N\""), std::string::npos);
  EXPECT_NE(json_error("-1e999").find("eps must be a finite number, got -inf"), std::string::npos);
  EXPECT_NE(json_error("-0.5").find("eps must be >= 0, got -0.5"), std::string::npos);
  EXPECT_NE(json_error("\"inf\"").find("eps must be a finite number, got inf"), std::string::npos);
  // From a string, from_chars' grammar: hex and a leading '+' are not numbers there either.
  EXPECT_NE(json_error("\"0x10\"").find("the string \"0x10\" is not a number"), std::string::npos);
  EXPECT_NE(json_error("\"+1\"").find("the string \"+1\" is not a number"), std::string::npos);
  EXPECT_EQ(MustParse("JSON {\"eps\": 1e-400, \"rps\": -0}").eps, 0);
}

TEST(LoadReportParse, StringsAreScannedAlikeAtEveryOffset) {
  // A string's plain bytes are scanned eight at a time: what ends a run (an escape, a control
  // character, a multi-byte character, the closing quote) is found wherever it falls.
  for (int k = 0; k < 20; ++k) {
    SCOPED_TRACE(k);
    const std::string pad(k, 'x');
    const std::string pool = pad + "_pool";
    const LoadReportNames names{pool, "connection_pool"};
    LoadReport r = MustParse(
        "JSON {\"named_metrics\": {\"" + pad + "\\u005fpool\": 0.5, \"" + pad + "\xc3\xa9\": 1}}",
        names);
    EXPECT_EQ(r.present, unsigned(WT_RES_THREAD_POOL));
    EXPECT_DOUBLE_EQ(r.resources[2], 0.5);
    EXPECT_EQ(MustParse("JSON {\"named_metrics\": {\"" + pool + "\": 0.25}}", names).resources[2],
              0.25);
    // The name starts at byte 20 of the object: {"named_metrics": {"
    const std::string at = "(byte " + std::to_string(20 + k) + " of the object)";
    std::string m = Error("JSON {\"named_metrics\": {\"" + pad + "\x01\": 1}}");
    EXPECT_NE(m.find("a control character inside a string must be escaped " + at),
              std::string::npos) << m;
    m = Error("JSON {\"named_metrics\": {\"" + pad + "\xff\": 1}}");
    EXPECT_NE(m.find("a string is not UTF-8 " + at), std::string::npos) << m;
    m = Error("JSON {\"named_metrics\": {\"" + pad);
    EXPECT_NE(m.find("byte 19 of the object: expected a string closed by '\"'"),
              std::string::npos) << m;
  }
}

TEST(LoadReportParse, TextAndJsonTakeAndRefuseTheSameValues) {
  // Each metric through both forms: the same report, or the same reason. (A number past a
  // double's range is refused by both, as not a number in TEXT, as not finite in JSON.)
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"cpu_utilization", "1"}, {"cpu_utilization", "1.5"}, {"cpu_utilization", "0"},
      {"mem_utilization", "1"}, {"mem_utilization", "1.0000001"}, {"mem_utilization", "-0"},
      {"application_utilization", "2"}, {"application_utilization", "-1"},
      {"rps_fractional", "1e300"}, {"rps", "0"}, {"eps", "-2"},
      {"named_metrics.thread_pool", "1"}, {"named_metrics.thread_pool", "1.5"},
      {"named_metrics.thread_pool", "-0.5"}, {"named_metrics.other", "-3"},
      {"named_metrics.connection_pool", "0.75"}, {"utilization.connection_pool", "0.25"},
      {"utilization.other", "-0.5"}, {"utilization.other", "2"}, {"request_cost.bytes", "-3"},
      {"request_cost.bytes", "1e300"}};
  for (const auto& [field, value] : cases) {
    SCOPED_TRACE(field + "=" + value);
    const std::string text = "TEXT " + field + "=" + value;
    const size_t dot = field.find('.');
    const std::string json =
        dot == std::string::npos
            ? "JSON {\"" + field + "\": " + value + "}"
            : "JSON {\"" + field.substr(0, dot) + "\": {\"" + field.substr(dot + 1) + "\": " +
                  value + "}}";
    LoadReport t, j;
    const Status ts = ParseLoadReport("test", text, kNames, &t);
    const Status js = ParseLoadReport("test", json, kNames, &j);
    ASSERT_EQ(ts.ok(), js.ok()) << ts.message() << " / " << js.message();
    if (ts.ok()) {
      EXPECT_EQ(t.present, j.present);
      EXPECT_EQ(t.resources, j.resources);
      EXPECT_EQ(t.rps, j.rps);
      EXPECT_EQ(t.eps, j.eps);
    } else {
      // TEXT: "... "field" must be ...", JSON: "... field must be ... (byte N ...)".
      const std::string why = ts.message().substr(ts.message().rfind("\" ") + 2);
      EXPECT_NE(js.message().find(why), std::string::npos) << ts.message() << " / " << js.message();
    }
  }
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

TEST_F(Reports, ParseCallChecksTheServersLatencyAsRecordingDoes) {
  // A header the parse accepts is one a response may carry: the server's latency (named by
  // load_report.latency_metric) is checked by the same rule, though the struct has no field for it.
  wt_load_report r = WT_LOAD_REPORT_INIT;
  const std::string bad = "TEXT cpu_utilization=0.5, named_metrics.latency_ms=-3";
  EXPECT_EQ(wt_engine_parse_load_report(h.engine(), bad.data(), bad.size(), &r),
            WT_ERR_BAD_LOAD_REPORT);
  EXPECT_NE(std::string(wt_last_error()).find("latency_metric"), std::string::npos)
      << wt_last_error();
  const std::string good = "TEXT cpu_utilization=0.5, named_metrics.latency_ms=40";
  ASSERT_EQ(wt_engine_parse_load_report(h.engine(), good.data(), good.size(), &r), WT_OK)
      << wt_last_error();
  EXPECT_EQ(r.present, unsigned(WT_RES_CPU));
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
