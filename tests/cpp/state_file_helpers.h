// What the state file tests share: a temporary directory, configs that name a state file, and a
// monitor that fails the test on any error.
#pragma once

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "weighted/weighted.h"

namespace weighted::testing {

inline constexpr int64_t kSecond = 1'000'000'000;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "wt-state-XXXXXX").string();
    path_ = mkdtemp(tmpl.data()) ? tmpl : "";
    EXPECT_FALSE(path_.empty());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// The harness's config with export.state_file = path and `extra` keys of "export".
inline std::string Config(const std::string& path, const std::string& extra = "") {
  nlohmann::json j = nlohmann::json::parse(R"({"seed": 42, "picker": {"mode": "weighted"}})");
  j["export"] = nlohmann::json::parse("{" + extra + "}");
  j["export"]["state_file"] = path;
  return j.dump();
}

inline nlohmann::json Resolved(const std::string& cfg) {
  char* text = nullptr;
  EXPECT_EQ(wt_config_resolve(cfg.data(), cfg.size(), &text), WT_OK) << wt_last_error();
  nlohmann::json j = nlohmann::json::parse(text ? text : "null");
  wt_free(text);
  return j;
}

// The engine's snapshot without what changes between cycles (lifetime totals, in-flight counts).
inline nlohmann::json ControllerView(nlohmann::json snap) {
  for (auto& s : snap["services"]) {
    for (auto& e : s["endpoints"]) {
      e.erase("totals");
      e.erase("inflight");
    }
    s.erase("removed_totals");
  }
  return snap;
}

inline nlohmann::json EngineSnapshot(wt_engine* e) {
  char* text = nullptr;
  EXPECT_EQ(wt_engine_snapshot_json(e, &text, nullptr), WT_OK);
  nlohmann::json j = nlohmann::json::parse(text);
  wt_free(text);
  return ControllerView(j);
}

inline unsigned ModeOf(const std::string& path) {
  struct stat st{};
  EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 0777;
}

inline std::string Take(wt_status s, char* text, const char* what) {
  EXPECT_EQ(s, WT_OK) << what << ": " << wt_last_error();
  std::string out = text ? text : "";
  wt_free(text);
  return out;
}

// A monitor that fails the test on any error.
class Monitor {
 public:
  explicit Monitor(const std::string& path) {
    EXPECT_EQ(wt_monitor_open(path.c_str(), &m_), WT_OK) << wt_last_error();
  }
  ~Monitor() { wt_monitor_close(m_); }
  wt_monitor* get() { return m_; }
  std::string Snapshot() {
    char* t = nullptr;
    wt_status s = wt_monitor_snapshot_json(m_, &t, nullptr);
    return Take(s, t, "snapshot");
  }
  std::string History(uint64_t since, size_t max) {
    char* t = nullptr;
    wt_status s = wt_monitor_history_json(m_, since, max, &t, nullptr);
    return Take(s, t, "history");
  }
  std::string Events(uint64_t cursor, size_t max) {
    char* t = nullptr;
    wt_status s = wt_monitor_events_json(m_, cursor, max, &t, nullptr);
    return Take(s, t, "events");
  }
  std::string Info() {
    char* t = nullptr;
    wt_status s = wt_monitor_info_json(m_, &t, nullptr);
    return Take(s, t, "info");
  }

 private:
  wt_monitor* m_ = nullptr;
};

}  // namespace weighted::testing
