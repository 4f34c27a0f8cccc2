// One factory per policy file; the registry (registry.cc) maps names to them.
#pragma once

#include <memory>

#include "weighted_sim/policy.h"

namespace weighted_sim {

std::unique_ptr<Policy> MakeRoundRobin(const PolicyEnv& env);
std::unique_ptr<Policy> MakeFixedWeights(const PolicyEnv& env);
std::unique_ptr<Policy> MakeRandom(const PolicyEnv& env);
std::unique_ptr<Policy> MakeLeastRequest(const PolicyEnv& env);
std::unique_ptr<Policy> MakePeakEwma(const PolicyEnv& env);
std::unique_ptr<Policy> MakeGrpcWrr(const PolicyEnv& env);
std::unique_ptr<Policy> MakeEnvoyOutlier(const PolicyEnv& env, bool always_eject_one_host);
std::unique_ptr<Policy> MakeOracle(const PolicyEnv& env);
// The engine through its C API, with `config_json` merged over {"seed": env.seed}.
std::unique_ptr<Policy> MakeEngine(const PolicyEnv& env, const char* config_json);

}  // namespace weighted_sim
