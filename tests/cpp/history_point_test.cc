// The state file's history point (export/history_point.h): written from the engine's state in the
// inspection that writes the snapshot, so every row must say what the snapshot published with it
// says of that endpoint.
#include "export/history_point.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness.h"
#include "state_file_helpers.h"

namespace weighted {
namespace {

using nlohmann::json;
using testing::Config;
using testing::kSecond;
using testing::Monitor;
using testing::TempDir;
using testing::Harness;
using testing::Outcome;

int64_t Now(wt_engine* e) {
  int64_t t = 0;
  EXPECT_EQ(wt_engine_now(e, &t), WT_OK);
  return t;
}

TEST(HistoryPoint, WritesTheHeaderAndNullForAColumnWithoutAValue) {
  JsonWriter w;
  HistoryPointWriter p(w);
  p.Begin({7, 5'000'000'000, 1'700'000'000'123'000'000});
  p.BeginService("orders", true);
  p.Endpoint("a", "isolated", 0.0, std::nullopt, 0.25, 1.0);
  p.Endpoint("b\"q", "healthy", 60.0, 0.5, std::nullopt, 0.0);
  p.EndService();
  p.BeginService("empty", false);
  p.EndService();
  p.End();
  const json j = json::parse(w.Take());
  EXPECT_EQ(j["n"], 7);
  EXPECT_EQ(j["time_ns"], 5'000'000'000);
  EXPECT_EQ(j["unix_ms"], 1'700'000'000'123);
  EXPECT_EQ(j["columns"], json({"id", "state", "weight", "share", "measured", "penalty"}));
  EXPECT_EQ(j["services"][0]["name"], "orders");
  EXPECT_EQ(j["services"][0]["panic"], true);
  EXPECT_EQ(j["services"][0]["endpoints"],
            json::parse(R"([["a", "isolated", 0.0, null, 0.25, 1.0],
                            ["b\"q", "healthy", 60.0, 0.5, null, 0.0]])"));
  EXPECT_EQ(j["services"][1], json::parse(R"({"name": "empty", "panic": false, "endpoints": []})"));
}

TEST(HistoryPoint, EveryRowSaysWhatTheSnapshotPublishedWithItSays) {
  TempDir dir;
  const std::string path = dir.file("svc.state");
  Harness h(Config(path));
  h.Set({{"a", 100}, {"b", 100}, {"c", 50}});
  wt_service* other = nullptr;
  ASSERT_EQ(wt_engine_service(h.engine(), "other", &other), WT_OK);
  wt_endpoint_spec spec = WT_ENDPOINT_SPEC_INIT;
  spec.id = "z";
  spec.base_weight = 10;
  ASSERT_EQ(wt_service_set_endpoints(other, &spec, 1, nullptr, nullptr, nullptr), WT_OK) << wt_last_error();
  Monitor m(path);
  for (int cycle = 1; cycle <= 4; ++cycle) {
    // "a" fails from the second cycle on: states, weights, shares and penalties move apart.
    h.Drive(4.9, 200, [&](const std::string& id) {
      return id == "a" && cycle > 1 ? Outcome{10, WT_OUTCOME_HTTP_5XX} : Outcome{10, WT_OUTCOME_SUCCESS};
    });
    wt_engine_advance(h.engine(), cycle * 5 * kSecond - Now(h.engine()));
    const json snap = json::parse(m.Snapshot());
    const json point = json::parse(m.History(0, 0))["points"].back();
    EXPECT_EQ(point["n"], cycle);
    ASSERT_EQ(point["services"].size(), snap["services"].size());
    for (size_t s = 0; s < snap["services"].size(); ++s) {
      const json& ss = snap["services"][s];
      const json& ps = point["services"][s];
      EXPECT_EQ(ps["name"], ss["name"]);
      EXPECT_EQ(ps["panic"], ss["panic"]);
      ASSERT_EQ(ps["endpoints"].size(), ss["endpoints"].size());
      for (size_t i = 0; i < ss["endpoints"].size(); ++i) {
        const json& e = ss["endpoints"][i];
        const json expected = {e["id"], e["state"], e["effective_weight"], e["share"]["expected"],
                               e["share"]["last_cycle"], e["penalty"]};
        EXPECT_EQ(ps["endpoints"][i], expected) << "cycle " << cycle << " " << e["id"];
      }
    }
  }
  // The fault showed in the point: "a" is no longer where it started.
  const json last = json::parse(m.History(0, 0))["points"].back();
  bool moved = false;
  for (const json& s : last["services"]) {
    for (const json& e : s["endpoints"]) moved |= e[0] == "a" && e[1] != "healthy";
  }
  EXPECT_TRUE(moved) << last.dump();
}

}  // namespace
}  // namespace weighted
