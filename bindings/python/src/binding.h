// Shared declarations of the weighted._weighted module. The module is a thin room on the C API's
// one door: every call forwards to a wt_* function, every status goes through Check(), and the
// only state kept here is what Python needs to manage handles safely (closed or not, which
// calls are running without the GIL). The engine owns the endpoint table: each endpoint's id
// object rides in its spec's user pointer and comes back with its picks.
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <type_traits>
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
[[noreturn]] void ThrowClosed(const std::string& what);

inline bool Finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

// References the engine gives back (wt_release_fn) arrive on whichever thread frees an endpoint
// set or the callback slot, often without the GIL and while the engine holds its locks, so
// they are queued, never released there. DrainReleases() drops them; it needs the GIL and is
// called after every call that may have freed something (releases.cc).
void QueueRelease(void* object);
void DrainReleases() noexcept;

// The C++ object behind `self`, an instance of the pybind11 class T or of a Python subclass.
// TypeError for an instance whose __init__ never ran (T.__new__(T)) or raised (a bad config:
// the half-made object still reaches a caller, through the traceback's frames). pybind11
// itself would call a member function on such an instance through memory it allocates but
// never constructs, and crash. With one pybind11 base the instance has the simple layout and
// the flag and the pointer are read directly (the per-request methods call this); Python-side
// multiple inheritance from several pybind11 classes takes pybind11's lookup.
template <class T>
T& Self(PyObject* self) {
  auto* inst = reinterpret_cast<py::detail::instance*>(self);
  void* p = nullptr;
  if (inst->simple_layout) {
    if (inst->simple_holder_constructed) p = inst->simple_value_holder[0];
  } else {
    auto vh = inst->get_value_and_holder(py::detail::get_type_info(typeid(T)), false);
    if (vh && vh.holder_constructed()) p = vh.value_ptr();
  }
  if (p == nullptr) [[unlikely]] {
    throw py::type_error(std::string(Py_TYPE(self)->tp_name) +
                         ".__init__() was not called or did not complete");
  }
  return *static_cast<T*>(p);
}

// A member function bound as a method that goes through Self(): every pybind11 method of the
// module's classes is registered through this, so no call reaches an unconstructed object.
// `self` arrives as a handle, checked to be a T (pybind11 does not check a handle's type).
template <class T>
T& CheckedSelf(py::handle self) {
  if (!py::isinstance<T>(self)) [[unlikely]] {
    throw py::type_error(std::string("expected a ") + py::type_id<T>() + ", got " +
                         Py_TYPE(self.ptr())->tp_name);
  }
  return Self<T>(self.ptr());
}
template <class T, class R, class... A>
auto Method(R (T::*f)(A...)) {
  return [f](py::handle self, A... a) -> R { return (CheckedSelf<T>(self).*f)(std::forward<A>(a)...); };
}
template <class T, class R, class... A>
auto Method(R (T::*f)(A...) const) {
  return [f](py::handle self, A... a) -> R { return (CheckedSelf<T>(self).*f)(std::forward<A>(a)...); };
}

void RegisterErrors(py::module_& m);
void RegisterEngine(py::module_& m);
void RegisterService(py::module_& m);
void RegisterMonitor(py::module_& m);

struct EngineState;
// The state of a weighted._weighted.Engine (or a Python subclass of it).
std::shared_ptr<EngineState> EngineStateOf(py::handle engine);

// One service as every Python Service object for it sees it: several may wrap the same
// wt_service*, and remove() through one must close them all.
struct ServiceState {
  wt_service* handle = nullptr;  // nullptr once removed or once the engine is closed
  bool removed = false;
  std::string name;
  // Shared by each call on this service that runs without the GIL (set_endpoints,
  // report_batch); taken exclusively by remove(), which must not race with them.
  std::shared_mutex busy;

  wt_service* Handle() const {
    if (handle == nullptr) [[unlikely]] ThrowClosed();
    return handle;
  }
  [[noreturn]] void ThrowClosed() const;
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
  // The event callback's target: the engine owns it once installed and frees it through the
  // callback's release hook; kept here only to recognise this engine's own callback.
  struct CallbackSlot* slot = nullptr;
  std::unordered_map<wt_service*, std::shared_ptr<ServiceState>> services;

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

// Implementation detail of CallWithoutGil (engine.cc).
struct PendingCallbackError {
  py::object error;  // the first exception a callback raised on this thread during the call
  PendingCallbackError* outer = nullptr;
};
PendingCallbackError*& CurrentPendingError();

// True while this thread runs inside one of this engine's event callbacks, at any depth. The
// engine delivers its events one at a time under a lock, so a call that raises an event of its
// own (close, remove) would wait there for itself.
bool InOwnCallback(const EngineState& st);

// Runs `fn` (a C call returning wt_status) with the GIL released and the engine marked busy, so
// close() waits for it instead of destroying the engine under it. With `service`, the call is
// on that service: `fn` receives its handle, checked and locked (shared, so remove() waits for
// it) while the GIL is still held. Locks are only ever taken under the GIL after the handle
// check, so taking them never waits: close() and remove() mark the handle first. With
// `raise_callback_errors`, the first exception an event callback raises inside the call is
// re-raised here after it returns (advance, run_cycle, reload); otherwise such exceptions go to
// sys.unraisablehook, as outside any call. References the engine released meanwhile are
// dropped before returning.
template <class Fn>
void CallWithoutGil(EngineState& st, Fn&& fn, bool raise_callback_errors = true,
                    ServiceState* service = nullptr) {
  st.Handle();
  wt_service* handle = service != nullptr ? service->Handle() : nullptr;
  PendingCallbackError pending;
  if (raise_callback_errors) {
    pending.outer = CurrentPendingError();
    CurrentPendingError() = &pending;
  }
  wt_status status;
  {
    std::shared_lock<std::shared_mutex> lock(st.busy);
    std::shared_lock<std::shared_mutex> service_lock;
    if (service != nullptr) service_lock = std::shared_lock<std::shared_mutex>(service->busy);
    py::gil_scoped_release nogil;
    if constexpr (std::is_invocable_v<Fn, wt_service*>) {
      status = fn(handle);
    } else {
      status = fn();
    }
  }
  if (raise_callback_errors) CurrentPendingError() = pending.outer;
  DrainReleases();
  if (pending.error) {
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(pending.error.ptr())), pending.error.ptr());
    throw py::error_already_set();
  }
  Check(status);
}

// `s` as the core quotes caller-given names in its messages (core/src/util/quoted.h, which is
// private to the core): in double quotes, with \" \\ \n \r \t and \xNN for the other control
// characters, so a name cannot forge a log line; the binding's own messages read the same.
std::string Quoted(std::string_view s);
// The same without the quotes.
std::string Escaped(std::string_view s);
// repr(obj), cut to a readable length, for messages about a value of the wrong kind.
std::string ShortRepr(py::handle obj);

// The UTF-8 bytes of a str (its cached form, valid while the str lives) or of a bytes object, for
// a C string parameter. TypeError naming `fn` and `arg` for anything else, and for a str that
// has no UTF-8 form (a lone surrogate), saying where the surrogate is.
struct Text {
  const char* data;
  size_t size;
};
Text TextArg(py::handle obj, const char* fn, const char* arg);

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
