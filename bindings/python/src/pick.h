// weighted._weighted.Pick as a plain CPython type (see pick.cc for why).
#pragma once

#include "binding.h"

namespace wtpy {

struct PickObject {
  PyObject_HEAD
  wt_pick raw;
  PyObject* endpoint;  // owned: the id object set_endpoints registered (raw.user, pinned)
};

void RegisterPick(py::module_& m);
// A new Pick owning `endpoint`, the object the engine returned in raw.user.
py::object NewPick(const wt_pick& raw, py::object endpoint);
// The wt_pick inside a Pick; TypeError for anything else.
const wt_pick& PickOf(py::handle pick);
bool IsPick(py::handle obj);

}  // namespace wtpy
