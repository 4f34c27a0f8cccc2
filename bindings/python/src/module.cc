// PYBIND11_MODULE(_weighted): versions, config validation, and the registration of the types.
#include <memory>

#include "binding.h"

namespace wtpy {
namespace {

py::str ResolveConfig(const std::string& json) {
  char* out = nullptr;
  Check(wt_config_resolve(json.data(), json.size(), &out));
  std::unique_ptr<char, void (*)(void*)> owned(out, &wt_free);
  return py::str(out);
}

}  // namespace
}  // namespace wtpy

PYBIND11_MODULE(_weighted, m) {
  using namespace wtpy;
  m.doc() = "weighted._weighted: the pybind11 binding of libweighted's C API. Use `weighted`.";
  m.attr("BUILT_VERSION") = static_cast<uint32_t>(WT_VERSION_NUMBER);
  m.def("version_number", &wt_version_number, "wt_version_number() of the loaded library.");
  m.def("version_string", &wt_version_string, "wt_version_string() of the loaded library.");
  m.def("outcome_from_http_status", &wt_outcome_from_http_status, py::arg("http_status"));
  // The spellings live in the core (snapshots and Prometheus use them too); the package's enums
  // and name tables are built from these. None for a value that is none.
  m.def("outcome_name", &wt_outcome_name, py::arg("outcome"),
        "The core's name of a wt_outcome, e.g. 'http_5xx'; None for another value.");
  m.def("event_type_name", &wt_event_type_name, py::arg("type"),
        "The core's name of a wt_event_type, e.g. 'weight_changed'; None for another value.");
  m.def(
      "validate_config",
      [](const std::string& json) { Check(wt_config_validate(json.data(), json.size())); },
      py::arg("json"), "Raises ConfigError (or LimitError) with the core's message.");
  m.def("resolve_config", &ResolveConfig, py::arg("json"),
        "The fully resolved config (defaults filled in) as JSON text.");
  m.attr("CLOCK_REAL") = static_cast<int>(WT_CLOCK_REAL);
  m.attr("CLOCK_MANUAL") = static_cast<int>(WT_CLOCK_MANUAL);
  RegisterErrors(m);
  RegisterEngine(m);
  RegisterService(m);
  RegisterMonitor(m);
}
