// weighted._weighted.Pick as a plain CPython type (see pick.cc for why).
#pragma once

#include "binding.h"

namespace wtpy {

// How a pick was finished. The C API records a second complete (and releases a tracked pick's
// in-flight count again, taking it from another pick); a Pick refuses it instead.
enum class Finished : uint8_t { kNo = 0, kCompleted, kCancelled };

struct PickObject {
  PyObject_HEAD
  wt_pick raw;
  PyObject* endpoint;  // owned: the id object set_endpoints registered (raw.user, pinned)
  Finished finished;
};

void RegisterPick(py::module_& m);
// A new Pick owning `endpoint`, the object the engine returned in raw.user.
py::object NewPick(const wt_pick& raw, py::object endpoint);
// The wt_pick inside a Pick; TypeError for anything else.
const wt_pick& PickOf(py::handle pick);
// The Pick itself, to be finished: TypeError for anything else, InvalidArgumentError naming the
// call (`fn`) if it was finished already.
PickObject& OpenPick(py::handle pick, const char* fn);
bool IsPick(py::handle obj);

}  // namespace wtpy
