// weighted._weighted.Pick: the result of Service.pick(), the object made on every request.
// A plain CPython type rather than a pybind11 class: pybind11 instances are registered in a
// global instance map and carry a holder, which costs more than the engine's whole pick; this
// one is a struct with a refcount (measured in tests/python/bench: docs/python.md).
#include "pick.h"

#include <structmember.h>

#include <cstddef>
#include <string>

namespace wtpy {
namespace {

PyTypeObject* g_pick_type = nullptr;

// Freed Picks kept for the next pick() instead of returned to the allocator, as CPython keeps
// floats and tuples: pick-use-drop allocates nothing. Touched only with the GIL held (the
// module does not declare itself free-threading safe, so a free-threaded build enables the GIL
// for it; the list is compiled out there all the same).
#ifndef Py_GIL_DISABLED
constexpr int kFreeListMax = 64;
PickObject* g_free_list[kFreeListMax];
int g_free_count = 0;
#endif

void PickDealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  auto* p = reinterpret_cast<PickObject*>(self);
  Py_CLEAR(p->endpoint);  // an exact str (service.cc): its release runs no Python code
#ifndef Py_GIL_DISABLED
  if (g_free_count < kFreeListMax) {
    g_free_list[g_free_count++] = p;
  } else {
    PyObject_Free(self);
  }
#else
  PyObject_Free(self);
#endif
  Py_DECREF(type);  // heap type: each instance holds a reference
}

PyObject* FlagGetter(PyObject* self, void* bit) {
  const uint32_t flags = reinterpret_cast<PickObject*>(self)->raw.flags;
  return PyBool_FromLong((flags & static_cast<uint32_t>(reinterpret_cast<uintptr_t>(bit))) != 0);
}

PyObject* FinishedGetter(PyObject* self, void*) {
  return PyBool_FromLong(reinterpret_cast<PickObject*>(self)->finished != Finished::kNo);
}

PyObject* PickRepr(PyObject* self) {
  auto* p = reinterpret_cast<PickObject*>(self);
  return PyUnicode_FromFormat("Pick(endpoint=%R, index=%u, epoch=%llu, flags=%u)", p->endpoint,
                              p->raw.index, static_cast<unsigned long long>(p->raw.epoch),
                              p->raw.flags);
}

PyMemberDef kMembers[] = {
    {"endpoint", T_OBJECT_EX, offsetof(PickObject, endpoint), READONLY, "The endpoint id."},
    {"key", T_ULONGLONG, offsetof(PickObject, raw) + offsetof(wt_pick, key), READONLY,
     "The endpoint's key (stable while it stays in the set)."},
    {"epoch", T_ULONGLONG, offsetof(PickObject, raw) + offsetof(wt_pick, epoch), READONLY,
     "Which set_endpoints call `index` refers to (1, 2, ...)."},
    {"index", T_UINT, offsetof(PickObject, raw) + offsetof(wt_pick, index), READONLY,
     "Position of the endpoint in that set_endpoints call."},
    {"flags", T_UINT, offsetof(PickObject, raw) + offsetof(wt_pick, flags), READONLY,
     "WT_PICK_* bits (see probe, panic, tracked)."},
    {nullptr, 0, 0, 0, nullptr}};

PyGetSetDef kGetSet[] = {
    {"probe", FlagGetter, nullptr, "The endpoint is half-isolated; this request is a probe.",
     reinterpret_cast<void*>(static_cast<uintptr_t>(WT_PICK_PROBE))},
    {"panic", FlagGetter, nullptr, "The service is in panic: plain round-robin.",
     reinterpret_cast<void*>(static_cast<uintptr_t>(WT_PICK_PANIC))},
    {"tracked", FlagGetter, nullptr, "An in-flight count was taken: finish with complete or cancel.",
     reinterpret_cast<void*>(static_cast<uintptr_t>(WT_PICK_TRACKED))},
    {"finished", FinishedGetter, nullptr,
     "complete() or cancel() has finished this pick; a second finish is refused.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot kSlots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(&PickDealloc)},
    {Py_tp_repr, reinterpret_cast<void*>(&PickRepr)},
    {Py_tp_members, kMembers},
    {Py_tp_getset, kGetSet},
    {Py_tp_doc, const_cast<char*>(
                    "One chosen endpoint; finish it with Service.complete() or Service.cancel().")},
    {0, nullptr}};

#ifdef Py_TPFLAGS_DISALLOW_INSTANTIATION
constexpr unsigned kFlags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION;
#else
constexpr unsigned kFlags = Py_TPFLAGS_DEFAULT;
#endif
// Only pick() makes Picks.
PyType_Spec kSpec = {"weighted._weighted.Pick", sizeof(PickObject), 0, kFlags, kSlots};

}  // namespace

void RegisterPick(py::module_& m) {
  PyObject* type = PyType_FromSpec(&kSpec);
  if (type == nullptr) throw py::error_already_set();
  g_pick_type = reinterpret_cast<PyTypeObject*>(type);
#ifndef Py_TPFLAGS_DISALLOW_INSTANTIATION
  g_pick_type->tp_new = nullptr;  // Python < 3.10
#endif
  m.add_object("Pick", py::reinterpret_steal<py::object>(type));
  Py_INCREF(type);  // g_pick_type keeps its own reference for the module's lifetime
}

py::object NewPick(const wt_pick& raw, py::object endpoint) {
  PickObject* p;
#ifndef Py_GIL_DISABLED
  if (g_free_count > 0) {
    p = g_free_list[--g_free_count];
    PyObject_Init(reinterpret_cast<PyObject*>(p), g_pick_type);  // type reference, refcount 1
  } else {
    p = PyObject_New(PickObject, g_pick_type);
  }
#else
  p = PyObject_New(PickObject, g_pick_type);
#endif
  if (p == nullptr) throw py::error_already_set();
  p->raw = raw;
  p->endpoint = endpoint.release().ptr();
  p->finished = Finished::kNo;
  return py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(p));
}

const wt_pick& PickOf(py::handle pick) {
  if (Py_TYPE(pick.ptr()) != g_pick_type) [[unlikely]] {
    throw py::type_error(std::string("expected a weighted.Pick, got ") +
                         Py_TYPE(pick.ptr())->tp_name);
  }
  return reinterpret_cast<PickObject*>(pick.ptr())->raw;
}

PickObject& OpenPick(py::handle pick, const char* fn) {
  PickOf(pick);
  auto& p = *reinterpret_cast<PickObject*>(pick.ptr());
  if (p.finished != Finished::kNo) [[unlikely]] {
    Py_ssize_t len = 0;
    const char* id = PyUnicode_AsUTF8AndSize(p.endpoint, &len);  // an id: always encodable
    if (id == nullptr) throw py::error_already_set();
    throw Error{WT_ERR_INVALID_ARGUMENT,
                std::string(fn) + ": this pick of " + Quoted(std::string_view(id, len)) +
                    " was already finished (" +
                    (p.finished == Finished::kCompleted ? "complete" : "cancel") +
                    "): each pick is finished once, by complete() or cancel()",
                {}, 0};
  }
  return p;
}

bool IsPick(py::handle obj) { return Py_TYPE(obj.ptr()) == g_pick_type; }

}  // namespace wtpy
