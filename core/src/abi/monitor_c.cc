// wt_monitor_*: the state file's reader (export/state_reader.h) behind the C boundary.
#include "abi/c_api.h"
#include "export/state_file.h"
#include "export/state_reader.h"

using namespace weighted;

struct wt_monitor {};  // never instantiated: the handle is a Monitor* in disguise

namespace {

Monitor* AsMonitor(wt_monitor* m) { return reinterpret_cast<Monitor*>(m); }

// Every reading entry point: the monitor and the out-parameter checked, the text handed out.
template <typename Fn>
wt_status Read(const char* where, wt_monitor* m, char** out_json, size_t* out_len, Fn&& fn) {
  return Call(where, [&]() -> Status {
    if (!m) return NullArg(where, "monitor");
    if (!out_json) return NullArg(where, "out_json");
    std::string text;
    Status s = fn(*AsMonitor(m), text);
    if (!s.ok()) return s;
    return ReturnString(text, out_json, out_len);
  });
}

}  // namespace

extern "C" {

WT_API wt_status wt_monitor_open(const char* path, wt_monitor** out) {
  return Call("wt_monitor_open", [&]() -> Status {
    if (!path) return NullArg("wt_monitor_open", "path");
    if (!out) return NullArg("wt_monitor_open", "out");
    std::unique_ptr<Monitor> m;
    Status s = Monitor::Open("wt_monitor_open", path, &m);
    if (!s.ok()) return s;
    *out = reinterpret_cast<wt_monitor*>(m.release());
    return Status::Ok();
  });
}

WT_API wt_status wt_monitor_open_engine(wt_engine* engine, wt_monitor** out) {
  const char* where = "wt_monitor_open_engine";
  return Call(where, [&]() -> Status {
    if (Status s = CheckEngine(where, engine); !s.ok()) return s;
    if (!out) return NullArg(where, "out");
    auto writer = std::dynamic_pointer_cast<StateFileWriter>(AsEngine(engine)->state_sink());
    if (!writer) {
      return {WT_ERR_NOT_FOUND, fmt::format("{}: the engine writes no state file (its config "
                                            "sets no export.state_file)", where)};
    }
    std::unique_ptr<Monitor> m;
    Status s = Monitor::Open(where, writer->settings().path.c_str(), &m);
    if (!s.ok()) return s;
    *out = reinterpret_cast<wt_monitor*>(m.release());
    return Status::Ok();
  });
}

WT_API void wt_monitor_close(wt_monitor* monitor) { delete AsMonitor(monitor); }

WT_API wt_status wt_monitor_snapshot_json(wt_monitor* monitor, char** out_json, size_t* out_len) {
  const char* where = "wt_monitor_snapshot_json";
  return Read(where, monitor, out_json, out_len,
              [&](Monitor& m, std::string& text) { return m.Snapshot(where, &text); });
}

WT_API wt_status wt_monitor_history_json(wt_monitor* monitor, uint64_t since, size_t max_points,
                                         char** out_json, size_t* out_len) {
  const char* where = "wt_monitor_history_json";
  return Read(where, monitor, out_json, out_len, [&](Monitor& m, std::string& text) {
    return m.History(where, since, max_points, &text);
  });
}

WT_API wt_status wt_monitor_events_json(wt_monitor* monitor, uint64_t cursor, size_t max_events,
                                        char** out_json, size_t* out_len) {
  const char* where = "wt_monitor_events_json";
  return Read(where, monitor, out_json, out_len, [&](Monitor& m, std::string& text) {
    return m.Events(where, cursor, max_events, &text);
  });
}

WT_API wt_status wt_monitor_info_json(wt_monitor* monitor, char** out_json, size_t* out_len) {
  const char* where = "wt_monitor_info_json";
  return Read(where, monitor, out_json, out_len,
              [&](Monitor& m, std::string& text) { return m.Info(where, &text); });
}

}  // extern "C"
