// Shared declarations of the weighted._weighted module. The module is a thin room on the C API's
// one door: every call forwards to a wt_* function, every status goes through Check(), and the
// only state kept here is what Python needs to manage handles safely (closed or not, which
// calls are running without the GIL) plus the ids the caller itself passed to set_endpoints.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "weighted/weighted.h"

namespace wtpy {
namespace py = pybind11;

// A failed call: its status and the message wt_last_error() gave on the same thread, read at
// once. Batch calls add each entry's status. Turned into a Python exception in exactly one
// place, the translator in errors.cc, through weighted._errors.from_status().
struct Error {
  int status;
  std::string message;
  std::vector<int> entry_statuses;  // report_batch only
  size_t recorded = 0;              // report_batch only
};

// Not a wt_status: the Python object was closed (use after close). Never sent to the core.
inline constexpr int kStatusClosed = -1;

// The one check: every wt_* status is passed through here right after the call.
inline void Check(wt_status status) {
  if (status != WT_OK) [[unlikely]] throw Error{static_cast<int>(status), wt_last_error(), {}, 0};
}
[[noreturn]] void ThrowClosed(const char* what);

void RegisterErrors(py::module_& m);
void RegisterEngine(py::module_& m);
void RegisterService(py::module_& m);

struct EngineState;
// The state of a weighted._weighted.Engine (or a Python subclass of it).
std::shared_ptr<EngineState> EngineStateOf(py::handle engine);

// The ids passed to a service's latest set_endpoints, in order, so a pick names its endpoint
// without a second C call. The engine stays the authority: a pick whose epoch differs asks it.
struct IdCache {
  uint64_t epoch = 0;
  std::vector<py::object> ids;
};

// Shared by an Engine and every Service taken from it. Fields are read and written with the GIL
// held, except `busy`.
struct EngineState {
  wt_engine* handle = nullptr;  // nullptr once closed
  int clock_mode = WT_CLOCK_REAL;
  // Shared by each call that runs without the GIL (advance, batches, snapshots); taken
  // exclusively, with the GIL released, to destroy the engine. Calls that keep the GIL (pick,
  // report) need no lock: close() cannot run while they hold it.
  std::shared_mutex busy;
  // The event callback's target, on the heap so that it outlives this state when the engine must
  // be destroyed from another thread (see Close); nullptr until a callback is first set.
  struct CallbackSlot* slot = nullptr;
  std::unordered_map<wt_service*, std::shared_ptr<IdCache>> id_caches;

  wt_engine* Handle() const {
    if (handle == nullptr) [[unlikely]] ThrowClosed("engine");
    return handle;
  }
  // Destroys the engine. From inside this engine's own event callback that would join the
  // calling thread: an explicit close() raises there, and the destructor hands the engine to
  // a short-lived thread instead.
  void Close() { Close(false); }
  void Close(bool from_destructor);
  ~EngineState();
};

// What the C trampoline calls: a Python callable receiving each event as a tuple.
struct CallbackSlot {
  py::object fn = py::none();
};

// Runs `fn` (a C call returning wt_status) with the GIL released and the engine marked busy, so
// close() waits for it instead of destroying the engine under it. Event callbacks that fire
// inside may raise; the first such exception is re-raised here after the call returns.
template <class Fn>
void CallWithoutGil(EngineState& st, Fn&& fn);

// Implementation detail of CallWithoutGil (engine.cc).
struct PendingCallbackError {
  py::object error;  // the first exception a callback raised on this thread during the call
  PendingCallbackError* outer = nullptr;
};
PendingCallbackError*& CurrentPendingError();

template <class Fn>
void CallWithoutGil(EngineState& st, Fn&& fn) {
  st.Handle();
  PendingCallbackError pending;
  pending.outer = CurrentPendingError();
  CurrentPendingError() = &pending;
  wt_status status;
  {
    std::shared_lock<std::shared_mutex> lock(st.busy);
    py::gil_scoped_release nogil;
    status = fn();
  }
  CurrentPendingError() = pending.outer;
  if (pending.error) {
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(pending.error.ptr())), pending.error.ptr());
    throw py::error_already_set();
  }
  Check(status);
}

// A string for a C API parameter that is NUL-terminated: refuses an embedded NUL, at which the C
// side would silently cut the string (an id "a\0evil" would become "a"). `what` names it.
const char* CString(const std::string& s, const char* what);
// The same for `len` bytes at `data`, which must be followed by a NUL (a str's UTF-8 form).
const char* CString(const char* data, size_t len, const char* what);
// An endpoint key from a Python int: InvalidArgumentError unless it is in [0, 2^64).
uint64_t ToKey(py::handle key);

// wt_outcome from a Python value: an int (weighted.Outcome is an IntEnum) or its name.
int ToOutcome(py::handle outcome);

}  // namespace wtpy
