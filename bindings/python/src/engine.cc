// weighted._weighted.Engine: owns one wt_engine* and its lifetime (close once, use after close
// raises), forwards the engine-wide calls, and bridges the event callback into Python.
#include <mutex>
#include <string_view>
#include <thread>

#include "binding.h"

namespace wtpy {

PendingCallbackError*& CurrentPendingError() {
  thread_local PendingCallbackError* pending = nullptr;
  return pending;
}

// What the C trampoline calls. The engine owns the slot from wt_engine_set_event_callback() on
// and hands it to ReleaseSlot() after its last call (a later set, or wt_engine_destroy()), on
// whichever thread destroys the engine: the slot itself is plain C++, and its reference to the
// callable goes to the release queue.
struct CallbackSlot {
  PyObject* fn = nullptr;  // owned; replaced with the GIL held; nullptr: no callback
  ~CallbackSlot() { Py_XDECREF(fn); }  // only with the GIL: ReleaseSlot() empties it first
};

namespace {

void ReleaseSlot(void* user) {
  auto* slot = static_cast<CallbackSlot*>(user);
  QueueRelease(slot->fn);
  slot->fn = nullptr;
  delete slot;
}

// The callbacks running on this thread, innermost first (one engine's callback may call
// another engine, whose callback then runs inside it).
struct ActiveCallback {
  const CallbackSlot* slot;
  const ActiveCallback* outer;
};
thread_local const ActiveCallback* tl_callbacks = nullptr;

bool InCallbackOf(const CallbackSlot* slot) {
  if (slot == nullptr) return false;
  for (const ActiveCallback* c = tl_callbacks; c != nullptr; c = c->outer) {
    if (c->slot == slot) return true;
  }
  return false;
}

py::tuple EventTuple(const wt_event& ev) {
  return py::make_tuple(ev.type, ev.time_ns, py::str(ev.service ? ev.service : ""),
                        py::str(ev.endpoint ? ev.endpoint : ""), ev.old_weight, ev.new_weight,
                        py::str(ev.reason ? ev.reason : "{}"));
}

// Runs on the controller thread (real clock) or inside advance()/run_cycle() (manual clock).
// An exception from the Python callback cannot cross the engine: inside advance()/run_cycle()
// it is re-raised by that call when it returns, elsewhere it goes to sys.unraisablehook.
void EventTrampoline(void* user, const wt_event* ev) {
  auto* slot = static_cast<CallbackSlot*>(user);
  if (!Py_IsInitialized() || Finalizing()) return;
  py::gil_scoped_acquire gil;
  if (slot->fn == nullptr) return;
  const ActiveCallback active{slot, tl_callbacks};
  tl_callbacks = &active;
  try {
    // A reference of its own: the callback may replace slot->fn while it runs.
    auto fn = py::reinterpret_borrow<py::object>(slot->fn);
    fn(EventTuple(*ev));
  } catch (py::error_already_set& e) {
    PendingCallbackError* pending = CurrentPendingError();
    if (pending != nullptr && !pending->error) {
      pending->error = e.value();
    } else {
      e.discard_as_unraisable("weighted event callback");
    }
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "weighted event callback failed");
    PyErr_WriteUnraisable(nullptr);
  }
  tl_callbacks = active.outer;
}

// An owner of one engine. Python's `weighted.Engine` subclasses this type.
class Engine {
 public:
  Engine(const std::string& source, int clock_mode, bool is_path)
      : st_(std::make_shared<EngineState>()) {
    wt_engine* h = nullptr;
    if (is_path) {
      Check(wt_engine_create_from_file(CString(source, "config path"), clock_mode, &h));
    } else {
      Check(wt_engine_create(source.data(), source.size(), clock_mode, &h));
    }
    st_->handle = h;
    st_->clock_mode = clock_mode;
  }

  const std::shared_ptr<EngineState>& state() const { return st_; }

  void Close() { st_->Close(); }
  bool Closed() const { return st_->handle == nullptr; }
  int ClockMode() const { return st_->clock_mode; }

  void Reload(const std::string& json) {
    CallWithoutGil(*st_, [&] { return wt_engine_reload(st_->handle, json.data(), json.size()); });
  }
  void ReloadFromFile(const std::string& path) {
    const char* c_path = CString(path, "config path");
    CallWithoutGil(*st_, [&] { return wt_engine_reload_from_file(st_->handle, c_path); });
  }
  int64_t NowNs() {
    int64_t ns = 0;
    Check(wt_engine_now(st_->Handle(), &ns));
    return ns;
  }
  void AdvanceNs(int64_t delta_ns) {
    CallWithoutGil(*st_, [&] { return wt_engine_advance(st_->handle, delta_ns); });
  }
  void RunCycle() {
    CallWithoutGil(*st_, [&] { return wt_engine_run_cycle(st_->handle); });
  }

  void SetEventCallback(py::object fn) {
    wt_engine* h = st_->Handle();
    // Installed once and never replaced: wt_engine_set_event_callback() may not be called from
    // inside a callback, and an empty slot makes the trampoline a no-op anyway.
    if (st_->slot == nullptr) {
      if (fn.is_none()) return;
      if (tl_callbacks != nullptr) {
        throw Error{WT_ERR_INVALID_ARGUMENT,
                    "the first event callback cannot be set from inside an event callback", {}, 0};
      }
      auto slot = std::make_unique<CallbackSlot>();
      slot->fn = fn.inc_ref().ptr();
      Check(wt_engine_set_event_callback(h, &EventTrampoline, slot.get(), &ReleaseSlot));
      st_->slot = slot.release();
      return;
    }
    PyObject* old = st_->slot->fn;
    st_->slot->fn = fn.is_none() ? nullptr : fn.inc_ref().ptr();
    Py_XDECREF(old);
  }

  py::object PollEvent() {
    wt_event ev = WT_EVENT_INIT;
    int has = 0;
    Check(wt_engine_poll_event(st_->Handle(), &ev, &has));
    if (!has) return py::none();
    return EventTuple(ev);
  }

  // The fields a load report carries, as the engine's config maps them; nothing is recorded.
  py::dict ParseLoadReport(py::handle header) {
    const Text t = TextArg(header, "parse_load_report", "load_report");
    wt_load_report r = WT_LOAD_REPORT_INIT;
    Check(wt_engine_parse_load_report(st_->Handle(), t.data, t.size, &r));
    py::dict out;
    const struct {
      uint32_t bit;
      const char* name;
      double value;
    } fields[] = {{WT_RES_CPU, "cpu", r.cpu},
                  {WT_RES_MEMORY, "memory", r.memory},
                  {WT_RES_THREAD_POOL, "thread_pool", r.thread_pool},
                  {WT_RES_CONNECTION_POOL, "connection_pool", r.connection_pool},
                  {WT_LOAD_RPS, "rps", r.rps},
                  {WT_LOAD_EPS, "eps", r.eps}};
    for (const auto& f : fields) {
      if (r.present & f.bit) out[f.name] = f.value;
    }
    return out;
  }

  py::str SnapshotJson() { return TakeText(&wt_engine_snapshot_json); }
  py::str Prometheus() { return TakeText(&wt_engine_prometheus); }

 private:
  py::str TakeText(wt_status (*fn)(wt_engine*, char**, size_t*)) {
    char* text = nullptr;
    size_t len = 0;
    CallWithoutGil(*st_, [&] { return fn(st_->handle, &text, &len); });
    std::unique_ptr<char, void (*)(void*)> owned(text, &wt_free);
    return py::str(text, len);
  }

  std::shared_ptr<EngineState> st_;
};

}  // namespace

void EngineState::Close(bool from_destructor) {
  if (handle == nullptr) return;
  const bool own_callback = InCallbackOf(slot);
  if (own_callback && !from_destructor) {
    throw Error{WT_ERR_INVALID_ARGUMENT,
                "close() called from inside the engine's own event callback", {}, 0};
  }
  wt_engine* h = handle;
  handle = nullptr;  // from here on every call raises ClosedError
  slot = nullptr;    // the engine frees it (ReleaseSlot) once its last call has returned
  for (auto& [ptr, service] : services) service->handle = nullptr;
  services.clear();
  if (own_callback) {
    // The last reference went away inside this engine's own callback (on its controller
    // thread): destroying here would join this very thread. Nothing else can reach the engine
    // any more, so another thread destroys it once the callback has returned.
    std::thread([h] {
      wt_engine_destroy(h);
      if (Py_IsInitialized() && !Finalizing()) {
        py::gil_scoped_acquire gil;
        DrainReleases();
      }
    }).detach();
    return;
  }
  if (Finalizing()) {
    wt_engine_destroy(h);
  } else {
    // Without the GIL: calls still running without it finish first, and the controller thread
    // may need the GIL to deliver a last event before it can stop.
    py::gil_scoped_release nogil;
    std::unique_lock<std::shared_mutex> lock(busy);
    wt_engine_destroy(h);
  }
  DrainReleases();  // every endpoint set and the callback slot were released by the destroy
}

EngineState::~EngineState() {
  try {
    Close(true);
  } catch (...) {
  }
}

bool InOwnCallback(const EngineState& st) { return InCallbackOf(st.slot); }

// Services keep the EngineState alive; exposed for service.cc.
std::shared_ptr<EngineState> EngineStateOf(py::handle engine) {
  return engine.cast<Engine&>().state();
}

void RegisterEngine(py::module_& m) {
  py::class_<Engine>(m, "Engine", py::dynamic_attr(),
                     "Low-level owner of one engine; use weighted.Engine.")
      .def(py::init<const std::string&, int, bool>(), py::arg("source"), py::arg("clock_mode"),
           py::arg("is_path"))
      .def("close", Method(&Engine::Close), "Destroys the engine; later calls raise ClosedError.")
      .def_property_readonly("closed", Method(&Engine::Closed))
      .def_property_readonly("clock_mode", Method(&Engine::ClockMode))
      .def("_reload", Method(&Engine::Reload), py::arg("json"))
      .def("_reload_from_file", Method(&Engine::ReloadFromFile), py::arg("path"))
      .def("now_ns", Method(&Engine::NowNs), "The engine's time in nanoseconds.")
      .def("advance_ns", Method(&Engine::AdvanceNs), py::arg("delta_ns"),
           "Manual clock: moves time forward and runs the cycles that fall due.")
      .def("run_cycle", Method(&Engine::RunCycle), "Runs one controller cycle now.")
      .def("_set_event_callback", Method(&Engine::SetEventCallback), py::arg("fn").none(true))
      .def("_poll_event", Method(&Engine::PollEvent))
      .def("parse_load_report", Method(&Engine::ParseLoadReport), py::arg("load_report"),
           "Parses a load report header's value under this engine's config: a dict of the "
           "fields it carries (cpu, memory, thread_pool, connection_pool, rps, eps).")
      .def("_snapshot_json", Method(&Engine::SnapshotJson))
      .def("prometheus", Method(&Engine::Prometheus),
           "All state in Prometheus text exposition format 0.0.4.");
}

}  // namespace wtpy
