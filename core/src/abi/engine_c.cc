#include "abi/c_api.h"
#include "export/prometheus.h"
#include "export/snapshot_json.h"
#include "export/state_file.h"

using namespace weighted;

namespace {

wt_status Create(const char* where, std::string_view json, int clock_mode, wt_engine** out) {
  return Call(where, [&]() -> Status {
    if (!out) return NullArg(where, "out");
    std::unique_ptr<Engine> e;
    Status s = Engine::Create(where, json, clock_mode, &e);
    if (!s.ok()) return s;
    StateFileChange file;
    s = PrepareStateFile(where, *e, StateFileSettingsOf(*e->config()), &file);
    if (s.ok()) s = InstallStateFile(where, *e, std::move(file));
    if (!s.ok()) return s;
    *out = reinterpret_cast<wt_engine*>(e.release());
    return Status::Ok();
  });
}

// A reload whose state file cannot be made is refused before anything changes.
Status Reload(const char* where, Engine& engine, std::string_view json) {
  Config next;
  StateFileChange file;
  if (ParseConfig(json, &next).ok()) {  // else Reload reports the error
    Status s = PrepareStateFile(where, engine, StateFileSettingsOf(next), &file);
    if (!s.ok()) return s;
  }
  Status s = engine.Reload(where, json);
  if (!s.ok()) return s;  // the prepared file, never renamed to its path, is removed
  return InstallStateFile(where, engine, std::move(file));
}

}  // namespace

extern "C" {

WT_API wt_status wt_engine_create(const char* json, size_t len, int clock_mode, wt_engine** out) {
  if (!json) return Call("wt_engine_create", [] { return NullArg("wt_engine_create", "json"); });
  return Create("wt_engine_create", std::string_view(json, len), clock_mode, out);
}

WT_API wt_status wt_engine_create_from_file(const char* path, int clock_mode, wt_engine** out) {
  std::string text;
  wt_status st = Call("wt_engine_create_from_file", [&] {
    return ReadFile("wt_engine_create_from_file", path, DefaultConfig().limits.max_config_bytes, &text);
  });
  if (st != WT_OK) return st;
  return Create("wt_engine_create_from_file", text, clock_mode, out);
}

WT_API void wt_engine_destroy(wt_engine* engine) {
  if (engine && AsEngine(engine)->Valid()) delete AsEngine(engine);
}

WT_API wt_status wt_engine_reload(wt_engine* engine, const char* json, size_t len) {
  return Call("wt_engine_reload", [&]() -> Status {
    Status s = CheckEngine("wt_engine_reload", engine);
    if (!s.ok()) return s;
    if (!json) return NullArg("wt_engine_reload", "json");
    return Reload("wt_engine_reload", *AsEngine(engine), std::string_view(json, len));
  });
}

WT_API wt_status wt_engine_reload_from_file(wt_engine* engine, const char* path) {
  return Call("wt_engine_reload_from_file", [&]() -> Status {
    Status s = CheckEngine("wt_engine_reload_from_file", engine);
    if (!s.ok()) return s;
    std::string text;
    s = ReadFile("wt_engine_reload_from_file", path,
                 AsEngine(engine)->config()->limits.max_config_bytes, &text);
    if (!s.ok()) return s;
    return Reload("wt_engine_reload_from_file", *AsEngine(engine), text);
  });
}

WT_API wt_status wt_engine_now(wt_engine* engine, int64_t* out_ns) {
  return Call("wt_engine_now", [&]() -> Status {
    Status s = CheckEngine("wt_engine_now", engine);
    if (!s.ok()) return s;
    if (!out_ns) return NullArg("wt_engine_now", "out_ns");
    *out_ns = AsEngine(engine)->Now();
    return Status::Ok();
  });
}

WT_API wt_status wt_engine_advance(wt_engine* engine, int64_t delta_ns) {
  return Call("wt_engine_advance", [&]() -> Status {
    Status s = CheckEngine("wt_engine_advance", engine);
    if (!s.ok()) return s;
    return AsEngine(engine)->Advance("wt_engine_advance", delta_ns);
  });
}

WT_API wt_status wt_engine_run_cycle(wt_engine* engine) {
  return Call("wt_engine_run_cycle", [&]() -> Status {
    Status s = CheckEngine("wt_engine_run_cycle", engine);
    if (!s.ok()) return s;
    AsEngine(engine)->RunCycle();
    return Status::Ok();
  });
}

WT_API wt_status wt_engine_service(wt_engine* engine, const char* name, wt_service** out) {
  return Call("wt_engine_service", [&]() -> Status {
    Status s = CheckEngine("wt_engine_service", engine);
    if (!s.ok()) return s;
    if (!name) return NullArg("wt_engine_service", "name");
    if (!out) return NullArg("wt_engine_service", "out");
    Service* svc = nullptr;
    s = AsEngine(engine)->GetService("wt_engine_service", name, &svc);
    if (s.ok()) *out = reinterpret_cast<wt_service*>(svc);
    return s;
  });
}

WT_API wt_status wt_engine_set_event_callback(wt_engine* engine, wt_event_fn fn, void* user,
                                              wt_release_fn release) {
  return Call("wt_engine_set_event_callback", [&]() -> Status {
    Status s = CheckEngine("wt_engine_set_event_callback", engine);
    if (!s.ok()) return s;
    return AsEngine(engine)->events().SetCallback(fn, user, release);
  });
}

WT_API wt_status wt_engine_poll_event(wt_engine* engine, wt_event* out, int* out_has_event) {
  return Call("wt_engine_poll_event", [&]() -> Status {
    Status s = CheckEngine("wt_engine_poll_event", engine);
    if (!s.ok()) return s;
    if (!out) return NullArg("wt_engine_poll_event", "out");
    if (!out_has_event) return NullArg("wt_engine_poll_event", "out_has_event");
    s = CheckSize("wt_engine_poll_event", "out", *out);
    if (!s.ok()) return s;
    return AsEngine(engine)->events().Poll(out, out_has_event);
  });
}

WT_API wt_status wt_engine_parse_load_report(wt_engine* engine, const char* header, size_t len,
                                             wt_load_report* out) {
  constexpr const char* where = "wt_engine_parse_load_report";
  return Call(where, [&]() -> Status {
    Status s = CheckEngine(where, engine);
    if (!s.ok()) return s;
    if (!header) return NullArg(where, "header");
    if (!out) return NullArg(where, "out");
    s = CheckSize(where, "out", *out);
    if (!s.ok()) return s;
    const auto cfg = AsEngine(engine)->config();
    LoadReport r;
    // The same names and bounds as recording uses, so that a header this accepts is one a
    // response may carry (the server's latency is checked, though the struct has no field for it).
    s = ParseLoadReport(where, std::string_view(header, len),
                        {cfg->load_report.thread_pool_metric,
                         cfg->load_report.connection_pool_metric,
                         cfg->load_report.latency_metric, cfg->limits.max_latency_ms},
                        &r);
    if (!s.ok()) return s;
    out->present = r.present;
    out->cpu = r.resources[0];
    out->memory = r.resources[1];
    out->thread_pool = r.resources[2];
    out->connection_pool = r.resources[3];
    out->rps = r.rps;
    out->eps = r.eps;
    return Status::Ok();
  });
}

WT_API wt_status wt_engine_snapshot_json(wt_engine* engine, char** out_json, size_t* out_len) {
  return Call("wt_engine_snapshot_json", [&]() -> Status {
    Status s = CheckEngine("wt_engine_snapshot_json", engine);
    if (!s.ok()) return s;
    if (!out_json) return NullArg("wt_engine_snapshot_json", "out_json");
    return ReturnText(SnapshotText(*AsEngine(engine)), out_json, out_len);
  });
}

WT_API wt_status wt_engine_prometheus(wt_engine* engine, char** out_text, size_t* out_len) {
  return Call("wt_engine_prometheus", [&]() -> Status {
    Status s = CheckEngine("wt_engine_prometheus", engine);
    if (!s.ok()) return s;
    if (!out_text) return NullArg("wt_engine_prometheus", "out_text");
    return ReturnString(PrometheusText(*AsEngine(engine)), out_text, out_len);
  });
}

}  // extern "C"
