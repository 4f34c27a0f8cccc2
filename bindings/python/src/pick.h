// weighted._weighted.Pick as a plain CPython type (see pick.cc for why).
#pragma once

#include "binding.h"

namespace wtpy {

struct PickObject {
  PyObject_HEAD
  wt_pick raw;
  PyObject* endpoint;  // str, owned
};

void RegisterPick(py::module_& m);
// A new Pick owning `endpoint`.
py::object NewPick(const wt_pick& raw, py::object endpoint);
// The wt_pick inside a Pick; TypeError for anything else.
const wt_pick& PickOf(py::handle pick);
bool IsPick(py::handle obj);

}  // namespace wtpy
