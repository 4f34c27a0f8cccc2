// The config parser and validator (core/src/config/), the profiles, and their error messages.
// The key table, the round trip and the documents that describe the config are checked in
// config_keys_test.cc.
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "config/config.h"
#include "config_test_helpers.h"

namespace weighted {
namespace {

using config_test::Contains;
using config_test::ExpectSameConfig;
using config_test::MustParse;
using config_test::Parse;

// ---------------------------------------------------------------------------------------------
// Defaults and profiles

TEST(ConfigDefaults, AreTheArticleNumbers) {
  const Config c = DefaultConfig();
  EXPECT_EQ(c.profile, "default");
  EXPECT_EQ(c.controller.interval_ms, 5000);     // S-S1: one health-check cycle, e.g. 5 s
  EXPECT_EQ(c.controller.max_step, 0.1);         // S-S1: at most 10% per round
  EXPECT_EQ(c.controller.cooldown_ms, 10000);    // S-P1: hold at least 10 s
  EXPECT_EQ(c.controller.step_limit, StepLimit::kIncreasesOnly);
  EXPECT_EQ(c.isolation.max_ms, 30000);          // S-P2: maximum isolation 30 s
  EXPECT_EQ(c.isolation.restore_fraction, 0.5);  // S-P2: back to 50% of base
  EXPECT_TRUE(c.panic.enabled);                  // S-S2
  EXPECT_GE(c.window.length_ms, c.controller.interval_ms);

  // S-W2: P99 over its threshold adds 0.3, error rate over 1% adds 0.5, CPU over 80% adds 0.2;
  // and the server's own latency over twice the fleet's adds 0.3 (inert without server reports).
  ASSERT_EQ(c.rules.size(), 4u);
  EXPECT_EQ(c.rules[0].metric, Metric::kLatencyP99);
  EXPECT_EQ(c.rules[0].relative, 2.0);
  EXPECT_LT(c.rules[0].threshold, 0);  // relative only
  EXPECT_EQ(c.rules[0].penalty, 0.3);
  EXPECT_EQ(c.rules[1].metric, Metric::kErrorRate);
  EXPECT_EQ(c.rules[1].threshold, 0.01);
  EXPECT_EQ(c.rules[1].penalty, 0.5);
  EXPECT_EQ(c.rules[2].metric, Metric::kCpu);
  EXPECT_EQ(c.rules[2].threshold, 0.8);
  EXPECT_EQ(c.rules[2].penalty, 0.2);
  EXPECT_EQ(c.rules[3].metric, Metric::kServerLatency);
  EXPECT_EQ(c.rules[3].relative, 2.0);
  EXPECT_LT(c.rules[3].threshold, 0);
  EXPECT_EQ(c.rules[3].penalty, 0.3);
  EXPECT_EQ(c.load_report.latency_metric, "latency_ms");
}

TEST(ConfigDefaults, EmptyDocumentIsTheDefaultProfile) {
  ExpectSameConfig(MustParse("{}"), DefaultConfig());
  ExpectSameConfig(MustParse(R"({"profile": "default"})"), DefaultConfig());
}

TEST(ConfigProfiles, ArticleIsTheLiteralBehaviour) {
  const Config a = ArticleConfig();
  EXPECT_EQ(a.profile, "article");
  EXPECT_EQ(a.controller.step_limit, StepLimit::kBoth);
  EXPECT_EQ(a.controller.max_step, 0.1);
  EXPECT_EQ(a.controller.interval_ms, 5000);
  EXPECT_EQ(a.controller.cooldown_ms, 10000);
  EXPECT_EQ(a.slow_start.window_ms, 0);  // documented difference: the article has no slow start
  // The article's CPU rule is the literal absolute line; the default judges CPU against the fleet.
  ASSERT_EQ(a.rules.size(), 4u);
  EXPECT_EQ(a.rules[2].metric, Metric::kCpu);
  EXPECT_LT(a.rules[2].margin, 0);
  EXPECT_EQ(DefaultRules()[2].margin, 0.2);
  EXPECT_EQ(a.isolation.max_share, 1);
  EXPECT_FALSE(a.guard.enabled);
  EXPECT_TRUE(DefaultConfig().guard.enabled);
  EXPECT_EQ(DefaultConfig().isolation.max_share, 0.5);
  ExpectSameConfig(MustParse(R"({"profile": "article"})"), a);
}

TEST(ConfigProfiles, ProfileIsReadFirstWhateverItsPosition) {
  const Config c = MustParse(R"({"controller": {"max_step": 0.25}, "profile": "article"})");
  EXPECT_EQ(c.profile, "article");
  EXPECT_EQ(c.controller.step_limit, StepLimit::kBoth);  // from the profile
  EXPECT_EQ(c.controller.max_step, 0.25);                // from the document
  EXPECT_EQ(c.slow_start.window_ms, 0);
}

TEST(ConfigProfiles, KeysOverrideOneByOne) {
  const Config c =
      MustParse(R"({"controller": {"interval_ms": 2000}, "panic": {"enabled": false}})");
  Config expected = DefaultConfig();
  expected.controller.interval_ms = 2000;
  expected.panic.enabled = false;
  ExpectSameConfig(c, expected);
}

TEST(ConfigProfiles, UnknownProfileIsRejected) {
  const Status s = Parse(R"({"profile": "Article"})");
  EXPECT_EQ(s.code(), WT_ERR_CONFIG_INVALID);
  EXPECT_TRUE(Contains(s.message(), "/profile: must be one of \"default\", \"article\""));
}

// ---------------------------------------------------------------------------------------------
// Rules

TEST(ConfigRules, ReplaceTheDefaultListWholesale) {
  const Config c = MustParse(R"({"rules": [{"metric": "timeout_rate", "threshold": 0.05,
                                            "penalty": 1}]})");
  ASSERT_EQ(c.rules.size(), 1u);
  EXPECT_EQ(c.rules[0].metric, Metric::kTimeoutRate);
  EXPECT_EQ(c.rules[0].threshold, 0.05);
  EXPECT_EQ(c.rules[0].penalty, 1.0);

  // The article profile's rules are replaced the same way.
  EXPECT_EQ(MustParse(R"({"profile": "article", "rules": []})").rules.size(), 0u);
}

TEST(ConfigRules, EveryMetricSpellingParses) {
  std::set<std::string_view> names;
  for (int i = 0; i < kMetricCount; ++i) {
    const auto m = static_cast<Metric>(i);
    names.insert(MetricName(m));
    const std::string rule =
        IsLatencyMetric(m) ? R"("threshold_ms": 250)" : R"("threshold": 0.5)";
    const Config c = MustParse(R"({"rules": [{"metric": ")" + std::string(MetricName(m)) +
                               "\", " + rule + R"(, "penalty": 0.4}]})");
    ASSERT_EQ(c.rules.size(), 1u);
    EXPECT_EQ(c.rules[0].metric, m);
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(kMetricCount));
  EXPECT_TRUE(IsLatencyMetric(Metric::kLatencyMean));
  EXPECT_FALSE(IsLatencyMetric(Metric::kErrorRate));
}

TEST(ConfigRules, LatencyRulesTakeAbsoluteRelativeOrBoth) {
  const Config c = MustParse(R"({"rules": [
      {"metric": "latency_p95", "threshold_ms": 800, "penalty": 0.2},
      {"metric": "latency_mean", "relative": 3, "penalty": 0.2},
      {"metric": "latency_p99", "threshold_ms": 1500.5, "relative": 1.5, "penalty": 0.4}]})");
  ASSERT_EQ(c.rules.size(), 3u);
  EXPECT_EQ(c.rules[0].threshold, 800);
  EXPECT_EQ(c.rules[0].relative, 0);
  EXPECT_LT(c.rules[1].threshold, 0);
  EXPECT_EQ(c.rules[1].relative, 3);
  EXPECT_EQ(c.rules[2].threshold, 1500.5);
  EXPECT_EQ(c.rules[2].relative, 1.5);
}

struct BadCase {
  const char* json;
  wt_status code;
  const char* message;  // must appear in the message (path first)
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.json; }

class ConfigRejects : public ::testing::TestWithParam<BadCase> {};

TEST_P(ConfigRejects, WithCodeAndMessage) {
  const BadCase& c = GetParam();
  Config out = DefaultConfig();
  out.seed = 12345;  // sentinel: out-parameters are written only on success
  const Status s = ParseConfig(c.json, &out);
  EXPECT_EQ(s.code(), c.code) << s.message();
  EXPECT_TRUE(Contains(s.message(), c.message)) << "for " << c.json;
  EXPECT_EQ(out.seed, 12345u);
}

// Paths and names reach file names, messages and logs: no control characters, whichever key.
INSTANTIATE_TEST_SUITE_P(
    Text, ConfigRejects,
    ::testing::Values(
        BadCase{R"({"export": {"state_file": "/tmp/a\nb.state"}})", WT_ERR_CONFIG_INVALID,
                "/export/state_file: must not contain control characters"},
        BadCase{R"({"export": {"service_name": "orders\t1"}})", WT_ERR_CONFIG_INVALID,
                "/export/service_name: must not contain control characters"},
        BadCase{R"({"export": {"service_name": "a\u007fb"}})", WT_ERR_CONFIG_INVALID,
                "/export/service_name: must not contain control characters"}));

INSTANTIATE_TEST_SUITE_P(
    Rules, ConfigRejects,
    ::testing::Values(
        BadCase{R"({"rules": {}})", WT_ERR_CONFIG_INVALID, "/rules: must be an array"},
        BadCase{R"({"rules": [3]})", WT_ERR_CONFIG_INVALID, "/rules/0: must be an object, got 3"},
        BadCase{R"({"rules": [{"threshold": 0.1, "penalty": 0.2}]})", WT_ERR_CONFIG_INVALID,
                "/rules/0: missing \"metric\""},
        BadCase{R"({"rules": [{"metric": "cpu", "threshold": 0.1}]})", WT_ERR_CONFIG_INVALID,
                "/rules/0: missing \"penalty\""},
        BadCase{R"({"rules": [{"metric": "cpu", "penalty": 0.1}]})", WT_ERR_CONFIG_INVALID,
                "/rules/0: missing \"threshold\""},
        BadCase{R"({"rules": [{"metric": "latency_p99", "penalty": 0.1}]})",
                WT_ERR_CONFIG_INVALID, "/rules/0: a latency_p99 rule needs \"threshold_ms\""},
        BadCase{R"({"rules": [{"metric": "CPU", "threshold": 0.1, "penalty": 0.1}]})",
                WT_ERR_CONFIG_INVALID, "/rules/0/metric: must be one of \"latency_p99\""},
        BadCase{R"({"rules": [{"metric": "latency_p99", "threshold": 200, "penalty": 0.1}]})",
                WT_ERR_CONFIG_INVALID, "/rules/0/threshold: latency_p99 is a latency metric: "
                                       "spell its absolute threshold \"threshold_ms\""},
        BadCase{R"({"rules": [{"metric": "cpu", "threshold_ms": 200, "penalty": 0.1}]})",
                WT_ERR_CONFIG_INVALID, "/rules/0/threshold_ms: only latency metrics"},
        BadCase{R"({"rules": [{"metric": "error_rate", "threshold": 0.1, "relative": 2,
                    "penalty": 0.1}]})",
                WT_ERR_CONFIG_INVALID, "/rules/0/relative: only latency metrics take \"relative\""},
        BadCase{R"({"rules": [{"metric": "error_rate", "threshold": 0.1, "margin": 0.1,
                    "penalty": 0.1}]})",
                WT_ERR_CONFIG_INVALID, "/rules/0/margin: only resource metrics (cpu, memory, "
                                       "thread_pool, connection_pool) take \"margin\"; "
                                       "error_rate is a rate"},
        BadCase{R"({"rules": [{"metric": "latency_p99", "relative": 2, "margin": 0.1,
                    "penalty": 0.1}]})",
                WT_ERR_CONFIG_INVALID, "/rules/0/margin: only resource metrics (cpu, memory, "
                                       "thread_pool, connection_pool) take \"margin\"; "
                                       "latency_p99 is a latency metric"},
        BadCase{R"({"rules": [{"metric": "cpu", "threshold": 0.8, "margin": 1.5,
                    "penalty": 0.1}]})",
                WT_ERR_CONFIG_INVALID, "/rules/0/margin: must be in [0, 1], got 1.5"},
        BadCase{R"({"rules": [{"metric": "latency_p99", "relative": 0.5, "penalty": 0.1}]})",
                WT_ERR_CONFIG_INVALID, "/rules/0/relative: must be in [1, 1000], got 0.5"},
        BadCase{R"({"rules": [{"metric": "latency_p99", "threshold_ms": 0, "penalty": 0.1}]})",
                WT_ERR_CONFIG_INVALID, "/rules/0/threshold_ms: must be in (0, 86400000], got 0"},
        BadCase{R"({"rules": [{"metric": "cpu", "threshold": 80, "penalty": 0.1}]})",
                WT_ERR_CONFIG_INVALID, "/rules/0/threshold: must be in [0, 1], got 80"},
        BadCase{R"({"rules": [{"metric": "cpu", "threshold": -0.1, "penalty": 0.1}]})",
                WT_ERR_CONFIG_INVALID, "/rules/0/threshold: must be in [0, 1], got -0.1"},
        BadCase{R"({"rules": [{"metric": "cpu", "threshold": 0.5, "penalty": 0.1},
                              {"metric": "cpu", "threshold": 0.5, "penalty": 0.1},
                              {"metric": "memory", "threshold": 0.5, "penalty": 1.5}]})",
                WT_ERR_CONFIG_INVALID, "/rules/2/penalty: must be in (0, 1], got 1.5"},
        BadCase{R"({"rules": [{"metric": "cpu", "threshold": 0.5, "penalty": 0}]})",
                WT_ERR_CONFIG_INVALID, "/rules/0/penalty: must be in (0, 1], got 0"},
        BadCase{R"({"rules": [{"metric": "cpu", "threshold": "0.5", "penalty": 0.2}]})",
                WT_ERR_CONFIG_INVALID,
                "/rules/0/threshold: must be a number, got string \"0.5\""}));

TEST(ConfigRules, AtMost64) {
  std::string many = R"({"rules": [)";
  for (int i = 0; i < 65; ++i) {
    many += std::string(i ? "," : "") + R"({"metric": "cpu", "threshold": 0.9, "penalty": 0.1})";
  }
  const Status s = Parse(many + "]}");
  EXPECT_EQ(s.code(), WT_ERR_CONFIG_INVALID);
  EXPECT_TRUE(Contains(s.message(), "/rules: at most 64 rules are allowed, got 65"));

  many = R"({"rules": [)";
  for (int i = 0; i < 64; ++i) {
    many += std::string(i ? "," : "") + R"({"metric": "cpu", "threshold": 0.9, "penalty": 0.1})";
  }
  EXPECT_EQ(MustParse(many + "]}").rules.size(), 64u);
}

// ---------------------------------------------------------------------------------------------
// Malformed JSON: line and column

struct SyntaxCase {
  const char* json;
  const char* position;  // "line L, column C"
  const char* detail;    // what was expected or found
};

void PrintTo(const SyntaxCase& c, std::ostream* os) { *os << ::testing::PrintToString(c.json); }

class ConfigSyntax : public ::testing::TestWithParam<SyntaxCase> {};

TEST_P(ConfigSyntax, NamesLineAndColumn) {
  const Status s = Parse(GetParam().json);
  EXPECT_EQ(s.code(), WT_ERR_CONFIG_PARSE) << s.message();
  EXPECT_TRUE(Contains(s.message(), GetParam().position));
  EXPECT_TRUE(Contains(s.message(), GetParam().detail));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ConfigSyntax,
    ::testing::Values(
        SyntaxCase{"", "line 1, column 1", "unexpected end of input"},
        SyntaxCase{"{", "line 1, column 2", "expected string literal"},
        // A trailing comma: the parser stops at the closing brace on line 4.
        SyntaxCase{"{\n  \"controller\": {\n    \"interval_ms\": 5000,\n  }\n}",
                   "line 4, column 3", "expected string literal"},
        // A missing comma between two members.
        // Positions are where the parser stopped: the end of the unexpected token.
        SyntaxCase{"{\n  \"seed\": 1\n  \"profile\": \"default\"\n}", "line 3, column 11",
                   "expected '}'"},
        // A misspelt literal: reported at its first wrong character.
        SyntaxCase{"{\n  \"panic\": {\"enabled\": ture}\n}", "line 2, column 25",
                   "invalid literal"},
        SyntaxCase{"{} x", "line 1, column 4", "expected end of input"},
        SyntaxCase{"{'seed': 1}", "line 1, column 2", "invalid literal"},
        SyntaxCase{"{\"seed\": NaN}", "line 1, column 10", "invalid literal"},
        // Columns count characters, not bytes: "é" is two bytes.
        SyntaxCase{"{\"$schema\": \"\xC3\xA9\", x}", "line 1, column 18", "invalid literal"},
        // nlohmann throws this one without a position; the parser finds the token itself.
        SyntaxCase{"{\n  \"seed\": 1e400\n}", "line 2, column 11", "1e400 is too large"}));

// ---------------------------------------------------------------------------------------------
// Unknown keys at every level

class ConfigUnknownKey : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(ConfigUnknownKey, IsRejectedWithItsPath) {
  const auto& [doc, path] = GetParam();
  const Status s = Parse(doc);
  EXPECT_EQ(s.code(), WT_ERR_CONFIG_INVALID) << s.message();
  EXPECT_TRUE(Contains(s.message(), std::string(path) + ": unknown key"));
}

INSTANTIATE_TEST_SUITE_P(
    EveryLevel, ConfigUnknownKey,
    ::testing::Values(
        std::pair{R"({"bogus": 1})", "/bogus"},
        std::pair{R"({"controller": {"bogus": 1}})", "/controller/bogus"},
        std::pair{R"({"window": {"bogus": 1}})", "/window/bogus"},
        std::pair{R"({"rules": [{"metric": "cpu", "threshold": 0.5, "penalty": 0.1,
                                 "bogus": 1}]})", "/rules/0/bogus"},
        std::pair{R"({"isolation": {"bogus": 1}})", "/isolation/bogus"},
        std::pair{R"({"panic": {"bogus": 1}})", "/panic/bogus"},
        std::pair{R"({"slow_start": {"bogus": 1}})", "/slow_start/bogus"},
        std::pair{R"({"picker": {"bogus": 1}})", "/picker/bogus"},
        std::pair{R"({"events": {"bogus": 1}})", "/events/bogus"},
        std::pair{R"({"limits": {"bogus": 1}})", "/limits/bogus"},
        // RFC 6901 escaping of "/" and "~" in a key.
        std::pair{R"({"controller": {"a/b~c": 1}})", "/controller/a~1b~0c"}));

TEST(ConfigUnknownKey, SuggestsTheNearestKey) {
  const Status s = Parse(R"({"controller": {"intreval_ms": 5000}})");
  EXPECT_TRUE(Contains(s.message(), "/controller/intreval_ms: unknown key; did you mean "
                                     "\"interval_ms\"?"));
}

TEST(ConfigUnknownKey, NamesTheLevelWhereTheKeyBelongs) {
  const Status s = Parse(R"({"cooldown_ms": 10000})");
  EXPECT_TRUE(Contains(s.message(), "/cooldown_ms: unknown key; \"cooldown_ms\" belongs in "
                                     "/controller"));
}

TEST(ConfigUnknownKey, NamesEveryLevelWhereTheKeyBelongs) {
  const Status s = Parse(R"({"threshold": 0.5})");
  EXPECT_TRUE(Contains(s.message(), "/threshold: unknown key; \"threshold\" belongs in /rules/N "
                                    "or /panic"));
}

TEST(ConfigUnknownKey, AnExactKeyElsewhereBeatsANearOneHere) {
  const Status s = Parse(R"({"window_ms": 1000})");
  EXPECT_TRUE(Contains(s.message(), "/window_ms: unknown key; \"window_ms\" belongs in "
                                    "/slow_start"));
}

TEST(ConfigUnknownKey, ListsTheKnownKeysOtherwise) {
  const Status s = Parse(R"({"events": {"zzzzzz": 1}})");
  EXPECT_TRUE(Contains(s.message(), "(expected one of: queue_capacity)"));
}

TEST(ConfigDuplicateKey, IsRejectedWithItsPath) {
  Status s = Parse(R"({"controller": {"interval_ms": 5000, "interval_ms": 50}})");
  EXPECT_EQ(s.code(), WT_ERR_CONFIG_INVALID);
  EXPECT_TRUE(Contains(s.message(), "/controller/interval_ms: duplicate key"));
  s = Parse(R"({"rules": [{"metric": "cpu", "threshold": 0.5, "penalty": 0.1},
                          {"metric": "cpu", "metric": "memory"}]})");
  EXPECT_TRUE(Contains(s.message(), "/rules/1/metric: duplicate key"));
  // The same key in two different objects is fine.
  MustParse(R"({"panic": {"threshold": 0.1}, "rules": [
               {"metric": "cpu", "threshold": 0.5, "penalty": 0.1}]})");
}

// ---------------------------------------------------------------------------------------------
// Wrong types, out-of-range values, integers

INSTANTIATE_TEST_SUITE_P(
    WrongTypes, ConfigRejects,
    ::testing::Values(
        BadCase{"[]", WT_ERR_CONFIG_INVALID, "(document): must be an object, got an array"},
        BadCase{"42", WT_ERR_CONFIG_INVALID, "(document): must be an object, got 42"},
        BadCase{R"({"$schema": 1})", WT_ERR_CONFIG_INVALID, "/$schema: must be a string"},
        BadCase{R"({"profile": null})", WT_ERR_CONFIG_INVALID, "/profile: must be one of"},
        BadCase{R"({"seed": "7"})", WT_ERR_CONFIG_INVALID, "/seed: must be an integer"},
        BadCase{R"({"controller": []})", WT_ERR_CONFIG_INVALID,
                "/controller: must be an object, got an array"},
        BadCase{R"({"controller": {"interval_ms": "5000"}})", WT_ERR_CONFIG_INVALID,
                "/controller/interval_ms: must be an integer, got string \"5000\""},
        BadCase{R"({"controller": {"max_step": "NaN"}})", WT_ERR_CONFIG_INVALID,
                "/controller/max_step: must be a number, got string \"NaN\""},
        BadCase{R"({"controller": {"max_step": "Infinity"}})", WT_ERR_CONFIG_INVALID,
                "/controller/max_step: must be a number, got string \"Infinity\""},
        BadCase{R"({"controller": {"step_limit": true}})", WT_ERR_CONFIG_INVALID,
                "/controller/step_limit: must be one of \"increases_only\", \"both\", got "
                "boolean true"},
        BadCase{R"({"window": {"min_requests": null}})", WT_ERR_CONFIG_INVALID,
                "/window/min_requests: must be an integer, got null"},
        BadCase{R"({"panic": {"enabled": "true"}})", WT_ERR_CONFIG_INVALID,
                "/panic/enabled: must be true or false, got string \"true\""},
        BadCase{R"({"panic": {"enabled": 1}})", WT_ERR_CONFIG_INVALID,
                "/panic/enabled: must be true or false, got 1"},
        BadCase{R"({"picker": {"mode": "fastest"}})", WT_ERR_CONFIG_INVALID,
                "/picker/mode: must be one of \"weighted\", \"load_aware\", got string "
                "\"fastest\""},
        BadCase{R"({"limits": {"max_latency_ms": {}}})", WT_ERR_CONFIG_INVALID,
                "/limits/max_latency_ms: must be a number, got an object"}));

INSTANTIATE_TEST_SUITE_P(
    OutOfRange, ConfigRejects,
    ::testing::Values(
        BadCase{R"({"controller": {"interval_ms": 5}})", WT_ERR_CONFIG_INVALID,
                "/controller/interval_ms: must be an integer in [10, 86400000], got 5"},
        BadCase{R"({"controller": {"interval_ms": 86400001}})", WT_ERR_CONFIG_INVALID,
                "/controller/interval_ms: must be an integer in [10, 86400000]"},
        BadCase{R"({"controller": {"interval_ms": -5000}})", WT_ERR_CONFIG_INVALID,
                "/controller/interval_ms: must be an integer in [10, 86400000], got -5000"},
        BadCase{R"({"controller": {"max_step": 0}})", WT_ERR_CONFIG_INVALID,
                "/controller/max_step: must be in (0, 1], got 0"},
        BadCase{R"({"controller": {"max_step": 1.01}})", WT_ERR_CONFIG_INVALID,
                "/controller/max_step: must be in (0, 1], got 1.01"},
        BadCase{R"({"controller": {"cooldown_ms": -1}})", WT_ERR_CONFIG_INVALID,
                "/controller/cooldown_ms: must be an integer in [0, 86400000], got -1"},
        BadCase{R"({"window": {"length_ms": -10000}})", WT_ERR_CONFIG_INVALID,
                "/window/length_ms: must be an integer in [10, 86400000], got -10000"},
        BadCase{R"({"window": {"min_requests": 0}})", WT_ERR_CONFIG_INVALID,
                "/window/min_requests: must be an integer in [1, 1000000], got 0"},
        BadCase{R"({"isolation": {"probe_share": 1.5}})", WT_ERR_CONFIG_INVALID,
                "/isolation/probe_share: must be in [0, 1], got 1.5"},
        BadCase{R"({"isolation": {"probe_min_per_s": 1001}})", WT_ERR_CONFIG_INVALID,
                "/isolation/probe_min_per_s: must be in [0, 1000], got 1001"},
        BadCase{R"({"isolation": {"probe_min_per_s": -1}})", WT_ERR_CONFIG_INVALID,
                "/isolation/probe_min_per_s: must be in [0, 1000], got -1"},
        BadCase{R"({"isolation": {"exit_min_probes": 0}})", WT_ERR_CONFIG_INVALID,
                "/isolation/exit_min_probes: must be an integer in [1, 1000000], got 0"},
        BadCase{R"({"isolation": {"max_ms": -30000}})", WT_ERR_CONFIG_INVALID,
                "/isolation/max_ms: must be an integer in [1, 86400000], got -30000"},
        BadCase{R"({"isolation": {"restore_fraction": 0}})", WT_ERR_CONFIG_INVALID,
                "/isolation/restore_fraction: must be in (0, 1], got 0"},
        BadCase{R"({"panic": {"threshold": 1.2}})", WT_ERR_CONFIG_INVALID,
                "/panic/threshold: must be in [0, 1], got 1.2"},
        BadCase{R"({"slow_start": {"window_ms": -1}})", WT_ERR_CONFIG_INVALID,
                "/slow_start/window_ms: must be an integer in [0, 86400000], got -1"},
        BadCase{R"({"slow_start": {"min_fraction": 0}})", WT_ERR_CONFIG_INVALID,
                "/slow_start/min_fraction: must be in (0, 1], got 0"},
        BadCase{R"({"slow_start": {"aggression": 0}})", WT_ERR_CONFIG_INVALID,
                "/slow_start/aggression: must be > 0, got 0"},
        BadCase{R"({"picker": {"latency_decay_ms": 0}})", WT_ERR_CONFIG_INVALID,
                "/picker/latency_decay_ms: must be an integer in [1, 86400000], got 0"},
        BadCase{R"({"events": {"queue_capacity": 0}})", WT_ERR_CONFIG_INVALID,
                "/events/queue_capacity: must be an integer in [1, 1000000], got 0"},
        BadCase{R"({"events": {"queue_capacity": 1000001}})", WT_ERR_CONFIG_INVALID,
                "/events/queue_capacity: must be an integer in [1, 1000000], got 1000001"},
        BadCase{R"({"events": {"queue_capacity": -1}})", WT_ERR_CONFIG_INVALID,
                "/events/queue_capacity: must be an integer in [1, 1000000], got -1"},
        BadCase{R"({"limits": {"max_services": 0}})", WT_ERR_CONFIG_INVALID,
                "/limits/max_services: must be an integer in [1, 1000000], got 0"},
        BadCase{R"({"limits": {"max_endpoints_per_service": 0}})", WT_ERR_CONFIG_INVALID,
                "/limits/max_endpoints_per_service: must be an integer in [1, 1000000], got 0"},
        BadCase{R"({"limits": {"max_latency_ms": 0}})", WT_ERR_CONFIG_INVALID,
                "/limits/max_latency_ms: must be in (0, 86400000], got 0"},
        BadCase{R"({"limits": {"max_config_bytes": 2097152}})", WT_ERR_CONFIG_INVALID,
                "/limits/max_config_bytes: must be an integer in [16384, 1048576], got 2097152"},
        BadCase{R"({"seed": -1})", WT_ERR_CONFIG_INVALID,
                "/seed: must be an integer in [0, 18446744073709551615], got -1"},
        BadCase{R"({"seed": 18446744073709551616})", WT_ERR_CONFIG_INVALID,
                "/seed: must be an integer in [0, 18446744073709551615]"}));

INSTANTIATE_TEST_SUITE_P(
    NonIntegers, ConfigRejects,
    ::testing::Values(
        BadCase{R"({"controller": {"interval_ms": 1.5}})", WT_ERR_CONFIG_INVALID,
                "/controller/interval_ms: must be an integer, got 1.5"},
        BadCase{R"({"window": {"min_requests": 10.5}})", WT_ERR_CONFIG_INVALID,
                "/window/min_requests: must be an integer, got 10.5"},
        BadCase{R"({"seed": 0.5})", WT_ERR_CONFIG_INVALID, "/seed: must be an integer"},
        BadCase{R"({"events": {"queue_capacity": 1e-3}})", WT_ERR_CONFIG_INVALID,
                "/events/queue_capacity: must be an integer, got 0.001"}));

TEST(ConfigIntegers, WholeFloatsCountAsIntegers) {
  // As in JSON Schema; Python's json module writes whole floats this way.
  const Config c = MustParse(R"({"controller": {"interval_ms": 2000.0},
                                 "events": {"queue_capacity": 1e3}, "seed": 7.0})");
  EXPECT_EQ(c.controller.interval_ms, 2000);
  EXPECT_EQ(c.events.queue_capacity, 1000u);
  EXPECT_EQ(c.seed, 7u);
}

TEST(ConfigIntegers, SeedTakesTheWholeUint64Range) {
  EXPECT_EQ(MustParse(R"({"seed": 18446744073709551615})").seed, 18446744073709551615u);
}

TEST(ConfigIntegers, BoundariesAreInclusive) {
  const Config c = MustParse(R"({"controller": {"interval_ms": 10, "max_step": 1,
      "cooldown_ms": 0}, "window": {"length_ms": 10000, "min_requests": 1},
      "isolation": {"probe_share": 0, "probe_min_per_s": 1000, "max_ms": 86400000},
      "panic": {"threshold": 0}, "slow_start": {"window_ms": 0, "min_fraction": 1},
      "limits": {"max_config_bytes": 1048576}})");
  EXPECT_EQ(c.controller.interval_ms, 10);
  EXPECT_EQ(c.window.length_ms, 10000);  // exactly 1000 cycles: the slot bound is inclusive
  const Config d = MustParse(R"({"controller": {"interval_ms": 86400},
      "window": {"length_ms": 86400000}, "isolation": {"max_ms": 86400000}})");
  EXPECT_EQ(d.window.length_ms, 86400000);
}

// ---------------------------------------------------------------------------------------------
// Contradictions: each message says why the combination cannot work

INSTANTIATE_TEST_SUITE_P(
    Contradictions, ConfigRejects,
    ::testing::Values(
        // The key the document sets is blamed, not the default it contradicts.
        BadCase{R"({"window": {"length_ms": 4000}})", WT_ERR_CONFIG_INVALID,
                "/window/length_ms: window.length_ms (4000) is shorter than "
                "controller.interval_ms (5000); each cycle judges the last window"},
        BadCase{R"({"controller": {"interval_ms": 20000}})", WT_ERR_CONFIG_INVALID,
                "/controller/interval_ms: window.length_ms (10000) is shorter than "
                "controller.interval_ms (20000)"},
        BadCase{R"({"controller": {"interval_ms": 10}, "window": {"length_ms": 86400000}})",
                WT_ERR_CONFIG_INVALID, "/window/length_ms: window.length_ms (86400000) spans more "
                "than 1000 controller cycles"},
        BadCase{R"({"controller": {"interval_ms": 20000}, "window": {"length_ms": 15000}})",
                WT_ERR_CONFIG_INVALID, "/window/length_ms: window.length_ms (15000)"},
        BadCase{R"({"isolation": {"max_ms": 1000}})", WT_ERR_CONFIG_INVALID,
                "/isolation/max_ms: isolation.max_ms (1000) is shorter than "
                "controller.interval_ms (5000); isolation is reviewed once per cycle"},
        BadCase{R"({"isolation": {"probe_share": 0, "probe_min_per_s": 0}})",
                WT_ERR_CONFIG_INVALID,
                "/isolation/probe_min_per_s: with probe_share 0 an isolated endpoint is only "
                "guaranteed probe_min_per_s x window.length_ms = 0 probes per window, fewer than "
                "exit_min_probes (3): it could never leave isolation"},
        BadCase{R"({"isolation": {"probe_share": 0, "exit_min_probes": 20}})",
                WT_ERR_CONFIG_INVALID, "/isolation/exit_min_probes: with probe_share 0"},
        BadCase{R"({"rules": [{"metric": "latency_p99", "threshold_ms": 5000, "penalty": 0.3}],
                    "limits": {"max_latency_ms": 1000}})",
                WT_ERR_CONFIG_INVALID,
                "/rules/0/threshold_ms: rules[0].threshold_ms (5000) is above "
                "limits.max_latency_ms (1000)"}));

TEST(ConfigContradictions, ProbeShareAloneIsEnough) {
  // With a share of a healthy endpoint's traffic the guaranteed minimum may be zero.
  const Config c = MustParse(R"({"isolation": {"probe_share": 0.05, "probe_min_per_s": 0}})");
  EXPECT_EQ(c.isolation.probe_min_per_s, 0);
}

// ---------------------------------------------------------------------------------------------
// Size limits

TEST(ConfigLimits, OversizeDocumentIsRejectedBeforeParsing) {
  // Not even JSON: the size check comes first.
  const std::string big(Config{}.limits.max_config_bytes + 1, '[');
  const Status s = Parse(big);
  EXPECT_EQ(s.code(), WT_ERR_LIMIT);
  EXPECT_TRUE(Contains(s.message(), "1048577 bytes, over the limit of 1048576"));
}

TEST(ConfigLimits, ExactlyAtTheLimitParses) {
  std::string doc = "{}";
  doc.insert(1, Config{}.limits.max_config_bytes - doc.size(), ' ');
  ASSERT_EQ(doc.size(), Config{}.limits.max_config_bytes);
  MustParse(doc);
}

TEST(ConfigLimits, DocumentLargerThanItsOwnLimit) {
  std::string doc = R"({"limits": {"max_config_bytes": 16384}})";
  doc.insert(1, 16384, ' ');
  const Status s = Parse(doc);
  EXPECT_EQ(s.code(), WT_ERR_LIMIT);
  EXPECT_TRUE(Contains(s.message(), "/limits/max_config_bytes: this document is " +
                                     std::to_string(doc.size()) + " bytes, more than the 16384"));
  EXPECT_EQ(MustParse(R"({"limits": {"max_config_bytes": 16384}})").limits.max_config_bytes, 16384u);
  // Lower limits are refused: the resolved form of the document would not fit them.
  EXPECT_TRUE(Contains(Parse(R"({"limits": {"max_config_bytes": 100}})").message(),
                       "/limits/max_config_bytes: must be an integer in [16384, 1048576], got 100"));
}

// ---------------------------------------------------------------------------------------------
// Misc API behaviour

TEST(ConfigApi, NullOutIsAnInvalidArgument) {
  EXPECT_EQ(ParseConfig("{}", nullptr).code(), WT_ERR_INVALID_ARGUMENT);
}

TEST(ConfigApi, EmptyViewIsASyntaxError) {
  Config c;
  const Status s = ParseConfig(std::string_view(), &c);
  EXPECT_EQ(s.code(), WT_ERR_CONFIG_PARSE);
  EXPECT_TRUE(Contains(s.message(), "line 1, column 1"));
}

TEST(ConfigApi, DeepNestingIsRejectedWithoutCrashing) {
  std::string deep = R"({"controller": )";
  deep += std::string(100000, '[') + std::string(100000, ']') + "}";
  const Status s = Parse(deep);
  EXPECT_EQ(s.code(), WT_ERR_CONFIG_INVALID);
  EXPECT_TRUE(Contains(s.message(), "/controller: must be an object, got an array"));
  EXPECT_EQ(Parse(std::string(Config{}.limits.max_config_bytes, '[')).code(), WT_ERR_CONFIG_PARSE);
}

TEST(ConfigApi, SchemaKeyIsAcceptedAndIgnored) {
  ExpectSameConfig(MustParse(R"({"$schema": "../../docs/config.schema.json"})"), DefaultConfig());
}

TEST(ConfigApi, InputNeedNotBeNulTerminated) {
  const std::string text = R"({"seed": 42}garbage)";
  Config c;
  ASSERT_TRUE(ParseConfig(std::string_view(text).substr(0, 12), &c).ok());
  EXPECT_EQ(c.seed, 42u);
}

}  // namespace
}  // namespace weighted
