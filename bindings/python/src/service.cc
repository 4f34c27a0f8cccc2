// weighted._weighted.Service and Pick: the hot path. pick, complete and report keep the GIL (a
// ~100 ns C call is cheaper than releasing it); report_batch releases it around the C call.
#include <cmath>
#include <cstring>
#include <optional>
#include <string_view>

#include "binding.h"
#include "fastcall.h"
#include "pick.h"

namespace wtpy {

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
    static constexpr std::string_view kNames[WT_OUTCOME_COUNT] = {
        "success", "http_5xx", "timeout", "connect_error", "business_error"};
    std::string name = outcome.cast<std::string>();
    for (int i = 0; i < WT_OUTCOME_COUNT; ++i) {
      if (kNames[i] == name) return i;
    }
    throw Error{WT_ERR_INVALID_ARGUMENT,
                "outcome '" + name +
                    "' is not one of success, http_5xx, timeout, connect_error, business_error",
                {}, 0};
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

class Service {
 public:
  Service(py::handle engine, const std::string& name) : st_(EngineStateOf(engine)) {
    Check(wt_engine_service(st_->Handle(), CString(name, "service name"), &svc_));
    auto& cache = st_->id_caches[svc_];
    if (!cache) cache = std::make_shared<IdCache>();
    ids_ = cache;
    name_ = name;
  }

  const std::string& name() const { return name_; }
  bool Closed() const { return st_->handle == nullptr; }

  void SetEndpoints(const std::vector<std::pair<std::string, double>>& endpoints) {
    wt_service* s = Handle();
    std::vector<wt_endpoint_spec> specs;
    specs.reserve(endpoints.size());
    for (const auto& [id, weight] : endpoints) specs.push_back({CString(id, "endpoint id"), weight});
    uint64_t epoch = 0;
    Check(wt_service_set_endpoints_epoch(s, specs.data(), specs.size(), &epoch));
    std::vector<py::object> ids;
    ids.reserve(endpoints.size());
    for (const auto& e : endpoints) ids.push_back(py::str(e.first));
    ids_->ids = std::move(ids);
    ids_->epoch = epoch;  // the engine's, exact even when another writer set endpoints meanwhile
  }

  uint64_t EndpointKey(const std::string& id) {
    uint64_t key = 0;
    Check(wt_service_endpoint_key(Handle(), CString(id, "endpoint id"), &key));
    return key;
  }

  py::str EndpointId(uint64_t key) {
    wt_service* s = Handle();
    char buf[272];
    size_t len = 0;
    wt_status status = wt_service_endpoint_id(s, key, buf, sizeof buf, &len);
    if (status == WT_ERR_INVALID_ARGUMENT && len >= sizeof buf) {
      std::string big(len + 1, '\0');
      Check(wt_service_endpoint_id(s, key, big.data(), big.size(), &len));
      return py::str(big.data(), len);
    }
    Check(status);
    return py::str(buf, len);
  }

  py::object DoPick() {
    wt_service* s = Handle();
    wt_pick raw;
    Check(wt_service_pick(s, &raw));
    if (raw.epoch == ids_->epoch && raw.index < ids_->ids.size()) {
      return NewPick(raw, ids_->ids[raw.index]);
    }
    return NewPick(raw, EndpointId(raw.key));  // a set this module did not see: ask the engine
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
    wt_resources r{};
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
    wt_service* s = Handle();
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
    std::vector<wt_report> reports(n);
    for (size_t i = 0; i < n; ++i) {
      py::object e = endpoints[i];
      wt_report& r = reports[i];
      if (PyLong_Check(e.ptr())) {
        r.key = ToKey(e);
      } else if (PyUnicode_Check(e.ptr())) {
        uint64_t key = 0;
        const std::string id = e.cast<std::string>();
        Check(wt_service_endpoint_key(s, CString(id, "endpoint id"), &key));
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
      CallWithoutGil(*st_, [&] {
        return wt_service_report_batch(s, reports.data(), reports.size(), &recorded);
      });
    } catch (Error& e) {
      e.recorded = recorded;
      e.entry_statuses.reserve(n);
      for (const auto& r : reports) e.entry_statuses.push_back(r.status);
      throw;
    }
    return recorded;
  }

 private:
  wt_service* Handle() const {
    st_->Handle();
    return svc_;
  }

  std::shared_ptr<EngineState> st_;
  std::shared_ptr<IdCache> ids_;
  wt_service* svc_ = nullptr;
  std::string name_;
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
