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
              "service " + Quoted(name) + " is closed: remove() took it out of its engine", {}, 0};
}

namespace {

// A message as Python text. The core's messages may carry bytes that are not UTF-8 (a parse
// error quotes the bad byte it read): those are shown as \xNN rather than failing to convert,
// which would replace the error with a UnicodeDecodeError about the message itself.
py::str Decoded(const std::string& s) {
  PyObject* o =
      PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "backslashreplace");
  if (o == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(o);
}

void SetPythonError(const Error& e) {
  try {
    py::object errors = py::module_::import("weighted._errors");
    py::object exc = errors.attr("from_status")(e.status, Decoded(e.message));
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
  m.def(
      "last_error", [] { return Decoded(wt_last_error()); },
      "The calling thread's message for its last failed C call ('' after a success).");
  // For the messages the Python layer writes itself (a config file it could not read), so they
  // quote caller-given names as the core and the binding do.
  m.def(
      "quoted",
      [](py::handle s) {
        const Text t = TextArg(s, "quoted", "s");
        return Decoded(Quoted(std::string_view(t.data, t.size)));
      },
      py::arg("s"), "s (str or bytes) in double quotes, escaped as the core escapes names.");
}

}  // namespace wtpy
