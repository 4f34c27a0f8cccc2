// The state file (export.state_file) and its monitor (wt_monitor_*): what the writer publishes on
// the manual clock, cycle by cycle; the ring of events and the history; permissions, placeholders,
// reloads and growth; a closed writer; and a monitor refusing files it does not understand.
// Readers racing a real-clock writer and a writer killed with SIGKILL are in
// state_file_race_test.cc.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>

#include <fmt/format.h>

#include "export/state_format.h"
#include "harness.h"
#include "state_file_helpers.h"

namespace weighted::testing {
namespace {

namespace sf = state_format;

int64_t Now(wt_engine* e) {
  int64_t ns = 0;
  EXPECT_EQ(wt_engine_now(e, &ns), WT_OK);
  return ns;
}

TEST(StateFile, OffByDefault) {
  TempDir dir;
  Harness h;
  h.Set({{"a", 100}});
  wt_engine_advance(h.engine(), 5 * kSecond);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
  json cfg = Resolved(Harness::kWeighted);
  EXPECT_EQ(cfg["export"]["state_file"], "");
}

TEST(StateFile, MonitorSeesEachCycleAsTheEngineDoes) {
  TempDir dir;
  const std::string path = dir.file("svc.state");
  Harness h(Config(path));
  h.Set({{"a", 100}, {"b", 100}, {"c", 100}});
  Monitor m(path);
  for (int cycle = 1; cycle <= 3; ++cycle) {
    h.Drive(4.9, 200, [](const std::string&) { return Outcome{10, WT_OUTCOME_SUCCESS}; });
    wt_engine_advance(h.engine(), cycle * 5 * kSecond - Now(h.engine()));
    // The monitor's snapshot is the engine's own text as of the cycle.
    json mine = EngineSnapshot(h.engine());
    json theirs = ControllerView(json::parse(m.Snapshot()));
    EXPECT_EQ(theirs["services"], mine["services"]) << "cycle " << cycle;
    json history = json::parse(m.History(0, 0));
    ASSERT_EQ(history["points"].size(), size_t(cycle));
    const json& last = history["points"].back();
    EXPECT_EQ(last["n"], cycle);
    EXPECT_EQ(last["time_ns"], cycle * 5 * kSecond);
    EXPECT_EQ(last["columns"], json({"id", "state", "weight", "share", "measured", "penalty"}));
    const json& eps = last["services"][0]["endpoints"];
    ASSERT_EQ(eps.size(), 3u);
    EXPECT_EQ(eps[0][0], "a");
    EXPECT_EQ(eps[0][1], mine["services"][0]["endpoints"][0]["state"]);
    EXPECT_EQ(eps[0][2], mine["services"][0]["endpoints"][0]["effective_weight"]);
  }
  json info = json::parse(m.Info());
  EXPECT_EQ(info["state"], "running");
  EXPECT_EQ(info["pid"], getpid());
  EXPECT_EQ(info["interval_ms"], 5000);
  EXPECT_EQ(info["history_points"], 3);
  EXPECT_EQ(info["format"], "3.1");
}

// The file holds a binary record that the monitor renders; the text it renders is the engine's
// own, byte for byte, after every cycle, with every part of the snapshot in play: the load-aware
// picker's evidence, rules fired and not, an isolated endpoint's time in isolation, servers'
// load reports (rates, ages, a malformed one), client resources, slow start, totals.
TEST(StateFile, TheMonitorsSnapshotIsTheEnginesTextExactly) {
  TempDir dir;
  const std::string path = dir.file("same.state");
  nlohmann::json cfg = nlohmann::json::parse(Config(path));
  cfg["picker"]["mode"] = "load_aware";
  cfg["profile"] = "default";  // slow start on: new endpoints start in it
  cfg["budget"]["max_error_rate"] = 0.02;  // the budget's record too
  Harness h(cfg.dump());
  h.Set({{"ok", 100}, {"errors", 100}, {"slow", 100}, {"busy", 50}});
  Monitor m(path);
  std::map<std::string, uint64_t> keys;
  for (const char* id : {"ok", "errors", "slow", "busy"}) {
    ASSERT_EQ(wt_service_endpoint_key(h.svc(), id, &keys[id]), WT_OK) << wt_last_error();
  }
  bool isolated = false, fired = false, server = false, picker = false, budget = false;
  for (int cycle = 1; cycle <= 6; ++cycle) {
    for (int i = 0; i < 5; ++i) {
      const std::string good = "TEXT cpu_utilization=0.91, rps_fractional=120.5, eps=0.25";
      ASSERT_EQ(wt_service_report_load_key(h.svc(), keys["busy"], good.data(), good.size()), WT_OK)
          << wt_last_error();
    }
    // Whatever share the picker leaves it, "errors" has a full window: half failures, half
    // slow answers (with its CPU, penalty 1: isolated).
    for (int i = 0; i < 100; ++i) {
      ASSERT_EQ(wt_service_report(h.svc(), "errors", 900,
                                  i % 2 ? WT_OUTCOME_HTTP_5XX : WT_OUTCOME_SUCCESS), WT_OK);
    }
    const std::string bad = "TEXT cpu_utilization=oops";
    EXPECT_EQ(wt_service_report_load_key(h.svc(), keys["busy"], bad.data(), bad.size()),
              WT_ERR_BAD_LOAD_REPORT);
    h.Drive(4.9, 200, [](const std::string& id) {
      if (id == "errors") return Outcome{900, WT_OUTCOME_HTTP_5XX};
      if (id == "slow") return Outcome{900, WT_OUTCOME_SUCCESS};
      return Outcome{10, WT_OUTCOME_SUCCESS};
    }, [](const std::string& id) { return id == "errors" ? 0.95 : 0.25; });
    wt_engine_advance(h.engine(), cycle * 5 * kSecond - Now(h.engine()));
    char* text = nullptr;
    const wt_status status = wt_engine_snapshot_json(h.engine(), &text, nullptr);
    const std::string engine = Take(status, text, "engine snapshot");
    // Byte for byte but the engine's event count: the cycle's snapshot is published before its
    // events are delivered (they reach the file's event ring right after it).
    const auto events_total = [](std::string text) {
      static const std::regex total(R"("events":\{"total":[0-9]+,)");
      return std::regex_replace(text, total, R"("events":{"total":N,)");
    };
    ASSERT_EQ(events_total(m.Snapshot()), events_total(engine)) << "cycle " << cycle;
    ASSERT_NE(events_total(engine), engine);
    const nlohmann::json snap = nlohmann::json::parse(engine);
    const auto& b = snap["services"][0]["budget"];
    budget |= b["window_failures"].get<uint64_t>() > 0 && !b["met"].get<bool>();
    for (const auto& ep : snap["services"][0]["endpoints"]) {
      isolated |= ep["state"] == "isolated" && ep["isolated_for_ms"].get<int64_t>() > 0;
      for (const auto& r : ep["rules"]) fired |= r["fired"].get<bool>();
      server |= ep["server_report"]["rps"].is_number() && ep["server_report"]["malformed"] > 0 &&
                ep["window"]["resource_origin"]["cpu"] == "server";
      picker |= ep["picker"].is_object() && ep["picker"]["latency_ms"].get<double>() > 0;
    }
  }
  // The comparison covered each part, not a snapshot of zeros.
  EXPECT_TRUE(isolated);
  EXPECT_TRUE(fired);
  EXPECT_TRUE(server);
  EXPECT_TRUE(picker);
  EXPECT_TRUE(budget);
}

TEST(StateFile, AnEngineOpensAMonitorOnItsOwnFile) {
  TempDir dir;
  Harness h(Config(dir.file("{service}-{pid}.state")));
  h.Set({{"a", 100}});
  wt_monitor* m = nullptr;
  ASSERT_EQ(wt_monitor_open_engine(h.engine(), &m), WT_OK) << wt_last_error();
  char* text = nullptr;
  ASSERT_EQ(wt_monitor_info_json(m, &text, nullptr), WT_OK);
  const json info = json::parse(text);
  wt_free(text);
  EXPECT_NE(info["path"].get<std::string>().find(fmt::format("-{}.state", getpid())),
            std::string::npos);
  wt_monitor_close(m);

  Harness none;
  EXPECT_EQ(wt_monitor_open_engine(none.engine(), &m), WT_ERR_NOT_FOUND);
  EXPECT_NE(std::string(wt_last_error()).find("export.state_file"), std::string::npos);
  EXPECT_EQ(wt_monitor_open_engine(nullptr, &m), WT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(wt_monitor_open_engine(h.engine(), nullptr), WT_ERR_INVALID_ARGUMENT);
}

TEST(StateFile, HistoryKeepsTheLastPointsAndReadsOnlyNewOnes) {
  TempDir dir;
  const std::string path = dir.file("h.state");
  Harness h(Config(path, R"("state_history": 10)"));
  h.Set({{"a", 100}, {"b", 100}});
  for (int i = 0; i < 25; ++i) wt_engine_advance(h.engine(), 5 * kSecond);
  Monitor m(path);
  json all = json::parse(m.History(0, 0));
  ASSERT_EQ(all["points"].size(), 10u);
  EXPECT_EQ(all["points"][0]["n"], 16);
  EXPECT_EQ(all["next"], 25);
  EXPECT_EQ(json::parse(m.History(0, 3))["points"][0]["n"], 23);
  wt_engine_advance(h.engine(), 10 * kSecond);
  json newer = json::parse(m.History(25, 0));
  ASSERT_EQ(newer["points"].size(), 2u);
  EXPECT_EQ(newer["points"][1]["n"], 27);
  EXPECT_EQ(json::parse(m.History(27, 0))["points"].size(), 0u);
}

TEST(StateFile, EventsSinceACursorWithTheirReasons) {
  TempDir dir;
  const std::string path = dir.file("e.state");
  Harness h(Config(path, R"("state_events": 16)"));
  h.Set({{"a", 100}, {"b", 100}, {"c", 100}});
  Monitor m(path);
  json first = json::parse(m.Events(0, 0));
  EXPECT_EQ(first["lost"], 0);
  const uint64_t cursor = first["next"];
  // "a" fails every request: its weight falls, with the error rule's verdict as the reason.
  h.Drive(20.0, 200, [](const std::string& id) {
    return id == "a" ? Outcome{10, WT_OUTCOME_HTTP_5XX} : Outcome{10, WT_OUTCOME_SUCCESS};
  });
  json later = json::parse(m.Events(cursor, 0));
  bool cut = false;
  for (const json& e : later["events"]) {
    EXPECT_GT(e["n"].get<uint64_t>(), cursor);
    if (e["type"] == "weight_changed" && e["endpoint"] == "a") {
      cut = true;
      EXPECT_LT(e["new_weight"].get<double>(), e["old_weight"].get<double>());
      EXPECT_EQ(e["reason"]["rules"][0]["metric"], "error_rate");
      EXPECT_EQ(e["service"], "svc");
      EXPECT_EQ(e["time_ns"], 5 * kSecond);
    }
  }
  EXPECT_TRUE(cut) << later.dump();
  EXPECT_EQ(json::parse(m.Events(later["next"], 0))["events"].size(), 0u);
  // 40 endpoint sets later the ring of 16 has dropped the oldest: counted, not hidden.
  for (int i = 0; i < 40; ++i) h.Set({{fmt::format("n{}", i), 100}});
  json wrapped = json::parse(m.Events(later["next"], 0));
  EXPECT_EQ(wrapped["events"].size(), 16u);
  EXPECT_GT(wrapped["lost"].get<int>(), 0);
  EXPECT_EQ(json::parse(m.Events(later["next"], 5))["events"].size(), 5u);
  // A cursor beyond the newest (from another, older file) starts again from the oldest.
  json reset = json::parse(m.Events(1'000'000, 0));
  EXPECT_TRUE(reset["reset"].get<bool>());
  EXPECT_EQ(reset["events"].size(), 16u);
}

TEST(StateFile, PermissionsArePreciselyTheConfiguredOnes) {
  TempDir dir;
  const mode_t old = umask(0077);  // a umask that would take the group's bits
  {
    Harness h(Config(dir.file("a.state")));
    EXPECT_EQ(ModeOf(dir.file("a.state")), 0600u);
  }
  {
    Harness h(Config(dir.file("b.state"), R"("state_file_mode": "0640")"));
    EXPECT_EQ(ModeOf(dir.file("b.state")), 0640u);
  }
  umask(old);
}

TEST(StateFile, PlaceholdersAreFilledIn) {
  TempDir dir;
  Harness h(Config(dir.path() + "/{service}-{pid}.state", R"("service_name": "orders/api")"));
  const std::string path = dir.file(fmt::format("orders_api-{}.state", getpid()));
  ASSERT_TRUE(std::filesystem::exists(path));
  Monitor m(path);
  EXPECT_EQ(json::parse(m.Info())["service"], "orders/api");
}

TEST(StateFile, BadSettingsAreRefusedWithTheirPath) {
  for (const auto& [extra, where] : std::vector<std::pair<std::string, std::string>>{
           {R"("state_file": "/tmp/{host}.state")", "/export/state_file"},
           {R"("state_file": "/tmp/dir/")", "/export/state_file"},
           {R"("state_file_mode": "0044")", "/export/state_file_mode"},
           {R"("state_file_mode": "06000")", "/export/state_file_mode"},
           {R"("state_file_mode": "0400")", "/export/state_file_mode"},
           {R"("state_file_mode": "rw")", "/export/state_file_mode"},
           {R"("state_file": "a\u0001b")", "/export/state_file"},
           {R"("state_history": 5)", "/export/state_history"}}) {
    const std::string cfg = R"({"export": {)" + extra + "}}";
    EXPECT_EQ(wt_config_validate(cfg.data(), cfg.size()), WT_ERR_CONFIG_INVALID) << cfg;
    EXPECT_NE(std::string(wt_last_error()).find(where), std::string::npos) << wt_last_error();
  }
}

TEST(StateFile, AFileThatCannotBeCreatedRefusesTheEngineAndTheReload) {
  TempDir dir;
  const std::string missing = dir.path() + "/no/such/dir/x.state";
  const std::string cfg = Config(missing);
  wt_engine* e = nullptr;
  EXPECT_EQ(wt_engine_create(cfg.data(), cfg.size(), WT_CLOCK_MANUAL, &e), WT_ERR_IO);
  EXPECT_NE(std::string(wt_last_error()).find("no/such/dir"), std::string::npos) << wt_last_error();
  EXPECT_EQ(e, nullptr);
  // A reload to it is refused and the running file goes on.
  const std::string path = dir.file("ok.state");
  Harness h(Config(path));
  h.Set({{"a", 100}});
  EXPECT_EQ(wt_engine_reload(h.engine(), cfg.data(), cfg.size()), WT_ERR_IO);
  wt_engine_advance(h.engine(), 5 * kSecond);
  Monitor m(path);
  EXPECT_EQ(json::parse(m.Info())["history_points"], 1);
  EXPECT_EQ(json::parse(m.Info())["state"], "running");
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().filename(), "ok.state") << "a temporary file was left behind";
  }
}

TEST(StateFile, AReloadMovesTheFileAndClosesTheOldOne) {
  TempDir dir;
  const std::string a = dir.file("a.state"), b = dir.file("b.state");
  Harness h(Config(a));
  h.Set({{"x", 100}});
  Monitor old_file(a);
  const std::string next = Config(b);
  ASSERT_EQ(wt_engine_reload(h.engine(), next.data(), next.size()), WT_OK) << wt_last_error();
  wt_engine_advance(h.engine(), 5 * kSecond);
  EXPECT_EQ(json::parse(old_file.Info())["state"], "closed");
  Monitor m(b);
  EXPECT_EQ(json::parse(m.Info())["history_points"], 1);
  // Reloading without the key ends the file: it stays, closed, with the last state.
  const std::string off = Harness::kWeighted;
  ASSERT_EQ(wt_engine_reload(h.engine(), off.data(), off.size()), WT_OK);
  EXPECT_EQ(json::parse(m.Info())["state"], "closed");
  EXPECT_EQ(json::parse(m.Snapshot())["services"][0]["endpoints"][0]["id"], "x");
}

TEST(StateFile, GrowsAsTheFleetGrowsAndMonitorsFollow) {
  TempDir dir;
  const std::string path = dir.file("g.state");
  Harness h(Config(path));
  h.Set({{"a", 100}});
  wt_engine_advance(h.engine(), 5 * kSecond);
  Monitor m(path);
  const uint64_t small = json::parse(m.Info())["file_bytes"];
  std::vector<std::pair<std::string, double>> many;
  for (int i = 0; i < 400; ++i) many.emplace_back(fmt::format("10.0.{}.{}:8080", i / 250, i % 250), 100);
  h.Set(many);  // about 400 KB of snapshot: more than the first slots hold
  wt_engine_advance(h.engine(), 5 * kSecond);
  json snap = json::parse(m.Snapshot());
  EXPECT_EQ(snap["services"][0]["endpoints"].size(), 400u);
  json info = json::parse(m.Info());
  EXPECT_GT(info["file_bytes"].get<uint64_t>(), small);
  EXPECT_EQ(info["history_points"], 2);  // the history came across
  EXPECT_EQ(json::parse(m.History(0, 0))["points"][0]["services"][0]["endpoints"].size(), 1u);
}

TEST(StateFile, AClosedWritersLastStateStaysReadable) {
  TempDir dir;
  const std::string path = dir.file("c.state");
  {
    Harness h(Config(path));
    h.Set({{"a", 100}, {"b", 50}});
    wt_engine_advance(h.engine(), 10 * kSecond);
  }
  Monitor m(path);
  json info = json::parse(m.Info());
  EXPECT_EQ(info["state"], "closed");
  EXPECT_FALSE(info["writer_alive"].get<bool>() && info["state"] == "running");
  EXPECT_GT(info["last_write_unix_ms"].get<int64_t>(), 0);
  EXPECT_EQ(json::parse(m.Snapshot())["services"][0]["endpoints"].size(), 2u);
  EXPECT_EQ(json::parse(m.History(0, 0))["points"].size(), 2u);
}

}  // namespace
}  // namespace weighted::testing
