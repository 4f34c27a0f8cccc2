// Policy names, in the order the results table lists them, and their factories.
#include <stdexcept>
#include <string>

#include "factories.h"

namespace weighted_sim {
namespace {

struct Entry {
  const char* name;
  const char* description;
  std::unique_ptr<Policy> (*make)(const PolicyEnv&);
};

const Entry kEntries[] = {
    {"round_robin", "round-robin from a random start (Spring Cloud LoadBalancer default)",
     MakeRoundRobin},
    {"fixed_weights", "static discovery weights, interleaved round-robin (Spring weighted supplier)",
     MakeFixedWeights},
    {"random", "uniform random (Spring RandomLoadBalancer)", MakeRandom},
    {"least_request", "Envoy LEAST_REQUEST: P2C on active requests", MakeLeastRequest},
    {"peak_ewma", "Finagle/Linkerd P2C over peak-EWMA cost x (pending + 1), decay 10 s",
     MakePeakEwma},
    {"grpc_wrr", "gRPC weighted_round_robin: qps / (cpu + eps/qps), blackout 10 s, update 1 s",
     MakeGrpcWrr},
    {"envoy_outlier", "Envoy round-robin + outlier detection, stock defaults (10% cap)",
     [](const PolicyEnv& e) { return MakeEnvoyOutlier(e, false); }},
    {"envoy_outlier_eject_one", "the same with always_eject_one_host",
     [](const PolicyEnv& e) { return MakeEnvoyOutlier(e, true); }},
#ifdef WEIGHTED_SIM_HAVE_ENGINE
    {"engine_default", "this engine, default profile",
     [](const PolicyEnv& e) { return MakeEngine(e, "{}"); }},
    {"engine_article", "this engine, article profile (literal S-S1/S-P1 rules)",
     [](const PolicyEnv& e) { return MakeEngine(e, R"({"profile":"article"})"); }},
    {"engine_weighted", "this engine, default profile with picker.mode weighted (exact draws)",
     [](const PolicyEnv& e) { return MakeEngine(e, R"({"picker":{"mode":"weighted"}})"); }},
#endif
    {"oracle", "reference limit: knows true service and error rates (not a competitor)",
     MakeOracle},
};

const Entry* Find(std::string_view name) {
  for (const Entry& e : kEntries)
    if (name == e.name) return &e;
  return nullptr;
}

}  // namespace

const std::vector<std::string>& PolicyNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Entry& e : kEntries) v.emplace_back(e.name);
    return v;
  }();
  return names;
}

std::string_view PolicyDescription(std::string_view name) {
  const Entry* e = Find(name);
  return e ? e->description : "";
}

std::unique_ptr<Policy> MakePolicy(std::string_view name, const PolicyEnv& env) {
  const Entry* e = Find(name);
#ifdef WEIGHTED_SIM_HAVE_ENGINE
  if (e == nullptr && env.engine_configs != nullptr) {
    for (const auto& [variant, config] : *env.engine_configs)
      if (variant == name) return MakeEngine(env, config.c_str());
  }
#endif
  if (e == nullptr) {
    std::string known;
    for (const auto& n : PolicyNames()) known += (known.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown policy '" + std::string(name) + "' (known: " + known + ")");
  }
  return e->make(env);
}

}  // namespace weighted_sim
