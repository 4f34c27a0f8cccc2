// Plain CPython methods on a pybind11 class, for the calls made on every request.
//
// A pybind11 method is an instancemethod: each call through an instance allocates a bound-method
// object, then pybind11's generic dispatcher runs (overload loop, a function_call record, the
// argument loaders, a registry lookup for the type of `self`, a Python subclass here). perf put
// that at 36% of a Python pick (docs/python.md). A method defined with PyMethodDef (METH_NOARGS
// or METH_FASTCALL) and installed on the class as a method descriptor is called by the
// interpreter directly, with `self` and the arguments in a C array. The few methods that
// use this (Service.pick, complete, cancel, report: service.cc) keep the signatures, keyword
// names and error behaviour of the pybind11 ones; errors still go through the one translator
// (errors.cc) via Translated().
#pragma once

#include <string>

#include "binding.h"

namespace wtpy {

// Runs `body` (returning a new reference, or nullptr with a Python error set); any C++
// exception it throws is turned into a Python exception by the same registered translators a
// pybind11 method would use (errors.cc for Error), so there is still one place for errors.
// The catch clauses are those of pybind11's own dispatcher (pybind11.h, cpp_function).
template <class Body>
PyObject* Translated(Body&& body) {
  try {
    return body();
  } catch (py::error_already_set& e) {
    e.restore();
    return nullptr;
#ifdef __GLIBCXX__
  } catch (abi::__forced_unwind&) {
    throw;  // thread cancellation must unwind
#endif
  } catch (...) {
    py::detail::try_translate_exceptions();
    return nullptr;
  }
}

// The parameters of a METH_FASTCALL | METH_KEYWORDS method: `n` names, of which the first
// `required` have no default.
struct Signature {
  const char* fn;
  const char* names[4];
  int n;
  int required;
};

// Binds a call's positional and keyword arguments to the parameters of `sig`: out[i] is a
// borrowed reference, or nullptr for an omitted optional parameter. Raises TypeError (worded as
// CPython's own C functions word it) and returns false on a missing, repeated, unknown or
// surplus argument. The methods call it only when a call is not plainly positional.
bool BindArgs(const Signature& sig, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
              PyObject** out);

// A method `name` (its PyMethodDef must outlive the module: a static) on the pybind11 class.
void AddMethod(py::handle cls, PyMethodDef* def);

// latency_ms as a double: a float, or anything float() accepts without parsing a string
// (int, numbers with __float__ or __index__), as pybind11's double argument did.
// TypeError "<what> must be a number, not <type>" otherwise.
double ToDouble(PyObject* value, const char* what);

}  // namespace wtpy
