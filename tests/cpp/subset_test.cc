// Subsetting (config "subset"): which endpoints a client uses, how stable that choice is under
// discovery churn, that picks stay inside it, its auto size, and how the snapshot (the engine's
// and a monitor's, rendered from the same record) shows it.
#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "harness.h"
#include "runtime/subset.h"
#include "state_file_helpers.h"

namespace weighted::testing {
namespace {

std::string SubsetConfig(const std::string& client, const std::string& subset_extra = "") {
  return fmt::format(R"({{"seed": 7, "picker": {{"mode": "weighted"}},
                         "subset": {{"mode": "fixed", "size": 5, "client_id": "{}"{}}}}})",
                     client, subset_extra);
}

std::vector<std::pair<std::string, double>> Backends(int n, int from = 0) {
  std::vector<std::pair<std::string, double>> v;
  for (int i = from; i < from + n; ++i) v.emplace_back(fmt::format("10.0.{}.{}:8080", i / 250, i % 250), 100);
  return v;
}

std::set<std::string> InSubset(Harness& h) {
  std::set<std::string> in;
  const json snap = h.Snapshot();  // held: a range-for would not keep a temporary alive
  for (const auto& ep : snap["services"][0]["endpoints"]) {
    if (ep["in_subset"].get<bool>()) in.insert(ep["id"].get<std::string>());
  }
  return in;
}

std::set<std::string> Chosen(const std::string& client, const std::vector<std::string>& ids,
                             size_t size) {
  std::vector<std::string_view> views(ids.begin(), ids.end());
  const std::vector<uint8_t> in = ChooseSubset(client, views, size);
  std::set<std::string> out;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (in[i]) out.insert(ids[i]);
  }
  return out;
}

size_t Difference(const std::set<std::string>& a, const std::set<std::string>& b) {
  std::vector<std::string> d;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(d));
  return d.size();
}

TEST(Subset, PicksStayInsideTheClientsSubset) {
  Harness h(SubsetConfig("client-a"));
  h.Set(Backends(50));
  const std::set<std::string> in = InSubset(h);
  ASSERT_EQ(in.size(), 5u);
  const json svc = h.Snapshot()["services"][0];
  EXPECT_EQ(svc["subset"]["size"], 5);
  EXPECT_EQ(svc["subset"]["of"], 50);
  for (const auto& ep : svc["endpoints"]) {
    if (!ep["in_subset"].get<bool>()) EXPECT_EQ(ep["effective_weight"].get<double>(), 0.0);
  }
  auto picks = h.Drive(20, 100, [](const std::string&) { return Ok(10); });
  for (const auto& [id, n] : picks) EXPECT_TRUE(in.count(id)) << id << " got " << n << " picks";
  EXPECT_EQ(picks.size(), 5u);  // every member gets traffic
  // Still the same five after the cycles ran.
  EXPECT_EQ(InSubset(h), in);
}

TEST(Subset, IsAFunctionOfTheClientIdAndTheSet) {
  Harness a1(SubsetConfig("client-a")), a2(SubsetConfig("client-a")), b(SubsetConfig("client-b"));
  auto set = Backends(50);
  a1.Set(set);
  std::reverse(set.begin(), set.end());  // discovery order does not matter
  a2.Set(set);
  b.Set(set);
  EXPECT_EQ(InSubset(a1), InSubset(a2));
  EXPECT_NE(InSubset(a1), InSubset(b));
  EXPECT_EQ(InSubset(a1), Chosen("client-a", [&] {
              std::vector<std::string> ids;
              for (auto& [id, w] : set) ids.push_back(id);
              return ids;
            }(), 5));
}

TEST(Subset, OneEndpointAddedOrRemovedMovesAtMostOneEntryPerClient) {
  std::vector<std::string> ids;
  for (auto& [id, w] : Backends(100)) ids.push_back(id);
  std::vector<std::string> added = ids;
  added.push_back("10.9.9.9:8080");
  int moved_on_add = 0, moved_on_remove = 0;
  for (int c = 0; c < 500; ++c) {
    const std::string client = fmt::format("client-{}", c);
    const std::set<std::string> before = Chosen(client, ids, 10);
    const std::set<std::string> after_add = Chosen(client, added, 10);
    ASSERT_LE(Difference(before, after_add), 1u) << client;
    moved_on_add += static_cast<int>(Difference(before, after_add));
    // Removing a member brings in exactly one replacement and keeps the other nine.
    std::vector<std::string> removed = ids;
    removed.erase(std::find(removed.begin(), removed.end(), *before.begin()));
    const std::set<std::string> after_remove = Chosen(client, removed, 10);
    ASSERT_EQ(Difference(before, after_remove), 1u) << client;
    ASSERT_EQ(Difference(after_remove, before), 1u) << client;
    moved_on_remove += 1;
    // Removing a non-member changes nothing.
    removed = ids;
    for (const std::string& id : ids) {
      if (!before.count(id)) {
        removed.erase(std::find(removed.begin(), removed.end(), id));
        break;
      }
    }
    ASSERT_EQ(Chosen(client, removed, 10), before) << client;
  }
  // The newcomer wins a place where it outscores a client's lowest member: about size / (n + 1)
  // of clients (10 / 101 of 500, ~50), not none and not all.
  EXPECT_GT(moved_on_add, 20);
  EXPECT_LT(moved_on_add, 90);
  EXPECT_EQ(moved_on_remove, 500);
}

TEST(Subset, ChurnThroughTheEngineKeepsTheRest) {
  Harness h(SubsetConfig("client-7"));
  h.Set(Backends(40));
  const std::set<std::string> before = InSubset(h);
  // A member leaves: one replacement.
  auto set = Backends(40);
  set.erase(std::find_if(set.begin(), set.end(), [&](auto& e) { return e.first == *before.begin(); }));
  h.Set(set);
  const std::set<std::string> after = InSubset(h);
  EXPECT_EQ(after.size(), 5u);
  EXPECT_EQ(Difference(before, after), 1u);
  auto picks = h.Drive(10, 100, [](const std::string&) { return Ok(10); });
  for (const auto& [id, n] : picks) EXPECT_TRUE(after.count(id)) << id;
}

TEST(Subset, SmallerSetsAndOtherServicesUseEveryEndpoint) {
  Harness h(SubsetConfig("c", R"(, "services": "other,orders")"));
  h.Set(Backends(20));  // service "svc" is not named
  EXPECT_EQ(InSubset(h).size(), 20u);
  EXPECT_TRUE(h.Snapshot()["services"][0]["subset"].is_null());
  Harness small(SubsetConfig("c"));
  small.Set(Backends(3));
  EXPECT_EQ(InSubset(small).size(), 3u);
  EXPECT_EQ(small.Snapshot()["services"][0]["subset"]["size"], 3);
}

TEST(Subset, AutoSizeFollowsTheServicesTraffic) {
  Harness h(R"({"seed": 3, "picker": {"mode": "weighted"},
               "subset": {"mode": "auto", "client_id": "c", "min_size": 4,
                          "auto_min_requests": 50}})");
  h.Set(Backends(100));
  EXPECT_EQ(InSubset(h).size(), 4u);  // before any traffic: min_size
  // 100 rps: 1,000 results per 10-s window, 50 per endpoint at 20 endpoints.
  h.Drive(30, 100, [](const std::string&) { return Ok(5); });
  const size_t grown = InSubset(h).size();
  EXPECT_GE(grown, 17u);
  EXPECT_LE(grown, 20u);
  // Growing kept the first four: rendezvous adds the next highest scores.
  Harness again(R"({"seed": 3, "picker": {"mode": "weighted"},
                   "subset": {"mode": "auto", "client_id": "c", "min_size": 4}})");
  again.Set(Backends(100));
  const std::set<std::string> first = InSubset(again);
  EXPECT_EQ(Difference(first, InSubset(h)), 0u);
}

TEST(Subset, AutoSizeHasHysteresis) {
  Config::Subset s;
  s.mode = SubsetMode::kAuto;
  s.min_size = 2;
  s.auto_min_requests = 10;
  EXPECT_EQ(AutoSubsetSize(s, 1000, 500, 0), 100u);
  EXPECT_EQ(AutoSubsetSize(s, 1100, 500, 100), 100u);  // +10%: kept
  EXPECT_EQ(AutoSubsetSize(s, 800, 500, 100), 100u);   // -20%: kept
  EXPECT_EQ(AutoSubsetSize(s, 700, 500, 100), 70u);    // -30%: follows
  EXPECT_EQ(AutoSubsetSize(s, 1300, 500, 100), 130u);  // +30%: follows
  EXPECT_EQ(AutoSubsetSize(s, 0, 500, 100), 2u);       // traffic gone: min_size
  EXPECT_EQ(AutoSubsetSize(s, 100000, 50, 0), 50u);    // never more than the set
}

TEST(Subset, BadSettingsAreRefusedWithTheirPath) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      // The contradiction names the key the document set, and says what is missing.
      {R"({"subset": {"mode": "fixed"}})", "/subset/mode: subset.mode is not \"off\" but "
                                           "subset.client_id is empty"},
      {R"({"subset": {"mode": "auto", "client_id": ""}})", "/subset/client_id"},
      {R"({"subset": {"mode": "some"}})", "/subset/mode"},
      {R"({"subset": {"size": 0}})", "/subset/size"},
      {R"({"subset": {"services": "a,,b"}})", "/subset/services"},
      {R"({"subset": {"services": "a, b"}})", "/subset/services"},
      {R"({"subset": {"client_id": "a\u0001"}})", "/subset/client_id"},
      {R"({"subset": {"sise": 3}})", "/subset/sise"},
  };
  for (const auto& [doc, path] : bad) {
    wt_engine* e = nullptr;
    EXPECT_EQ(wt_engine_create(doc.data(), doc.size(), WT_CLOCK_MANUAL, &e), WT_ERR_CONFIG_INVALID)
        << doc;
    EXPECT_NE(std::string(wt_last_error()).find(path), std::string::npos)
        << doc << ": " << wt_last_error();
    EXPECT_EQ(e, nullptr);
  }
}

TEST(Subset, AReloadChoosesAgainAndKeepsTheEngineOnARefusedOne) {
  Harness h(SubsetConfig("client-a"));
  h.Set(Backends(50));
  const std::set<std::string> a = InSubset(h);
  const std::string bad = R"({"subset": {"mode": "fixed", "client_id": ""}})";
  EXPECT_EQ(wt_engine_reload(h.engine(), bad.data(), bad.size()), WT_ERR_CONFIG_INVALID);
  EXPECT_EQ(InSubset(h), a);
  const std::string b = SubsetConfig("client-b");
  ASSERT_EQ(wt_engine_reload(h.engine(), b.data(), b.size()), WT_OK) << wt_last_error();
  EXPECT_EQ(InSubset(h), Chosen("client-b", [] {
              std::vector<std::string> ids;
              for (auto& [id, w] : Backends(50)) ids.push_back(id);
              return ids;
            }(), 5));
}

TEST(Subset, TheMonitorSeesTheSubsetAsTheEngineDoes) {
  TempDir dir;
  const std::string path = dir.file("subset.state");
  nlohmann::json cfg = nlohmann::json::parse(Config(path));
  cfg["subset"] = {{"mode", "fixed"}, {"size", 3}, {"client_id", "m"}};
  Harness h(cfg.dump());
  h.Set(Backends(12));
  Monitor m(path);
  h.Drive(4.9, 100, [](const std::string&) { return Ok(10); });
  // To the cycle at 5 s exactly: the file holds what that cycle published.
  int64_t now = 0;
  ASSERT_EQ(wt_engine_now(h.engine(), &now), WT_OK);
  ASSERT_EQ(wt_engine_advance(h.engine(), 5 * kSecond - now), WT_OK);
  char* text = nullptr;
  const wt_status status = wt_engine_snapshot_json(h.engine(), &text, nullptr);
  const std::string engine = Take(status, text, "snapshot");
  static const std::regex total(R"("events":\{"total":[0-9]+,)");
  const auto strip = [](const std::string& s) { return std::regex_replace(s, total, "E"); };
  EXPECT_EQ(strip(m.Snapshot()), strip(engine));
  const json snap = json::parse(engine);
  EXPECT_EQ(snap["services"][0]["subset"]["size"], 3);
  int in = 0;
  for (const auto& ep : snap["services"][0]["endpoints"]) in += ep["in_subset"].get<bool>();
  EXPECT_EQ(in, 3);
}

}  // namespace
}  // namespace weighted::testing
