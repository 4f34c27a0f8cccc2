// The config parser and validator (core/src/config*.cc), the profiles, and the documents that
// describe the config (docs/config.schema.json, docs/config.md, examples/config/*.json), so that
// code and docs cannot drift apart.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "config/config.h"

namespace weighted {
namespace {

using json = nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Helpers

// Prints both strings on failure (gmock's HasSubstr without linking gmock).
::testing::AssertionResult Contains(const std::string& haystack, const std::string& needle) {
  if (haystack.find(needle) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\n  \"" << haystack << "\"\ndoes not contain\n  \""
                                       << needle << "\"";
}

void ExpectSameConfig(const Config& a, const Config& b) {
  EXPECT_EQ(a.profile, b.profile);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.controller.interval_ms, b.controller.interval_ms);
  EXPECT_EQ(a.controller.max_step, b.controller.max_step);
  EXPECT_EQ(a.controller.cooldown_ms, b.controller.cooldown_ms);
  EXPECT_EQ(a.controller.step_limit, b.controller.step_limit);
  EXPECT_EQ(a.window.length_ms, b.window.length_ms);
  EXPECT_EQ(a.window.min_requests, b.window.min_requests);
  ASSERT_EQ(a.rules.size(), b.rules.size());
  for (size_t i = 0; i < a.rules.size(); ++i) {
    SCOPED_TRACE("rule " + std::to_string(i));
    EXPECT_EQ(a.rules[i].metric, b.rules[i].metric);
    EXPECT_EQ(a.rules[i].threshold, b.rules[i].threshold);
    EXPECT_EQ(a.rules[i].relative, b.rules[i].relative);
    EXPECT_EQ(a.rules[i].penalty, b.rules[i].penalty);
  }
  EXPECT_EQ(a.isolation.probe_share, b.isolation.probe_share);
  EXPECT_EQ(a.isolation.probe_min_per_s, b.isolation.probe_min_per_s);
  EXPECT_EQ(a.isolation.exit_min_probes, b.isolation.exit_min_probes);
  EXPECT_EQ(a.isolation.max_ms, b.isolation.max_ms);
  EXPECT_EQ(a.isolation.restore_fraction, b.isolation.restore_fraction);
  EXPECT_EQ(a.panic.enabled, b.panic.enabled);
  EXPECT_EQ(a.panic.threshold, b.panic.threshold);
  EXPECT_EQ(a.slow_start.window_ms, b.slow_start.window_ms);
  EXPECT_EQ(a.slow_start.min_fraction, b.slow_start.min_fraction);
  EXPECT_EQ(a.slow_start.aggression, b.slow_start.aggression);
  EXPECT_EQ(a.picker.mode, b.picker.mode);
  EXPECT_EQ(a.picker.latency_decay_ms, b.picker.latency_decay_ms);
  EXPECT_EQ(a.events.queue_capacity, b.events.queue_capacity);
  EXPECT_EQ(a.limits.max_config_bytes, b.limits.max_config_bytes);
  EXPECT_EQ(a.limits.max_services, b.limits.max_services);
  EXPECT_EQ(a.limits.max_endpoints_per_service, b.limits.max_endpoints_per_service);
  EXPECT_EQ(a.limits.max_latency_ms, b.limits.max_latency_ms);
  // Catches a field added to the struct and to ConfigToJson but not to this helper.
  EXPECT_EQ(ConfigToJson(a), ConfigToJson(b));
}

Config MustParse(const std::string& text) {
  Config c;
  const Status s = ParseConfig(text, &c);
  EXPECT_TRUE(s.ok()) << s.message() << "\nin: " << text;
  return c;
}

Status Parse(const std::string& text) {
  Config c;
  return ParseConfig(text, &c);
}

// WT_SOURCE_DIR may be defined as a string literal or as bare tokens; accept both. Without it
// (or if it is wrong), walk up from the working directory, which works from any build folder.
std::filesystem::path SourceDir() {
#define WT_STRINGIFY_INNER(x) #x
#define WT_STRINGIFY(x) WT_STRINGIFY_INNER(x)
#ifdef WT_SOURCE_DIR
  std::string defined = WT_STRINGIFY(WT_SOURCE_DIR);
  if (defined.size() >= 2 && defined.front() == '"' && defined.back() == '"') {
    defined = defined.substr(1, defined.size() - 2);
  }
  if (std::filesystem::exists(std::filesystem::path(defined) / "docs/config.schema.json")) {
    return defined;
  }
#endif
  for (auto dir = std::filesystem::current_path(); !dir.empty(); dir = dir.parent_path()) {
    if (std::filesystem::exists(dir / "docs/config.schema.json")) return dir;
    if (dir == dir.parent_path()) break;
  }
  return ".";
}

std::string ReadFile(const std::string& relative) {
  const auto path = SourceDir() / relative;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

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

  // S-W2: P99 over its threshold adds 0.3, error rate over 1% adds 0.5, CPU over 80% adds 0.2.
  ASSERT_EQ(c.rules.size(), 3u);
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
  Config same_rules = a;
  same_rules.rules = DefaultRules();
  ExpectSameConfig(same_rules, a);
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

// ---------------------------------------------------------------------------------------------
// Round trip

Config EveryFieldChanged() {
  Config c = ArticleConfig();
  c.seed = 18446744073709551615u;
  c.controller = {2500, 0.05, 7500, StepLimit::kIncreasesOnly};
  c.window = {20000, 25};
  c.rules = {{Metric::kLatencyP95, 300.25, 0, 0.1},
             {Metric::kLatencyMean, -1, 1.75, 0.2},
             {Metric::kLatencyP99, 900, 3, 1},
             {Metric::kHttp5xxRate, 0.05, 0, 0.3},
             {Metric::kConnectErrorRate, 0, 0, 0.15},
             {Metric::kBusinessErrorRate, 1, 0, 0.01},
             {Metric::kMemory, 0.9, 0, 0.25},
             {Metric::kThreadPool, 0.95, 0, 0.2},
             {Metric::kConnectionPool, 0.85, 0, 0.2}};
  c.isolation = {0.1, 2.5, 5, 60000, 0.3};
  c.panic = {false, 0.35};
  c.slow_start = {45000, 0.2, 1.5};
  c.picker = {PickMode::kLoadAware, 2000};
  c.events = {4096};
  c.limits = {65536, 16, 1000, 120000.5};
  return c;
}

TEST(ConfigRoundTrip, ReproducesTheConfigExactly) {
  for (const Config& original : {DefaultConfig(), ArticleConfig(), EveryFieldChanged()}) {
    SCOPED_TRACE(original.profile);
    const std::string text = ConfigToJson(original);
    ExpectSameConfig(MustParse(text), original);
  }
}

TEST(ConfigRoundTrip, AwkwardDoublesSurvive) {
  Config c = DefaultConfig();
  c.controller.max_step = 0.1 + 0.2;  // 0.30000000000000004
  c.rules[0].relative = 1.0000000000000002;
  c.limits.max_latency_ms = 1234.5678901234567;
  ExpectSameConfig(MustParse(ConfigToJson(c)), c);
}

TEST(ConfigRoundTrip, WritesEveryKey) {
  const json j = json::parse(ConfigToJson(DefaultConfig()));
  const std::set<std::string> top = {"profile", "seed",   "controller", "window", "rules",
                                     "isolation", "panic", "slow_start", "picker", "events",
                                     "limits"};
  std::set<std::string> got;
  for (const auto& [k, v] : j.items()) got.insert(k);
  EXPECT_EQ(got, top);
  EXPECT_EQ(j["controller"].size(), 4u);
  EXPECT_EQ(j["window"].size(), 2u);
  EXPECT_EQ(j["isolation"].size(), 5u);
  EXPECT_EQ(j["panic"].size(), 2u);
  EXPECT_EQ(j["slow_start"].size(), 3u);
  EXPECT_EQ(j["picker"].size(), 4u);
  EXPECT_EQ(j["events"].size(), 1u);
  EXPECT_EQ(j["limits"].size(), 4u);
  // S-W2, spelled exactly as docs/config.md shows it.
  EXPECT_EQ(j["rules"], json::parse(R"([
      {"metric": "latency_p99", "relative": 2.0, "penalty": 0.3},
      {"metric": "error_rate", "threshold": 0.01, "penalty": 0.5},
      {"metric": "cpu", "threshold": 0.8, "penalty": 0.2}])"));
}

// ---------------------------------------------------------------------------------------------
// The documents that describe the config

const json& Deref(const json& schema, const json& node) {
  if (!node.contains("$ref")) return node;
  const std::string ref = node["$ref"].get<std::string>();
  EXPECT_EQ(ref.rfind("#/", 0), 0u) << "only local $ref: " << ref;
  return schema.at(json::json_pointer(ref.substr(1)));
}

// Every key of `value` is a property of `node`, every object forbids other keys, and every
// "default" in the schema equals the default profile's value. With `exact`, the reverse too:
// every schema property is a key the code writes.
void CheckAgainstSchema(const json& schema, const json& node_in, const json& value,
                        const std::string& path, bool exact) {
  SCOPED_TRACE(path);
  const json& node = Deref(schema, node_in);
  if (node.contains("default")) {
    EXPECT_EQ(node["default"], value);
  }
  EXPECT_TRUE(node.contains("description")) << "no description";
  if (value.is_object()) {
    ASSERT_TRUE(node.contains("properties"));
    EXPECT_EQ(node.value("additionalProperties", true), false);
    const json& props = node["properties"];
    for (const auto& [key, child] : value.items()) {
      ASSERT_TRUE(props.contains(key)) << path + "/" + key << " is not in the schema";
      CheckAgainstSchema(schema, props[key], child, path + "/" + key, exact);
    }
    if (exact) {
      for (const auto& [key, child] : props.items()) {
        if (key != "$schema") {
          EXPECT_TRUE(value.contains(key)) << key << " is only in the schema";
        }
      }
    }
  } else if (value.is_array()) {
    ASSERT_TRUE(node.contains("items"));
    for (size_t i = 0; i < value.size(); ++i) {
      CheckAgainstSchema(schema, node["items"], value[i], path + "/" + std::to_string(i), false);
    }
  }
}

TEST(ConfigDocs, SchemaCoversEveryKeyWithItsDefault) {
  const json schema = json::parse(ReadFile("docs/config.schema.json"));
  EXPECT_EQ(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
  CheckAgainstSchema(schema, schema, json::parse(ConfigToJson(DefaultConfig())), "", true);
  // Rule objects: the union of keys over both kinds of rule.
  const json& rule = Deref(schema, schema["properties"]["rules"]["items"]);
  std::set<std::string> keys;
  for (const auto& [k, v] : rule["properties"].items()) keys.insert(k);
  EXPECT_EQ(keys, (std::set<std::string>{"metric", "threshold", "threshold_ms", "relative",
                                         "penalty"}));
  std::set<std::string> metrics;
  for (int i = 0; i < kMetricCount; ++i) metrics.insert(std::string(MetricName(Metric(i))));
  std::set<std::string> schema_metrics;
  for (const auto& m : rule["properties"]["metric"]["enum"]) {
    schema_metrics.insert(m.get<std::string>());
  }
  EXPECT_EQ(schema_metrics, metrics);
  // The article profile's rules and every rule shape fit too.
  const json rules = json::parse(ConfigToJson(EveryFieldChanged()))["rules"];
  for (size_t i = 0; i < rules.size(); ++i) {
    CheckAgainstSchema(schema, rule, rules[i], "/rules/" + std::to_string(i), false);
  }
}

TEST(ConfigDocs, ReferenceMentionsEveryKey) {
  const std::string md = ReadFile("docs/config.md");
  const json j = json::parse(ConfigToJson(DefaultConfig()));
  for (const auto& [section, value] : j.items()) {
    if (value.is_object()) {
      for (const auto& [key, v] : value.items()) {
        EXPECT_TRUE(Contains(md, "`" + section + "." + key + "`"));
      }
    } else if (section != "rules") {
      EXPECT_TRUE(Contains(md, "`" + section + "`"));
    }
  }
  for (const char* key : {"metric", "threshold", "threshold_ms", "relative", "penalty"}) {
    EXPECT_TRUE(Contains(md, std::string("`rules[].") + key + "`"));
  }
}

TEST(ConfigDocs, ReferenceExamplesParse) {
  const std::string md = ReadFile("docs/config.md");
  int blocks = 0;
  for (size_t at = md.find("```json\n"); at != std::string::npos; at = md.find("```json\n", at)) {
    at += 8;
    const size_t end = md.find("```", at);
    ASSERT_NE(end, std::string::npos);
    SCOPED_TRACE(md.substr(at, end - at));
    MustParse(md.substr(at, end - at));
    ++blocks;
  }
  EXPECT_GE(blocks, 2);
}

TEST(ConfigDocs, ExamplesParseToTheirProfiles) {
  ExpectSameConfig(MustParse(ReadFile("examples/config/default.json")), DefaultConfig());
  ExpectSameConfig(MustParse(ReadFile("examples/config/article.json")), ArticleConfig());
}

}  // namespace
}  // namespace weighted
