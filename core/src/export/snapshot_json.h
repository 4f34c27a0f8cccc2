// The engine's state as one JSON document (wt_engine_snapshot_json): per service and endpoint the
// controller's view as of its last cycle (weights, penalties with each rule's verdict, states,
// window statistics) plus live lifetime counters and in-flight counts.
#pragma once

#include <string>

#include "export/history_point.h"
#include "runtime/engine.h"

namespace weighted {

std::string SnapshotJson(Engine& engine);

// The snapshot into *snapshot (its capacity reused) and, when `point` is given, the history point
// `header` describes into *point, both from one inspection of each service (so they agree).
void SnapshotJsonInto(Engine& engine, std::string* snapshot, const HistoryPointHeader* header,
                      std::string* point);

}  // namespace weighted
