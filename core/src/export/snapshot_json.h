// The engine's state as one JSON document (wt_engine_snapshot_json): per service and endpoint the
// controller's view as of its last cycle (weights, penalties with each rule's verdict, states,
// window statistics) plus live lifetime counters and in-flight counts.
#pragma once

#include <string>

#include "runtime/engine.h"

namespace weighted {

std::string SnapshotJson(Engine& engine);

}  // namespace weighted
