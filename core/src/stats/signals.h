// The signals an endpoint is judged on, and their one spelling: outcome classes (the C API's
// wt_outcome) and resource gauges (wt_resources' fields). Snapshots, Prometheus labels, events
// and the bindings all read these names from here.
#pragma once

#include "weighted/weighted.h"

namespace weighted {

inline constexpr int kOutcomes = WT_OUTCOME_COUNT;
inline constexpr int kResources = 4;  // cpu, memory, thread pool, connection pool

// "success", "http_5xx", "timeout", "connect_error", "business_error"; nullptr out of range.
inline const char* OutcomeName(int outcome) {
  static constexpr const char* kNames[kOutcomes] = {"success", "http_5xx", "timeout",
                                                    "connect_error", "business_error"};
  return outcome >= 0 && outcome < kOutcomes ? kNames[outcome] : nullptr;
}

// "cpu", "memory", "thread_pool", "connection_pool" (the WT_RES_* bit order); nullptr out of range.
inline const char* ResourceName(int resource) {
  static constexpr const char* kNames[kResources] = {"cpu", "memory", "thread_pool",
                                                     "connection_pool"};
  return resource >= 0 && resource < kResources ? kNames[resource] : nullptr;
}

}  // namespace weighted
