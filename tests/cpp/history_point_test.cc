// The state file's history point, read from snapshot text by name (export/history_point.h).
#include "export/history_point.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace weighted {
namespace {

using nlohmann::json;

json Point(const std::string& snapshot) {
  auto p = HistoryPoint(snapshot, 7, 5'000'000'000, 1'700'000'000'123'000'000);
  EXPECT_TRUE(p.has_value());
  return p ? json::parse(*p) : json();
}

TEST(HistoryPoint, TakesEachFieldFromItsPlaceOnly) {
  // "weight", "state" and "name" also occur deeper (rules, totals) and at the top: only the
  // endpoint's own count.
  const json p = Point(R"({"state": "top", "weight": 1, "services": [
    {"name": "orders", "panic": true, "rules": {"name": "no"}, "endpoints": [
      {"id": "a", "state": "isolated", "weight": 40, "effective_weight": 0, "penalty": 1.0,
       "rules": [{"name": "x", "weight": 99, "state": "nope"}], "totals": {"weight": 5}},
      {"id": "b", "state": "healthy", "weight": 60, "penalty": 0}]},
    {"name": "empty", "endpoints": []}]})");
  EXPECT_EQ(p["n"], 7);
  EXPECT_EQ(p["time_ns"], 5'000'000'000);
  EXPECT_EQ(p["unix_ms"], 1'700'000'000'123);
  EXPECT_EQ(p["columns"], json({"id", "state", "weight", "share", "measured", "penalty"}));
  ASSERT_EQ(p["services"].size(), 2u);
  EXPECT_EQ(p["services"][0]["name"], "orders");
  EXPECT_EQ(p["services"][0]["panic"], true);
  EXPECT_EQ(p["services"][0]["endpoints"],
            json::parse(R"([["a", "isolated", 0.0, null, null, 1.0],
                            ["b", "healthy", 60.0, null, null, 0.0]])"));
  EXPECT_EQ(p["services"][1], json::parse(R"({"name": "empty", "panic": false, "endpoints": []})"));
}

TEST(HistoryPoint, ReadsTheShareOfANewerSnapshot) {
  const json p = Point(R"({"services": [{"name": "s", "endpoints": [
    {"id": "x", "state": "failing", "effective_weight": 10,
     "share": {"expected": 0.25, "last_cycle": {"expected": 0.3, "measured": 0.2}},
     "reasons": [{"kind": "rule", "name": "p99", "value": 3, "threshold": 1, "effect": 0.3}]}]}]})");
  EXPECT_EQ(p["services"][0]["endpoints"][0],
            json::parse(R"(["x", "failing", 10.0, 0.25, 0.2, null])"));
}

TEST(HistoryPoint, ReadsTheMeasuredShareAsTheEngineWritesIt) {
  const json p = Point(R"({"services": [{"name": "s", "endpoints": [
    {"id": "x", "state": "healthy", "effective_weight": 10,
     "share": {"last_cycle": 0.4, "results": 120}}]}]})");
  EXPECT_EQ(p["services"][0]["endpoints"][0], json::parse(R"(["x", "healthy", 10.0, null, 0.4, null])"));
}

TEST(HistoryPoint, TextThatIsNotJsonMakesNoPoint) {
  EXPECT_FALSE(HistoryPoint(R"({"services": [)", 1, 0, 0).has_value());
  EXPECT_FALSE(HistoryPoint("", 1, 0, 0).has_value());
  EXPECT_EQ(Point("[]")["services"], json::array());
}

}  // namespace
}  // namespace weighted
