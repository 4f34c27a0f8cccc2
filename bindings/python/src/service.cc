// weighted._weighted.Service and Pick: the hot path. pick, complete and report keep the GIL (a
// ~100 ns C call is cheaper than releasing it); set_endpoints, remove and report_batch release it.
#include <cmath>
#include <cstring>
#include <optional>
#include <string_view>

#include "binding.h"
#include "fastcall.h"
#include "pick.h"

namespace wtpy {

namespace {
// More than the C API will ever define; bounds the walk over wt_outcome_name().
constexpr int kMaxOutcomes = 64;
}  // namespace

int ToOutcome(py::handle outcome) {
  if (PyLong_Check(outcome.ptr())) {
    long v = PyLong_AsLong(outcome.ptr());
    if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
    if (v < INT32_MIN || v > INT32_MAX) {
      throw Error{WT_ERR_INVALID_ARGUMENT, "outcome " + std::to_string(v) + " is out of range", {}, 0};
    }
    return static_cast<int>(v);  // the core checks the range and names a bad value
  }
  if (PyUnicode_Check(outcome.ptr())) {
    Py_ssize_t len = 0;
    const char* name = PyUnicode_AsUTF8AndSize(outcome.ptr(), &len);
    if (name == nullptr) throw py::error_already_set();
    const std::string_view wanted(name, static_cast<size_t>(len));
    // The loaded library's names, so an outcome newer than this binding is accepted too.
    std::string known;
    for (int i = 0; i < kMaxOutcomes; ++i) {
      const char* n = wt_outcome_name(i);
      if (n == nullptr) break;
      if (wanted == n) return i;
      if (!known.empty()) known += ", ";
      known += n;
    }
    throw Error{WT_ERR_INVALID_ARGUMENT,
                "outcome '" + std::string(wanted) + "' is not one of " + known, {}, 0};
  }
  throw py::type_error("outcome must be a weighted.Outcome, an int or its name, not " +
                       std::string(Py_TYPE(outcome.ptr())->tp_name));
}

const char* CString(const char* data, size_t len, const char* what) {
  const void* nul = std::memchr(data, '\0', len);
  if (nul != nullptr) [[unlikely]] {
    const size_t at = static_cast<const char*>(nul) - data;
    throw Error{WT_ERR_INVALID_ARGUMENT,
                std::string(what) + " contains a NUL byte at offset " + std::to_string(at), {}, 0};
  }
  return data;
}

const char* CString(const std::string& s, const char* what) {
  return CString(s.c_str(), s.size(), what);
}

uint64_t ToKey(py::handle key) {
  unsigned long long v = PyLong_AsUnsignedLongLong(key.ptr());
  if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    throw Error{WT_ERR_INVALID_ARGUMENT,
                "endpoint key must be an int in [0, 2**64), got " +
                    py::repr(key).cast<std::string>(), {}, 0};
  }
  return static_cast<uint64_t>(v);
}

namespace {

// The engine's pin hook: the pick holds the GIL, so the id object's count is exact.
void PinObject(void*, void* object) { Py_INCREF(static_cast<PyObject*>(object)); }

// New references to the id objects of one set_endpoints call, until the engine takes them.
struct OwnedIds {
  std::vector<PyObject*> objects;
  ~OwnedIds() {
    for (PyObject* o : objects) Py_DECREF(o);
  }
  void HandOver() { objects.clear(); }  // the engine releases them (QueueRelease) from now on
};

// `seq` as a tuple (itself if it is one); TypeError `what` for a str, bytes or a non-sequence.
py::tuple AsTuple(py::handle seq, const std::string& what) {
  PyObject* o = seq.ptr();
  if (PyTuple_Check(o)) return py::reinterpret_borrow<py::tuple>(o);
  if (PyUnicode_Check(o) || PyBytes_Check(o) || !PySequence_Check(o)) {
    throw py::type_error(what + ", not " + Py_TYPE(o)->tp_name);
  }
  PyObject* t = PySequence_Tuple(o);
  if (t == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::tuple>(t);
}

// The object a pick of this endpoint hands back, and its UTF-8 form for the spec. An exact str
// is kept as it came (no copy); a str subclass becomes a plain str, and bytes or bytearray are
// taken as UTF-8, so a pick's endpoint is always a str.
PyObject* IdObject(PyObject* id, size_t i, const char** utf8) {
  auto where = [i] { return "set_endpoints: endpoints[" + std::to_string(i) + "]: the id"; };
  PyObject* obj;
  if (PyUnicode_CheckExact(id)) {
    Py_INCREF(id);
    obj = id;
  } else if (PyUnicode_Check(id)) {
    obj = PyUnicode_FromObject(id);
  } else if (PyBytes_Check(id) || PyByteArray_Check(id)) {
    const bool is_bytes = PyBytes_Check(id);
    const char* data = is_bytes ? PyBytes_AS_STRING(id) : PyByteArray_AS_STRING(id);
    const Py_ssize_t n = is_bytes ? PyBytes_GET_SIZE(id) : PyByteArray_GET_SIZE(id);
    obj = PyUnicode_DecodeUTF8(data, n, "strict");
    if (obj == nullptr) {
      PyErr_Clear();
      throw Error{WT_ERR_INVALID_ARGUMENT, where() + " is not valid UTF-8", {}, 0};
    }
  } else {
    throw py::type_error(where() + " must be a str, not " + Py_TYPE(id)->tp_name);
  }
  if (obj == nullptr) throw py::error_already_set();
  Py_ssize_t len = 0;
  *utf8 = PyUnicode_AsUTF8AndSize(obj, &len);
  if (*utf8 == nullptr) {
    // A lone surrogate: no UTF-8 form, so no id the core could hold.
    py::error_already_set cause;
    Py_DECREF(obj);
    throw py::type_error(where() + " cannot be encoded as UTF-8 (" +
                         std::string(py::str(cause.value())) + ")");
  }
  try {
    CString(*utf8, static_cast<size_t>(len), "endpoint id");
  } catch (...) {
    Py_DECREF(obj);
    throw;
  }
  return obj;
}

class Service {
 public:
  Service(py::handle engine, const std::string& name) : st_(EngineStateOf(engine)) {
    wt_service* h = nullptr;
    Check(wt_engine_service(st_->Handle(), CString(name, "service name"), &h));
    auto& state = st_->services[h];
    if (!state) {
      state = std::make_shared<ServiceState>();
      state->handle = h;
      state->name = name;
    }
    svc_ = state;
  }

  const std::string& name() const { return svc_->name; }
  bool Closed() const { return svc_->handle == nullptr; }

  // endpoints: a sequence of (id, base_weight) pairs. Each spec's user pointer is a reference to
  // its id object, which the engine returns with every pick of that endpoint from this set.
  void SetEndpoints(py::handle endpoints) {
    Handle();
    // Tuples, read by index: the conversions below may run Python code (__float__), which
    // could resize a list being read.
    const py::tuple items = AsTuple(endpoints, "set_endpoints: endpoints must be a sequence of "
                                               "(id, base_weight) pairs");
    const size_t n = items.size();
    std::vector<wt_endpoint_spec> specs(n, wt_endpoint_spec WT_ENDPOINT_SPEC_INIT);
    OwnedIds ids;
    ids.objects.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      const std::string what = "set_endpoints: endpoints[" + std::to_string(i) + "]";
      const py::tuple pair = AsTuple(items[i], what + " must be an (id, base_weight) pair");
      if (pair.size() != 2) [[unlikely]] {
        throw py::type_error(what + " must be an (id, base_weight) pair, not " +
                             std::to_string(pair.size()) + " items");
      }
      const double weight = ToDouble(pair[1].ptr(), "set_endpoints: base_weight");
      ids.objects.push_back(IdObject(pair[0].ptr(), i, &specs[i].id));
      specs[i].base_weight = weight;
      specs[i].user = ids.objects.back();
    }
    wt_endpoints_options options = WT_ENDPOINTS_OPTIONS_INIT;
    options.release_user = &QueueRelease;
    // Without the GIL: the engine raises endpoint events on this thread, and a controller
    // thread delivering an event holds the callback lock while it waits for the GIL.
    CallWithoutGil(
        *st_,
        [&](wt_service* s) {
          return wt_service_set_endpoints(s, specs.data(), n, &options, nullptr, nullptr);
        },
        false, svc_.get());
    ids.HandOver();
  }

  // Takes the service out of the engine. Every Python object of it is closed from here on.
  void Remove() {
    wt_service* h = Handle();
    if (InOwnCallback(*st_)) {
      throw Error{WT_ERR_INVALID_ARGUMENT,
                  "remove() called from inside the engine's own event callback (service \"" +
                      svc_->name + "\"): remove it after the callback returns",
                  {}, 0};
    }
    // Marked first, with the GIL: no call on it starts from now on, and the exclusive lock
    // below waits for those running without the GIL.
    svc_->handle = nullptr;
    svc_->removed = true;
    st_->services.erase(h);
    try {
      CallWithoutGil(
          *st_,
          [&] {
            std::unique_lock<std::shared_mutex> lock(svc_->busy);
            return wt_service_remove(h);
          },
          false);
    } catch (...) {
      if (st_->handle != nullptr) {  // not removed after all: the handle is still good
        svc_->handle = h;
        svc_->removed = false;
        st_->services[h] = svc_;
      }
      throw;
    }
  }

  uint64_t EndpointKey(const std::string& id) {
    uint64_t key = 0;
    Check(wt_service_endpoint_key(Handle(), CString(id, "endpoint id"), &key));
    return key;
  }

  py::str EndpointId(uint64_t key) {
    char buf[257];  // an id is at most 256 bytes (weighted.h), plus the NUL
    size_t len = 0;
    Check(wt_service_endpoint_id(Handle(), key, buf, sizeof buf, &len));
    return py::str(buf, len);
  }

  py::object DoPick() {
    wt_service* s = Handle();
    wt_pick raw = WT_PICK_INIT;
    Check(wt_service_pick_pinned(s, &raw, &PinObject, nullptr));
    if (raw.user == nullptr) [[unlikely]] {
      throw Error{WT_ERR_INTERNAL, "pick: the engine returned no id object for endpoint key " +
                                       std::to_string(raw.key), {}, 0};
    }
    return NewPick(raw, py::reinterpret_steal<py::object>(static_cast<PyObject*>(raw.user)));
  }

  void Complete(py::handle pick, double latency_ms, int outcome) {
    wt_service* s = Handle();
    const wt_pick& raw = PickOf(pick);
    Check(wt_service_complete(s, &raw, latency_ms, outcome));
  }

  void Cancel(py::handle pick) {
    wt_service* s = Handle();
    Check(wt_service_cancel(s, &PickOf(pick)));
  }

  void Report(py::handle endpoint, double latency_ms, int o) {
    wt_service* s = Handle();
    if (PyUnicode_Check(endpoint.ptr())) {
      // The str's cached UTF-8 form, not a copy.
      Py_ssize_t len = 0;
      const char* id = PyUnicode_AsUTF8AndSize(endpoint.ptr(), &len);
      if (id == nullptr) throw py::error_already_set();
      Check(wt_service_report(s, CString(id, static_cast<size_t>(len), "endpoint id"), latency_ms,
                              o));
    } else if (PyLong_Check(endpoint.ptr())) {
      Check(wt_service_report_key(s, ToKey(endpoint), latency_ms, o));
    } else {
      throw py::type_error("endpoint must be an id (str) or a key (int)");
    }
  }

  void ReportResources(const std::string& id, std::optional<double> cpu,
                       std::optional<double> memory, std::optional<double> thread_pool,
                       std::optional<double> connection_pool) {
    wt_resources r = WT_RESOURCES_INIT;
    if (cpu) r.present |= WT_RES_CPU, r.cpu = *cpu;
    if (memory) r.present |= WT_RES_MEMORY, r.memory = *memory;
    if (thread_pool) r.present |= WT_RES_THREAD_POOL, r.thread_pool = *thread_pool;
    if (connection_pool) r.present |= WT_RES_CONNECTION_POOL, r.connection_pool = *connection_pool;
    Check(wt_service_report_resources(Handle(), CString(id, "endpoint id"), &r));
  }

  // endpoints: ids, keys or Picks; latencies: numbers; outcomes: one outcome for all entries or
  // one per entry. Ids are resolved before anything is recorded, so an unknown id leaves the
  // state unchanged. Returns how many entries were recorded.
  size_t ReportBatch(py::sequence endpoints, py::sequence latencies, py::object outcomes) {
    Handle();
    const size_t n = py::len(endpoints);
    if (py::len(latencies) != n) {
      throw Error{WT_ERR_INVALID_ARGUMENT,
                  "report_batch: " + std::to_string(n) + " endpoints but " +
                      std::to_string(py::len(latencies)) + " latencies", {}, 0};
    }
    const bool one_outcome = PyLong_Check(outcomes.ptr()) || PyUnicode_Check(outcomes.ptr());
    py::sequence outcome_seq;
    int single = 0;
    if (one_outcome) {
      single = ToOutcome(outcomes);
    } else {
      outcome_seq = outcomes.cast<py::sequence>();
      if (py::len(outcome_seq) != n) {
        throw Error{WT_ERR_INVALID_ARGUMENT,
                    "report_batch: " + std::to_string(n) + " endpoints but " +
                        std::to_string(py::len(outcome_seq)) + " outcomes", {}, 0};
      }
    }
    std::vector<wt_report> reports(n, wt_report WT_REPORT_INIT);
    for (size_t i = 0; i < n; ++i) {
      py::object e = endpoints[i];
      wt_report& r = reports[i];
      if (PyLong_Check(e.ptr())) {
        r.key = ToKey(e);
      } else if (PyUnicode_Check(e.ptr())) {
        uint64_t key = 0;
        const std::string id = e.cast<std::string>();
        // Handle() again: converting the entries may run Python code, and close() or remove().
        Check(wt_service_endpoint_key(Handle(), CString(id, "endpoint id"), &key));
        r.key = key;
      } else if (IsPick(e)) {
        r.key = PickOf(e).key;
      } else {
        throw py::type_error("report_batch: endpoints[" + std::to_string(i) +
                             "] must be an id (str), a key (int) or a Pick");
      }
      r.latency_ms = latencies[i].cast<double>();
      r.outcome = one_outcome ? single : ToOutcome(outcome_seq[i]);
      r.status = WT_OK;
    }
    size_t recorded = 0;
    try {
      CallWithoutGil(
          *st_,
          [&](wt_service* h) {
            return wt_service_report_batch(h, reports.data(), reports.size(), &recorded);
          },
          true, svc_.get());
    } catch (Error& e) {
      e.recorded = recorded;
      e.entry_statuses.reserve(n);
      for (const auto& r : reports) e.entry_statuses.push_back(r.status);
      throw;
    }
    return recorded;
  }

 private:
  wt_service* Handle() const { return svc_->Handle(); }

  std::shared_ptr<EngineState> st_;
  std::shared_ptr<ServiceState> svc_;
};

// The hot path as plain CPython methods (fastcall.h explains why): same names, parameters and
// defaults as the pybind11 definitions below, which they replace on the class.

PyObject* PickMethod(PyObject* self, PyObject*) {
  return Translated([&] { return Self<Service>(self).DoPick().release().ptr(); });
}

constexpr Signature kCancelSig = {"cancel", {"pick"}, 1, 1};
constexpr Signature kCompleteSig = {"complete", {"pick", "latency_ms", "outcome"}, 3, 2};
constexpr Signature kReportSig = {"report", {"endpoint", "latency_ms", "outcome"}, 3, 2};

// (first, latency_ms, outcome = success): complete and report.
template <void (Service::*kFn)(py::handle, double, int), const Signature& kSig>
PyObject* RecordMethod(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                       PyObject* kwnames) {
  return Translated([&]() -> PyObject* {
    PyObject* a[3];
    if (kwnames == nullptr && nargs >= 2 && nargs <= 3) [[likely]] {
      a[0] = args[0], a[1] = args[1], a[2] = nargs == 3 ? args[2] : nullptr;
    } else if (!BindArgs(kSig, args, nargs, kwnames, a)) {
      return nullptr;
    }
    Service& svc = Self<Service>(self);
    const double latency_ms = ToDouble(a[1], "latency_ms");
    const int outcome = a[2] != nullptr ? ToOutcome(a[2]) : WT_OUTCOME_SUCCESS;
    (svc.*kFn)(a[0], latency_ms, outcome);
    Py_RETURN_NONE;
  });
}

PyObject* CancelMethod(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                       PyObject* kwnames) {
  return Translated([&]() -> PyObject* {
    PyObject* pick;
    if (kwnames == nullptr && nargs == 1) [[likely]] {
      pick = args[0];
    } else if (!BindArgs(kCancelSig, args, nargs, kwnames, &pick)) {
      return nullptr;
    }
    Self<Service>(self).Cancel(pick);
    Py_RETURN_NONE;
  });
}

PyMethodDef kPickDef = {"pick", reinterpret_cast<PyCFunction>(&PickMethod), METH_NOARGS,
                        "pick($self, /)\n--\n\nChooses an endpoint (the hot path)."};
PyMethodDef kCompleteDef = {
    "complete",
    reinterpret_cast<PyCFunction>(
        reinterpret_cast<void (*)()>(&RecordMethod<&Service::Complete, kCompleteSig>)),
    METH_FASTCALL | METH_KEYWORDS,
    "complete($self, /, pick, latency_ms, outcome=0)\n--\n\n"
    "Finishes a pick with its latency (ms) and outcome."};
PyMethodDef kCancelDef = {
    "cancel", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&CancelMethod)),
    METH_FASTCALL | METH_KEYWORDS,
    "cancel($self, /, pick)\n--\n\n"
    "Finishes a pick without an outcome (the request was never sent)."};
PyMethodDef kReportDef = {
    "report",
    reinterpret_cast<PyCFunction>(
        reinterpret_cast<void (*)()>(&RecordMethod<&Service::Report, kReportSig>)),
    METH_FASTCALL | METH_KEYWORDS,
    "report($self, /, endpoint, latency_ms, outcome=0)\n--\n\n"
    "Records an outcome observed elsewhere (id or key)."};

}  // namespace

void RegisterService(py::module_& m) {
  RegisterPick(m);

  py::class_<Service>(m, "Service", py::dynamic_attr(),
                      "Low-level handle of one service; use weighted.Service.")
      .def(py::init<py::handle, const std::string&>(), py::arg("engine"), py::arg("name"))
      .def_property_readonly("name", &Service::name)
      .def_property_readonly("closed", &Service::Closed)
      .def("_set_endpoints", &Service::SetEndpoints, py::arg("endpoints"))
      .def("remove", &Service::Remove,
           "Takes the service out of its engine; later calls on it raise ClosedError.")
      .def("key", &Service::EndpointKey, py::arg("endpoint_id"),
           "The endpoint's key (an int), usable wherever an endpoint id is.")
      .def("endpoint_id", &Service::EndpointId, py::arg("key"))
      .def("report_resources", &Service::ReportResources, py::arg("endpoint"), py::kw_only(),
           py::arg("cpu") = py::none(), py::arg("memory") = py::none(),
           py::arg("thread_pool") = py::none(), py::arg("connection_pool") = py::none(),
           "Records resource levels (fractions in [0, 1]) for an endpoint.")
      .def("report_batch", &Service::ReportBatch, py::arg("endpoints"), py::arg("latencies_ms"),
           py::arg("outcomes") = 0,
           "Records many outcomes in one call (the GIL is released around it).");
  // The hot path: plain CPython methods (above), not pybind11 ones.
  py::handle cls = m.attr("Service");
  for (PyMethodDef* def : {&kPickDef, &kCompleteDef, &kCancelDef, &kReportDef}) AddMethod(cls, def);
}

}  // namespace wtpy
