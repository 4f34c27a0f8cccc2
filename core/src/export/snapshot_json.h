// The engine's state as one JSON document (wt_engine_snapshot_json): per service and endpoint the
// controller's view as of its last cycle (weights, penalties with each rule's verdict, states,
// window statistics) plus live lifetime counters and in-flight counts.
#pragma once

#include <string>

#include "export/snapshot_record.h"
#include "runtime/engine.h"

namespace weighted {

// Rendered from the engine's snapshot record (snapshot_record.h) by the code that renders a
// state file's record in a monitor, so the two texts are the same.
// `scope` selects one service or one endpoint (wt_service_snapshot_json); `*recorded` (may be
// null) gets the number of endpoints the text holds.
std::string SnapshotJson(Engine& engine, const SnapshotScope& scope = {},
                         size_t* recorded = nullptr);

}  // namespace weighted
