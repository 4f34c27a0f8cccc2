// The config's serialised forms against the code: ConfigToJson's round trip, and the documents
// that describe the config (docs/config.schema.json, docs/config.md, examples/config/). The key
// table itself against them is config_keys_test.cc.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "config/config.h"
#include "config/keys.h"
#include "config_test_helpers.h"

namespace weighted {
namespace {

using json = nlohmann::json;
using config_keys::ConfigKeys;
using config_keys::DocumentLayout;
using config_keys::Key;
using config_keys::KeyType;
using config_keys::RuleKeys;
using config_test::Contains;
using config_test::ExpectSameConfig;
using config_test::MustParse;
using config_test::Parse;
using config_test::ReadFile;

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
             {Metric::kConnectionPool, 0.85, 0, 0.2, 0.1},
             {Metric::kCpu, 0.7, 0, 0.2, 0}};
  c.isolation = {0.1, 2.5, 5, 60000, 0.3};
  c.panic = {false, 0.35};
  c.slow_start = {45000, 0.2, 1.5};
  c.picker = {PickMode::kLoadAware, 2000, 250, 0.05};
  c.events = {4096};
  c.load_report = {ResourceSource::kClient, 2500, "tomcat_busy", "hikari-active"};
  c.sources.prometheus = {"http://127.0.0.1:9090", 1000, 500, 4000, "pod",
                          {"process_cpu_usage", "jvm_memory_used_bytes / jvm_memory_max_bytes",
                           "tomcat_threads_busy_threads / tomcat_threads_config_max_threads",
                           "hikaricp_connections_active / hikaricp_connections_max"}};
  c.limits = {65536, 16, 1000, 120000.5};
  c.exports = {"/run/weighted/{service}-{pid}.state", "0640", "orders \"eu\"", 600, 4096};
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
                                     "isolation", "guard", "panic", "slow_start", "picker",
                                     "budget", "events", "subset",
                                      "load_report", "sources", "limits", "export"};
  std::set<std::string> got;
  for (const auto& [k, v] : j.items()) got.insert(k);
  EXPECT_EQ(got, top);
  EXPECT_EQ(j["controller"].size(), 5u);
  EXPECT_EQ(j["window"].size(), 3u);
  EXPECT_EQ(j["isolation"].size(), 6u);
  EXPECT_EQ(j["guard"].size(), 2u);
  EXPECT_EQ(j["panic"].size(), 2u);
  EXPECT_EQ(j["slow_start"].size(), 3u);
  EXPECT_EQ(j["picker"].size(), 4u);
  EXPECT_EQ(j["events"].size(), 1u);
  EXPECT_EQ(j["subset"].size(), 8u);
  EXPECT_EQ(j["limits"].size(), 4u);
  EXPECT_EQ(j["export"].size(), 5u);
  EXPECT_EQ(j["load_report"].size(), 5u);
  EXPECT_EQ(j["sources"].size(), 1u);
  EXPECT_EQ(j["sources"]["prometheus"].size(), 6u);
  EXPECT_EQ(j["sources"]["prometheus"]["queries"].size(), 6u);
  // S-W2, spelled exactly as docs/config.md shows it.
  EXPECT_EQ(j["rules"], json::parse(R"([
      {"metric": "latency_p99", "relative": 2.0, "penalty": 0.3},
      {"metric": "error_rate", "threshold": 0.01, "penalty": 0.5, "full_rate": 0.5, "full_penalty": 1.0},
      {"metric": "cpu", "threshold": 0.8, "margin": 0.2, "penalty": 0.2},
      {"metric": "server_latency", "relative": 2.0, "penalty": 0.3}])"));
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
                                         "margin", "penalty", "full_rate", "full_penalty"}));
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
  std::function<void(const std::string&, const json&)> mention = [&](const std::string& name,
                                                                     const json& value) {
    if (value.is_object()) {
      for (const auto& [key, v] : value.items()) mention(name + "." + key, v);
    } else {
      EXPECT_TRUE(Contains(md, "`" + name + "`"));
    }
  };
  for (const auto& [section, value] : j.items()) {
    if (section != "rules") mention(section, value);
  }
  for (const char* key : {"metric", "threshold", "threshold_ms", "relative", "margin", "penalty"}) {
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
