// The one place where a failed call becomes a Python exception. Check() (binding.h) captures the
// status and wt_last_error() on the calling thread; this translator hands both to
// weighted._errors.from_status(), whose table picks the exception class.
#include <exception>

#include "binding.h"

namespace wtpy {

void ThrowClosed(const std::string& what) {
  throw Error{kStatusClosed, what + " is closed", {}, 0};
}

void ServiceState::ThrowClosed() const {
  if (!removed) wtpy::ThrowClosed("engine");
  throw Error{kStatusClosed,
              "service \"" + name + "\" is closed: remove() took it out of its engine", {}, 0};
}

namespace {

void SetPythonError(const Error& e) {
  try {
    py::object errors = py::module_::import("weighted._errors");
    py::object exc = errors.attr("from_status")(e.status, e.message);
    if (!e.entry_statuses.empty()) {
      py::list statuses;
      for (int s : e.entry_statuses) statuses.append(s);
      exc.attr("entry_statuses") = statuses;
      exc.attr("recorded") = e.recorded;
    }
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
  } catch (py::error_already_set& inner) {
    // weighted._errors itself failed to load: still raise something that names the problem.
    std::string msg = std::string(wt_status_name(e.status)) + ": " + e.message;
    PyErr_SetString(PyExc_RuntimeError, msg.c_str());
  }
}

}  // namespace

void RegisterErrors(py::module_& m) {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      SetPythonError(e);
    }
  });
  m.def("status_name", &wt_status_name, py::arg("status"),
        "The stable name of a wt_status value, e.g. 'WT_ERR_CONFIG_INVALID'.");
  m.def("last_error", &wt_last_error,
        "The calling thread's message for its last failed C call ('' after a success).");
}

}  // namespace wtpy
