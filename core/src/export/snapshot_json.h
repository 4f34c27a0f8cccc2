// The engine's state as one JSON document (wt_engine_snapshot_json): per service and endpoint the
// controller's view as of its last cycle (weights, penalties with each rule's verdict, states,
// window statistics) plus live lifetime counters and in-flight counts.
#pragma once

#include <cstdlib>
#include <memory>
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

// Text in memory from malloc, NUL-terminated after `size` bytes: what the C ABI hands out, as it
// is (wt_free frees it).
struct MallocedText {
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  std::unique_ptr<char, Free> data;
  size_t size = 0;
};

// The same text as SnapshotJson, written straight into the memory the C ABI hands out: no copy
// of it, and no second buffer to fault in (at 100 000 endpoints 147 MB).
MallocedText SnapshotText(Engine& engine, const SnapshotScope& scope = {},
                          size_t* recorded = nullptr);

}  // namespace weighted
