// weighted._sim: the simulator (sim/, weighted_sim) from Python. The simulator drives this
// engine through the same C API; this module only forwards scenario and options JSON and
// returns the results JSON with the Markdown table `weighted-sim` prints.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "weighted_sim/policy.h"
#include "weighted_sim/sim.h"

namespace py = pybind11;

namespace {

// The options RunScenarioJson documents: {"policies": [...], "seed": N, "series": bool,
// "engine_configs": {"engine_x": {config}, ...}}.
weighted_sim::RunOptions ParseOptions(const std::string& text, bool* series,
                                      std::string* engine_configs) {
  weighted_sim::RunOptions options;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.empty() ? std::string("{}") : text);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("options: ") + e.what());
  }
  if (!j.is_object()) throw std::invalid_argument("options: must be a JSON object");
  for (const auto& [key, value] : j.items()) {
    if (key == "policies") {
      if (!value.is_array()) throw std::invalid_argument("options.policies: must be an array");
      for (const auto& p : value) {
        if (!p.is_string()) throw std::invalid_argument("options.policies: names are strings");
        options.policies.push_back(p.get<std::string>());
      }
    } else if (key == "seed") {
      if (!value.is_number_unsigned()) {
        throw std::invalid_argument("options.seed: must be a non-negative integer");
      }
      options.seed = value.get<uint64_t>();
    } else if (key == "series") {
      if (!value.is_boolean()) throw std::invalid_argument("options.series: must be a boolean");
      *series = value.get<bool>();
      options.series = *series;
    } else if (key == "engine_configs") {
      *engine_configs = value.dump();  // AddEngineConfigs validates it
    } else {
      throw std::invalid_argument("options." + key + ": unknown key");
    }
  }
  return options;
}

py::tuple Run(const std::string& scenario_json, const std::string& options_json) {
  bool series = true;
  std::string engine_configs;
  weighted_sim::RunOptions options = ParseOptions(options_json, &series, &engine_configs);
  std::string json, table;
  {
    py::gil_scoped_release nogil;  // a run takes seconds of CPU; let other threads go on
    weighted_sim::Scenario scenario = weighted_sim::ParseScenario(scenario_json);
    if (!engine_configs.empty()) weighted_sim::AddEngineConfigs(engine_configs, &scenario);
    const weighted_sim::Results results = weighted_sim::RunScenario(scenario, options);
    json = weighted_sim::ResultsToJson(results, series);
    table = weighted_sim::MarkdownTable(results);
  }
  return py::make_tuple(json, table);
}

}  // namespace

PYBIND11_MODULE(_sim, m) {
  m.doc() = "weighted._sim: the deterministic simulator. Use weighted.sim.";
  m.def("run", &Run, py::arg("scenario_json"), py::arg("options_json") = "{}",
        "Runs a scenario; returns (results JSON, Markdown table). Raises ValueError on bad input.");
  m.def("run_scenario_json", &weighted_sim::RunScenarioJson, py::arg("scenario_json"),
        py::arg("options_json") = "{}", py::call_guard<py::gil_scoped_release>(),
        "The simulator's own entry point: results JSON only.");
  m.def("policy_names", &weighted_sim::PolicyNames);
  m.def("policy_description",
        [](const std::string& name) { return std::string(weighted_sim::PolicyDescription(name)); },
        py::arg("name"));
}
