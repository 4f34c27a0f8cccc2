// The state file: the engine's state published to a memory-mapped file (export.state_file) so that
// monitors in other processes attach to it (state_reader.h, wt_monitor_open). It carries the
// snapshot as a binary record that monitors render to exactly the text wt_engine_snapshot_json
// writes (snapshot_record.h), one history point per controller cycle (per endpoint: state,
// weight, share, penalty) and a ring of recent events. The layout and
// the sequence-lock argument are in state_format.h and docs/state-file.md.
//
// Off the request path: the engine hands it each cycle, membership change and event batch
// (runtime/state_sink.h). On the real clock the snapshot is serialised on a thread of its own,
// so the controller cycle pays one notification; on the manual clock it is written inside the
// call that ran the cycle, so tests and the simulator see it at once and in order.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "config/config.h"
#include "export/state_format.h"
#include "runtime/engine.h"
#include "runtime/state_sink.h"
#include "util/status.h"

namespace weighted {

// The file's settings as the config gives them, the placeholders filled in.
struct StateFileSettings {
  std::string path;
  unsigned mode = 0600;
  std::string service;
  uint32_t history_slots = 240;
  uint32_t event_slots = 1024;
  int64_t interval_ms = 5000;
  bool operator==(const StateFileSettings&) const = default;
};
// Fills in "{service}" and "{pid}"; an empty path means no state file.
StateFileSettings StateFileSettingsOf(const Config& cfg);

class StateFileWriter final : public StateSink {
 public:
  // Makes the file under a temporary name beside the path, with the configured mode. WT_ERR_IO
  // names the path and the system's reason. Nothing is at the path until Commit().
  static Status Create(const char* where, Engine& engine, const StateFileSettings& settings,
                       std::shared_ptr<StateFileWriter>* out);
  // Renames the file over the path (replacing a file there, e.g. one a dead writer left).
  Status Commit(const char* where);
  // The state a retiring writer leaves in its file: kClosed, or kReplaced when a new writer took
  // over the same path (readers holding it then reopen the path).
  void SetFinalState(uint64_t state) { final_state_ = state; }
  // Writes a last snapshot and marks the file closed; the file stays for post-mortem readers.
  ~StateFileWriter() override;

  void OnCycle(int64_t now) override;
  void OnChange() override;
  void OnEvents(const std::string& service, const std::vector<PendingEvent>& events) override;

  const StateFileSettings& settings() const { return settings_; }
  // Publications written so far (snapshots, history points); tests wait on them.
  uint64_t snapshots() const;
  uint64_t history_points() const;
  // Writes what is pending now, on this thread, and returns when it is in the file.
  void Flush();

 private:
  struct Mapping;
  struct Work {
    bool snapshot = false;
    bool cycle = false;  // a history point too
    int64_t cycle_ns = 0;
    int cpu = -1;  // where the requesting cycle ran (-1: unknown); the writer reads there
  };

  StateFileWriter(Engine& engine, StateFileSettings settings);
  Status Open(const char* where);
  void Request(Work w);
  void Worker();
  // Encodes the snapshot record into its slot outside mu_ (it reads the engine), then finishes
  // the slot and writes the history point under it.
  void Publish(const Work& w);
  void WriteHistory(const std::string& point);
  void AppendEvents(const std::string& service, const std::vector<PendingEvent>& events);
  void WriteEvent(std::string json);
  // Grows the file into a new one renamed over the path, the slots copied across.
  bool Grow(uint64_t snapshot_slot, uint64_t history_slot);
  void Touch();

  Engine& engine_;
  const StateFileSettings settings_;
  const bool async_;
  uint64_t final_state_ = state_format::kClosed;
  bool committed_ = false;

  std::mutex publish_mu_;   // one Publish at a time
  std::string point_buf_;  // under publish_mu_: reused by each publication
  mutable std::mutex mu_;  // the mapping and its counters
  std::unique_ptr<Mapping> map_;
  uint64_t history_points_ = 0;
  uint64_t events_ = 0;
  bool broken_ = false;  // a grow failed: writes stop, the file keeps its last good state

  std::mutex work_mu_;
  std::condition_variable work_cv_;
  Work pending_;
  bool has_work_ = false;
  bool busy_ = false;
  bool stop_ = false;
  std::condition_variable idle_cv_;
  std::thread worker_;
};

// A config's state file made ready before the config is put in force, so that a file that cannot
// be created refuses the config (create or reload) with nothing changed.
struct StateFileChange {
  bool changed = false;                      // the settings differ from the running file's
  std::shared_ptr<StateFileWriter> writer;  // the new file, not yet at its path; null: none
};
Status PrepareStateFile(const char* where, Engine& engine, const StateFileSettings& next,
                        StateFileChange* out);
// Once the config is in force: the new file goes to its path and replaces the old writer.
Status InstallStateFile(const char* where, Engine& engine, StateFileChange change);

}  // namespace weighted
