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
  try {
    // A lone surrogate has no UTF-8 form, so no id the core could hold.
    const std::string arg = "endpoints[" + std::to_string(i) + "]: the id";
    const Text t = TextArg(obj, "set_endpoints", arg.c_str());
    *utf8 = CString(t.data, t.size, "endpoint id");
  } catch (...) {
    Py_DECREF(obj);
    throw;
  }
  return obj;
}

// A base weight from a Python value, for the endpoint `id` at endpoints[i]: a number as
// latency_ms takes it (ToDouble); the core checks its range. A str is refused as a value,
// as float() would refuse "heavy", so that "100" from a file is not quietly parsed here.
double ToWeight(PyObject* value, size_t i, const char* id) {
  const std::string what = "set_endpoints: endpoints[" + std::to_string(i) + "] (" + Quoted(id) +
                           "): base_weight";
  if (PyUnicode_Check(value)) [[unlikely]] {
    throw Error{WT_ERR_INVALID_ARGUMENT,
                what + " must be a number (int or float), not the str " +
                    ShortRepr(py::handle(value)), {}, 0};
  }
  try {
    return ToDouble(value, what.c_str());
  } catch (py::type_error&) {
    throw py::type_error(what + " must be a number (int or float), not " + Py_TYPE(value)->tp_name);
  }
}

class Service {
 public:
  Service(py::handle engine, py::handle name_obj) : st_(EngineStateOf(engine)) {
    const Text t = TextArg(name_obj, "Service", "name");
    const std::string name(t.data, t.size);
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
      ids.objects.push_back(IdObject(pair[0].ptr(), i, &specs[i].id));
      specs[i].user = ids.objects.back();
      specs[i].base_weight = ToWeight(pair[1].ptr(), i, specs[i].id);
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
                  "remove() called from inside the engine's own event callback (service " +
                      Quoted(svc_->name) + "): remove it after the callback returns",
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

  uint64_t EndpointKey(py::handle id) {
    wt_service* s = Handle();
    const Text t = TextArg(id, "key", "endpoint_id");
    uint64_t key = 0;
    Check(wt_service_endpoint_key(s, CString(t.data, t.size, "endpoint id"), &key));
    return key;
  }

  py::str EndpointId(py::handle key) {
    wt_service* s = Handle();
    if (!PyLong_Check(key.ptr())) {
      throw py::type_error(std::string("endpoint_id: key must be an int, not ") +
                           Py_TYPE(key.ptr())->tp_name);
    }
    char buf[257];  // an id is at most 256 bytes (weighted.h), plus the NUL
    size_t len = 0;
    Check(wt_service_endpoint_id(s, ToKey(key), buf, sizeof buf, &len));
    return py::str(buf, len);
  }

  // The snapshot JSON of this service, or of one endpoint of it (None: every endpoint).
  py::str SnapshotJson(py::handle endpoint) {
    wt_service* s = Handle();
    std::string id;
    if (!endpoint.is_none()) {
      const Text t = TextArg(endpoint, "snapshot", "endpoint");
      id.assign(t.data, t.size);
    }
    char* text = nullptr;
    size_t len = 0;
    const char* want = endpoint.is_none() ? nullptr : CString(id, "endpoint id");
    CallWithoutGil(*st_, [&] { return wt_service_snapshot_json(s, want, &text, &len); });
    std::unique_ptr<char, void (*)(void*)> owned(text, &wt_free);
    return py::str(text, len);
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

  // A pick is finished once: by a call that succeeded, or that found its endpoint gone (the core
  // counted it stale and holds nothing of it any more). A refused call leaves it open.
  void Complete(py::handle pick, double latency_ms, int outcome) {
    wt_service* s = Handle();
    PickObject& p = OpenPick(pick, "complete");
    const wt_status status = wt_service_complete(s, &p.raw, latency_ms, outcome);
    if (status == WT_OK || status == WT_ERR_STALE) p.finished = Finished::kCompleted;
    Check(status);
  }

  void Cancel(py::handle pick) {
    wt_service* s = Handle();
    PickObject& p = OpenPick(pick, "cancel");
    const wt_status status = wt_service_cancel(s, &p.raw);
    if (status == WT_OK || status == WT_ERR_STALE) p.finished = Finished::kCancelled;
    Check(status);
  }

  void Report(py::handle endpoint, double latency_ms, int o) {
    wt_service* s = Handle();
    if (PyUnicode_Check(endpoint.ptr())) {
      // The str's cached UTF-8 form, not a copy. A lone surrogate raises Python's own
      // UnicodeEncodeError, which names the character and its position.
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

  // A response's load report (the endpoint-load-metrics header's value, str or bytes; None or
  // "" for none) recorded with its pick's outcome. A malformed report raises
  // BadLoadReportError after the outcome was recorded and the pick finished (weighted.h).
  void CompleteWithLoad(py::handle pick, double latency_ms, py::handle outcome_obj,
                        py::handle header) {
    wt_service* s = Handle();
    const int outcome = ToOutcome(outcome_obj);
    Text t{nullptr, 0};
    if (!header.is_none()) t = TextArg(header, "complete_with_load", "load_report");
    PickObject& p = OpenPick(pick, "complete_with_load");
    const wt_status status =
        wt_service_complete_with_load(s, &p.raw, latency_ms, outcome, t.data, t.size);
    if (status == WT_OK || status == WT_ERR_STALE || status == WT_ERR_BAD_LOAD_REPORT) {
      p.finished = Finished::kCompleted;
    }
    Check(status);
  }

  // A load report for an endpoint given by id or key (a response seen elsewhere).
  void ReportLoad(py::handle endpoint, py::handle header) {
    wt_service* s = Handle();
    uint64_t key = 0;
    if (PyLong_Check(endpoint.ptr())) {
      key = ToKey(endpoint);
    } else {
      const Text id = TextArg(endpoint, "report_load", "endpoint");
      Check(wt_service_endpoint_key(s, CString(id.data, id.size, "endpoint id"), &key));
    }
    const Text t = TextArg(header, "report_load", "load_report");
    Check(wt_service_report_load_key(s, key, t.data, t.size));
  }

  void ReportResources(py::handle id, py::handle cpu, py::handle memory, py::handle thread_pool,
                       py::handle connection_pool) {
    wt_service* s = Handle();
    const Text t = TextArg(id, "report_resources", "endpoint");
    wt_resources r = WT_RESOURCES_INIT;
    const struct {
      py::handle value;
      uint32_t bit;
      double* field;
      const char* what;
    } levels[] = {
        {cpu, WT_RES_CPU, &r.cpu, "report_resources: cpu"},
        {memory, WT_RES_MEMORY, &r.memory, "report_resources: memory"},
        {thread_pool, WT_RES_THREAD_POOL, &r.thread_pool, "report_resources: thread_pool"},
        {connection_pool, WT_RES_CONNECTION_POOL, &r.connection_pool,
         "report_resources: connection_pool"},
    };
    for (const auto& level : levels) {
      if (level.value.is_none()) continue;
      *level.field = ToDouble(level.value.ptr(), level.what);
      r.present |= level.bit;
    }
    Check(wt_service_report_resources(s, CString(t.data, t.size, "endpoint id"), &r));
  }

  // endpoints: ids, keys or Picks; latencies: numbers; outcomes: one outcome for all entries or
  // one per entry. As in the C call, every valid entry is recorded even when others fail, and
  // each entry gets its own status: an entry whose id is unknown (or whose key or outcome the
  // binding refuses) is left out of the C batch with that status, the rest go in. A value of the
  // wrong Python type is a TypeError before anything is recorded. Returns how many entries were
  // recorded; on a failure the first failing entry's error carries every entry's status.
  size_t ReportBatch(py::handle endpoints_obj, py::handle latencies_obj, py::handle outcomes) {
    Handle();
    const py::tuple endpoints =
        AsTuple(endpoints_obj, "report_batch: endpoints must be a sequence of ids, keys or Picks");
    const py::tuple latencies =
        AsTuple(latencies_obj, "report_batch: latencies_ms must be a sequence of numbers");
    const size_t n = endpoints.size();
    if (latencies.size() != n) {
      throw Error{WT_ERR_INVALID_ARGUMENT,
                  "report_batch: " + std::to_string(n) + " endpoints but " +
                      std::to_string(latencies.size()) + " latencies", {}, 0};
    }
    const bool one_outcome = PyLong_Check(outcomes.ptr()) || PyUnicode_Check(outcomes.ptr());
    py::tuple outcome_seq;
    if (!one_outcome) {
      outcome_seq = AsTuple(outcomes, "report_batch: outcomes must be an outcome or a sequence "
                                      "of outcomes");
      if (outcome_seq.size() != n) {
        throw Error{WT_ERR_INVALID_ARGUMENT,
                    "report_batch: " + std::to_string(n) + " endpoints but " +
                        std::to_string(outcome_seq.size()) + " outcomes", {}, 0};
      }
    }
    // Refused once for the whole call if it is the one outcome for all, as the core would.
    const int single = one_outcome ? ToOutcome(outcomes) : 0;

    std::vector<wt_report> reports;
    reports.reserve(n);
    std::vector<size_t> entry_of;  // reports[j] is entry entry_of[j]
    entry_of.reserve(n);
    std::vector<int> statuses(n, WT_OK);
    std::optional<Error> first_refused;  // the first entry refused here, before the C call
    size_t first_refused_at = n;
    for (size_t i = 0; i < n; ++i) {
      PyObject* e = endpoints[i].ptr();
      // Entry names are built only when needed: two strings per entry were most of a batch's
      // cost per entry (a float latency and a key need neither).
      auto where = [i] { return "report_batch: endpoints[" + std::to_string(i) + "]"; };
      wt_report r = WT_REPORT_INIT;
      PyObject* latency = latencies[i].ptr();
      r.latency_ms = PyFloat_CheckExact(latency)
                         ? PyFloat_AS_DOUBLE(latency)
                         : ToDouble(latency, ("report_batch: latencies_ms[" + std::to_string(i) +
                                              "]").c_str());
      try {
        if (PyLong_Check(e)) {
          r.key = ToKey(e);
        } else if (PyUnicode_Check(e)) {
          const std::string name = where();
          const Text id = TextArg(e, "report_batch", name.c_str() + sizeof "report_batch: " - 1);
          // Handle() again: converting the entries may run Python code, and close() or remove().
          Check(wt_service_endpoint_key(Handle(), CString(id.data, id.size, "endpoint id"),
                                        &r.key));
        } else if (IsPick(e)) {
          r.key = PickOf(e).key;
        } else {
          throw py::type_error(where() + " must be an id (str), a key (int) or a Pick, not " +
                               Py_TYPE(e)->tp_name);
        }
        r.outcome = one_outcome ? single : ToOutcome(outcome_seq[i]);
      } catch (Error& refused) {
        if (refused.status == kStatusClosed) throw;
        statuses[i] = refused.status;
        if (!first_refused) {
          first_refused =
              Error{refused.status, "entry " + std::to_string(i) + ": " + refused.message, {}, 0};
          first_refused_at = i;
        }
        continue;
      }
      reports.push_back(r);
      entry_of.push_back(i);
    }
    size_t recorded = 0;
    std::optional<Error> failed;  // the C call's, naming its first failing entry
    try {
      CallWithoutGil(
          *st_,
          [&](wt_service* h) {
            return wt_service_report_batch(h, reports.data(), reports.size(), &recorded);
          },
          true, svc_.get());
    } catch (Error& e) {
      if (e.status == kStatusClosed) throw;
      failed = std::move(e);
    }
    size_t first_failed_at = n;
    for (size_t j = 0; j < reports.size(); ++j) {
      statuses[entry_of[j]] = reports[j].status;
      if (reports[j].status != WT_OK && first_failed_at == n) first_failed_at = entry_of[j];
    }
    if (!failed && !first_refused) return recorded;
    // The C call numbers its entries among those it was given. Its first failing entry comes
    // before every entry refused here, or it is not the first failure: so its number is also the
    // entry's own, and its message stands as it is.
    const bool c_first = failed && (!first_refused || first_failed_at < first_refused_at);
    Error error = c_first ? std::move(*failed) : std::move(*first_refused);
    error.recorded = recorded;
    error.entry_statuses = std::move(statuses);
    throw error;
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
    "Finishes a pick with its latency (ms) and outcome; a pick is finished once."};
PyMethodDef kCancelDef = {
    "cancel", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&CancelMethod)),
    METH_FASTCALL | METH_KEYWORDS,
    "cancel($self, /, pick)\n--\n\n"
    "Finishes a pick without an outcome (the request was never sent), once."};
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
      .def(py::init<py::handle, py::handle>(), py::arg("engine"), py::arg("name"))
      .def_property_readonly("name", Method(&Service::name))
      .def_property_readonly("closed", Method(&Service::Closed))
      .def("_set_endpoints", Method(&Service::SetEndpoints), py::arg("endpoints"))
      .def("remove", Method(&Service::Remove),
           "Takes the service out of its engine; later calls on it raise ClosedError.")
      .def("key", Method(&Service::EndpointKey), py::arg("endpoint_id"),
           "The endpoint's key (an int), usable wherever an endpoint id is.")
      .def("endpoint_id", Method(&Service::EndpointId), py::arg("key"))
      .def("_snapshot_json", Method(&Service::SnapshotJson), py::arg("endpoint") = py::none())
      .def("report_resources", Method(&Service::ReportResources), py::arg("endpoint"), py::kw_only(),
           py::arg("cpu") = py::none(), py::arg("memory") = py::none(),
           py::arg("thread_pool") = py::none(), py::arg("connection_pool") = py::none(),
           "Records resource levels (fractions in [0, 1]) for an endpoint.")
      .def("complete_with_load", Method(&Service::CompleteWithLoad), py::arg("pick"),
           py::arg("latency_ms"), py::arg("outcome") = 0, py::arg("load_report") = py::none(),
           "complete() and the response's load report (the endpoint-load-metrics header's "
           "value) for the same endpoint, in one call.")
      .def("report_load", Method(&Service::ReportLoad), py::arg("endpoint"), py::arg("load_report"),
           "Records a server's load report (the endpoint-load-metrics header's value) for an "
           "endpoint given by id or key.")
      .def("report_batch", Method(&Service::ReportBatch), py::arg("endpoints"), py::arg("latencies_ms"),
           py::arg("outcomes") = 0,
           "Records many outcomes in one call (the GIL is released around it): every valid "
           "entry, even when others fail; the first failure is raised with each entry's status.");
  // The hot path: plain CPython methods (above), not pybind11 ones.
  py::handle cls = m.attr("Service");
  for (PyMethodDef* def : {&kPickDef, &kCompleteDef, &kCancelDef, &kReportDef}) AddMethod(cls, def);
}

}  // namespace wtpy
