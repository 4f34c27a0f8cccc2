#include "weighted_sim/scenario.h"

#include <map>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace weighted_sim {
namespace {

using nlohmann::json;

[[noreturn]] void Fail(const std::string& path, const std::string& why) {
  throw std::invalid_argument(fmt::format("scenario {}: {}", path, why));
}

// Reads an optional number, checking its range.
double Num(const json& j, const char* key, double def, const std::string& path,
           double lo = 0, double hi = 1e12) {
  if (!j.contains(key)) return def;
  const json& v = j.at(key);
  if (!v.is_number()) Fail(path + "." + key, "must be a number");
  const double x = v.get<double>();
  if (!(x >= lo && x <= hi)) Fail(path + "." + key, fmt::format("must be in [{}, {}]", lo, hi));
  return x;
}

void CheckKeys(const json& j, std::initializer_list<const char*> allowed, const std::string& path) {
  if (!j.is_object()) Fail(path, "must be an object");
  for (const auto& [k, v] : j.items()) {
    bool ok = false;
    for (const char* a : allowed) ok |= k == a;
    if (!ok) Fail(path + "." + k, "unknown key");
  }
}

const std::map<std::string, FaultType> kFaultTypes = {
    {"gc", FaultType::kGc},     {"leak", FaultType::kLeak}, {"cpu_hog", FaultType::kCpuHog},
    {"down", FaultType::kDown}, {"flap", FaultType::kFlap},
    {"slow_recovery", FaultType::kSlowRecovery},           {"fast_fail", FaultType::kFastFail},
    {"stall", FaultType::kStall}};

BackendSpec ParseBackend(const json& j, const BackendSpec& def, const std::string& path) {
  CheckKeys(j, {"id", "workers", "queue_limit", "weight", "capacity", "service", "error_rate",
                "base_memory", "reject_ms", "connect_error_ms"}, path);
  BackendSpec b = def;
  if (j.contains("id")) b.id = j.at("id").get<std::string>();
  b.workers = static_cast<int>(Num(j, "workers", def.workers, path, 1, 1e6));
  b.queue_limit = static_cast<int>(Num(j, "queue_limit", def.queue_limit, path, 0, 1e7));
  b.weight = Num(j, "weight", def.weight, path, 1e-9, 1e9);
  b.capacity = Num(j, "capacity", def.capacity, path, 1e-6, 1e6);
  b.error_rate = Num(j, "error_rate", def.error_rate, path, 0, 1);
  b.base_memory = Num(j, "base_memory", def.base_memory, path, 0, 1);
  b.reject_ms = Num(j, "reject_ms", def.reject_ms, path, 0, 1e6);
  b.connect_error_ms = Num(j, "connect_error_ms", def.connect_error_ms, path, 0, 1e6);
  if (j.contains("service")) {
    const json& s = j.at("service");
    const std::string sp = path + ".service";
    CheckKeys(s, {"dist", "mean_ms", "log_sigma"}, sp);
    if (s.contains("dist")) b.service.dist = s.at("dist").get<std::string>();
    if (b.service.dist != "lognormal" && b.service.dist != "exponential" &&
        b.service.dist != "constant")
      Fail(sp + ".dist", "must be lognormal, exponential or constant");
    b.service.mean_ms = Num(s, "mean_ms", def.service.mean_ms, sp, 1e-6, 1e7);
    b.service.log_sigma = Num(s, "log_sigma", def.service.log_sigma, sp, 0, 10);
  }
  return b;
}

FaultSpec ParseFault(const json& j, int backends, const std::string& path) {
  CheckKeys(j, {"type", "backend", "start_s", "end_s", "ramp_s", "recovery_s",
                "service_multiplier", "cpu_extra", "error_rate", "memory", "memory_ramp_s",
                "error_latency_ms", "period_s", "down_s", "note"}, path);
  FaultSpec f;
  if (!j.contains("type")) Fail(path + ".type", "is required");
  f.type_name = j.at("type").get<std::string>();
  const auto it = kFaultTypes.find(f.type_name);
  if (it == kFaultTypes.end()) Fail(path + ".type", "unknown fault type '" + f.type_name + "'");
  f.type = it->second;
  f.backend = static_cast<int>(Num(j, "backend", -1, path, 0, backends - 1));
  if (!j.contains("backend")) Fail(path + ".backend", "is required");
  f.start_s = Num(j, "start_s", 0, path);
  if (j.contains("end_s") && !j.at("end_s").is_null()) f.end_s = Num(j, "end_s", 0, path);
  if (f.end_s && *f.end_s < f.start_s) Fail(path + ".end_s", "is before start_s");
  f.ramp_s = Num(j, "ramp_s", 0, path);
  const bool slow = f.type == FaultType::kSlowRecovery;
  f.recovery_s = Num(j, "recovery_s", slow ? 30 : 0, path);
  const double mult = f.type == FaultType::kGc || slow ? 5 : f.type == FaultType::kCpuHog ? 1.5 : 1;
  f.service_multiplier = Num(j, "service_multiplier", mult, path, 1e-3, 1e6);
  const double cpu = f.type == FaultType::kGc || slow ? 0.3 : f.type == FaultType::kCpuHog ? 0.5 : 0;
  f.cpu_extra = Num(j, "cpu_extra", cpu, path, 0, 1);
  const double err = f.type == FaultType::kFastFail ? 1.0 : f.type == FaultType::kLeak ? 0.15 : 0;
  f.error_rate = Num(j, "error_rate", err, path, 0, 1);
  f.memory = Num(j, "memory", f.type == FaultType::kLeak ? 0.95 : -1, path, -1, 1);
  f.memory_ramp_s = Num(j, "memory_ramp_s", -1, path, -1);
  f.error_latency_ms = Num(j, "error_latency_ms", f.type == FaultType::kFastFail ? 1 : -1, path, -1);
  f.period_s = Num(j, "period_s", 10, path, 1e-3);
  f.down_s = Num(j, "down_s", 5, path);
  if (f.type == FaultType::kStall && !f.end_s) Fail(path + ".end_s", "is required for a stall");
  return f;
}

LoadSpec ParseLoad(const json& j, const std::string& path) {
  CheckKeys(j, {"type", "callers", "think_ms", "rate_per_s", "rate_profile", "timeout_ms"}, path);
  LoadSpec l;
  const std::string type = j.value("type", std::string("closed"));
  if (type == "open") l.kind = LoadSpec::Kind::kOpen;
  else if (type != "closed") Fail(path + ".type", "must be closed or open");
  l.callers = static_cast<int>(Num(j, "callers", l.callers, path, 1, 1e6));
  if (j.contains("think_ms")) {
    const json& t = j.at("think_ms");
    CheckKeys(t, {"dist", "mean"}, path + ".think_ms");
    if (t.value("dist", std::string("exponential")) != "exponential")
      Fail(path + ".think_ms.dist", "only exponential think time is modelled");
    l.think_mean_ms = Num(t, "mean", l.think_mean_ms, path + ".think_ms", 1e-6, 1e7);
  }
  l.rate_per_s = Num(j, "rate_per_s", l.rate_per_s, path, 0, 1e8);
  if (j.contains("rate_profile")) {
    for (const json& p : j.at("rate_profile")) {
      if (!p.is_array() || p.size() != 2) Fail(path + ".rate_profile", "points are [t_s, factor]");
      l.rate_profile.emplace_back(p[0].get<double>(), p[1].get<double>());
    }
  }
  l.timeout_ms = Num(j, "timeout_ms", l.timeout_ms, path, 1e-3, 1e8);
  return l;
}

}  // namespace

void AddEngineConfigs(std::string_view json_object, Scenario* scenario) {
  const json j = json::parse(json_object);
  if (!j.is_object()) Fail("engine_configs", "must be an object {name: config}");
  for (const auto& [name, config] : j.items()) {
    if (name.rfind("engine_", 0) != 0) Fail("engine_configs." + name, "names start with engine_");
    if (!config.is_object()) Fail("engine_configs." + name, "must be a config object");
    scenario->engine_configs.emplace_back(name, config.dump());
  }
}

Scenario ParseScenario(std::string_view text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw std::invalid_argument(fmt::format("scenario is not JSON: {}", e.what()));
  }
  CheckKeys(j, {"name", "description", "duration_s", "seed", "report_interval_s",
                "backend_defaults", "backends", "faults", "load", "clients", "policies",
                "engine_configs"},
            "$");
  Scenario s;
  try {
    s.name = j.value("name", std::string("scenario"));
    s.description = j.value("description", std::string());
    s.duration_s = Num(j, "duration_s", 120, "$", 1, 86400);
    s.seed = j.value("seed", uint64_t{1});
    s.report_interval_s = Num(j, "report_interval_s", 1, "$", 0.01, 3600);
    BackendSpec def;
    if (j.contains("backend_defaults")) def = ParseBackend(j.at("backend_defaults"), def, "$.backend_defaults");
    if (!j.contains("backends") || !j.at("backends").is_array() || j.at("backends").empty())
      Fail("$.backends", "must be a non-empty array");
    for (size_t i = 0; i < j.at("backends").size(); ++i) {
      BackendSpec b = ParseBackend(j.at("backends")[i], def, fmt::format("$.backends[{}]", i));
      if (b.id.empty()) b.id = fmt::format("b{}", i);
      s.backends.push_back(b);
    }
    if (j.contains("faults")) {
      for (size_t i = 0; i < j.at("faults").size(); ++i)
        s.faults.push_back(ParseFault(j.at("faults")[i], static_cast<int>(s.backends.size()),
                                      fmt::format("$.faults[{}]", i)));
    }
    if (j.contains("load")) s.load = ParseLoad(j.at("load"), "$.load");
    if (j.contains("clients")) {
      const json& c = j.at("clients");
      CheckKeys(c, {"count", "config"}, "$.clients");
      s.clients.count = static_cast<int>(Num(c, "count", 1, "$.clients", 1, 1e6));
      if (c.contains("config")) {
        if (!c.at("config").is_object()) Fail("$.clients.config", "must be a config object");
        s.clients.config = c.at("config").dump();
      }
      if (s.load.kind == LoadSpec::Kind::kClosed && s.load.callers < s.clients.count)
        Fail("$.load.callers", fmt::format("{} closed-loop callers cannot be spread over {} "
                                           "clients: every client needs at least one",
                                           s.load.callers, s.clients.count));
    }
    if (j.contains("policies")) s.policies = j.at("policies").get<std::vector<std::string>>();
    if (j.contains("engine_configs")) AddEngineConfigs(j.at("engine_configs").dump(), &s);
  } catch (const json::exception& e) {
    throw std::invalid_argument(fmt::format("scenario: {}", e.what()));
  }
  return s;
}

}  // namespace weighted_sim
