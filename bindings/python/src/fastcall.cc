// Argument binding and installation of the plain CPython methods declared in fastcall.h.
#include "fastcall.h"

#include <cstring>
#include <string>

namespace wtpy {

bool BindArgs(const Signature& sig, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
              PyObject** out) {
  const char* fn = sig.fn;
  const int n = sig.n;
  if (nargs > n) [[unlikely]] {
    PyErr_Format(PyExc_TypeError, "%s() takes at most %d arguments (%zd given)", fn, n, nargs);
    return false;
  }
  for (int i = 0; i < n; ++i) out[i] = i < nargs ? args[i] : nullptr;
  if (kwnames != nullptr) {
    const Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = 0; k < nkw; ++k) {
      PyObject* kw = PyTuple_GET_ITEM(kwnames, k);
      int i = 0;
      while (i < n && PyUnicode_CompareWithASCIIString(kw, sig.names[i]) != 0) ++i;
      if (i == n) {
        PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", fn, kw);
        return false;
      }
      if (out[i] != nullptr) {
        PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", fn,
                     sig.names[i]);
        return false;
      }
      out[i] = args[nargs + k];
    }
  }
  for (int i = 0; i < sig.required; ++i) {
    if (out[i] == nullptr) [[unlikely]] {
      PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s' (pos %d)", fn,
                   sig.names[i], i + 1);
      return false;
    }
  }
  return true;
}

void AddMethod(py::handle cls, PyMethodDef* def) {
  PyObject* descr = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), def);
  if (descr == nullptr) throw py::error_already_set();
  // setattr (not the type's dict directly) so that the type's method cache is invalidated.
  int rc = PyObject_SetAttrString(cls.ptr(), def->ml_name, descr);
  Py_DECREF(descr);
  if (rc != 0) throw py::error_already_set();
}

double ToDouble(PyObject* value, const char* what) {
  if (PyFloat_CheckExact(value)) [[likely]] return PyFloat_AS_DOUBLE(value);
  if (!PyUnicode_Check(value) && !PyBytes_Check(value)) {
    const double d = PyFloat_AsDouble(value);  // float subclasses, __float__, __index__
    if (!(d == -1.0 && PyErr_Occurred())) return d;
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) throw py::error_already_set();
    PyErr_Clear();
  }
  throw py::type_error(std::string(what) + " must be a number, not " + Py_TYPE(value)->tp_name);
}

}  // namespace wtpy
